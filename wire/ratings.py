"""Ratings on the wire: a racer's rating, its change in a race, and the rated board.

Ratings are openskill's Plackett-Luce model (``server.core.ratings``): a skill estimate ``mu`` and
its uncertainty ``sigma``. A new player starts at mu 25, sigma 25/3.

Players are shown ``shown``, mu on a 1500-based scale: 1500 + 40·(mu − 25), whole numbers, with
a provisional mark ("?") while sigma is above 6.5 (about a player's first 6 to 10 rated races).
It follows mu, not the ordinal (mu − 3·sigma): the ordinal rises with every race as sigma
shrinks, so a loss could read as a gain; mu falls for a result worse than expected (a last
place always), and is unchanged by a tie between equals. The ordinal stays on the wire: the
conservative figure the rated board orders by.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

MU = 25.0
"""A new player's mu."""
SHOWN_BASE = 1500
SHOWN_PER_MU = 40
"""Shown points per point of mu: a new player's first race moves them by about 100 to 200."""
PROVISIONAL_SIGMA = 6.5
"""A rating is provisional while its sigma is above this."""


class SkillShown(BaseModel):
    """A rating as players are shown it, computed from ``mu`` and ``sigma``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mu: float = Field(description="The skill estimate.")
    sigma: float = Field(description="Its uncertainty (one standard deviation).")

    @model_validator(mode="before")
    @classmethod
    def _computed_again(cls, data: Any) -> Any:
        """A message read back carries ``shown`` and ``provisional``: they are computed again
        from mu and sigma, not taken."""
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if key not in SHOWN_FIELDS}
        return data

    @computed_field(  # type: ignore[prop-decorator]
        description="The rating as players are shown it: 1500 + 40·(mu − 25), rounded."
    )
    @property
    def shown(self) -> int:
        return round(SHOWN_BASE + SHOWN_PER_MU * (self.mu - MU))

    @computed_field(  # type: ignore[prop-decorator]
        description="True while sigma is above 6.5 (the first races): shown with a '?'."
    )
    @property
    def provisional(self) -> bool:
        return self.sigma > PROVISIONAL_SIGMA

    def __str__(self) -> str:
        """``1540``, or ``1540?`` while provisional."""
        return f"{self.shown}{'?' if self.provisional else ''}"


SHOWN_FIELDS = frozenset(SkillShown.model_computed_fields)


class Rating(SkillShown):
    ordinal: float = Field(
        description="mu − 3·sigma: the conservative figure ordering the rated board."
    )


class RatingChange(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    before: Rating
    after: Rating

    @property
    def gained(self) -> int:
        """The change players are shown: of ``shown``, so a loss never reads as a gain."""
        return self.after.shown - self.before.shown

    def __str__(self) -> str:
        """The rating after and its change, as players are shown it: ``1540? (+40)``."""
        return f"{self.after} ({self.gained:+d})"


class RatingLine(SkillShown):
    rank: int = Field(description="Equal ordinals share a rank (1, 2, 2, 4).")
    player_id: str
    name: str
    ordinal: float
    races: int = Field(description="The rated races the player has finished in this rule set.")
    bot: bool = Field(
        default=False,
        description=(
            "The player is a bot account (Hello.bot): rated before the account became one, "
            "rated no more since."
        ),
    )


class RatingBoard(BaseModel):
    """``GET /api/ratings/<rule_set>``: players by ordinal, highest first."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rule_set: str
    min_races: int = Field(
        description=(
            "The rated races a player needs to be on the board: fewer, and their rating is "
            "provisional and not shown here."
        )
    )
    lines: list[RatingLine]
    me: RatingLine | None = Field(
        default=None,
        description=(
            "With ?around=PLAYER_ID: that player's line, if they are rated in this rule set."
        ),
    )
