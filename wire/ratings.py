"""Ratings on the wire: a racer's rating, its change in a race, and the rated board.

Ratings are openskill's Plackett-Luce model (``server.core.ratings``): a skill estimate ``mu`` and
its uncertainty ``sigma``; ``ordinal`` = mu − 3·sigma is the conservative figure the board
orders by and players are shown (one decimal). A new player starts at mu 25, sigma 25/3
(ordinal 0).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Rating(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mu: float = Field(description="The skill estimate.")
    sigma: float = Field(description="Its uncertainty (one standard deviation).")
    ordinal: float = Field(
        description=(
            "mu − 3·sigma: the conservative figure shown to players and ordering the rated board."
        )
    )

    def __str__(self) -> str:
        return f"{self.ordinal:.1f}"


class RatingChange(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    before: Rating
    after: Rating

    def __str__(self) -> str:
        """The rating after and its change, as players are shown it: ``18.4 (+2.1)``."""
        return f"{self.after} ({self.after.ordinal - self.before.ordinal:+.1f})"


class RatingLine(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    rank: int = Field(description="Equal ordinals share a rank (1, 2, 2, 4).")
    player_id: str
    name: str
    mu: float
    sigma: float
    ordinal: float
    races: int = Field(description="The rated races the player has finished in this rule set.")


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
