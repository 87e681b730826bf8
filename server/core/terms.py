"""A race's terms: what it is raced on and under which limits, fixed when it is opened.

The terms also say what of the deal a race's messages may show: the seed of a chosen number
from the start, a secret seed at the end, a daily deal's never (until its day is over, by the
API). A rematch is the same terms with a new race id and deal (``server.core.rematch``); a race
rebuilt after a restart is its stored terms (``server.rooms.room.restore_race``). What the race
does with the time it is given (``server.core.race``) is measured against ``limit`` and
``idle_until``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal

from engine.game import RULES_VERSION, Game
from engine.registry import find_rule_set
from wire.protocol import RaceFinished, RaceStarted, RankEntry

COUNTDOWN_S = 3.0
GRACE_S = 60.0
MAX_RACE_S = 2 * 3600.0
"""The longest a race runs, with or without a time limit: then everyone still racing is finished
as ``timed_out``, as a time limit does (a longer time limit ends here too)."""
IDLE_S = 600.0
"""How long a racer may go without a move (from the start, or from their last move) before the
race finishes them as ``abandoned`` and resigns their game, connected or not."""

DealKind = Literal["secret", "number", "daily"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RaceTerms:
    race_id: str
    code: str
    """The room's code, which a rematch keeps."""
    rule_set: str
    seed: int
    algorithm: int
    deal_kind: DealKind
    seats_max: int
    time_limit_s: int | None
    rules: int = RULES_VERSION
    """The rules version every racer's game is played under (a race restored from before
    version 2 keeps version 1, so its stored moves mean what they meant)."""
    daily_day: date | None = None
    winnable: bool | None = None
    """Whether the deal was proved winnable before the race (``RoomState.winnable``)."""
    public: bool = False
    """Whether the room is listed while its lobby has a free seat (``GET /api/rooms``)."""
    quick: Literal["rated", "unrated"] | None = None
    """A quick race's room (``server.core.matching``): "rated" admits no bot
    (``ErrorCode.BOTS_NOT_RATED``); None for a room opened with ``create_room``."""
    countdown_s: float = COUNTDOWN_S
    grace_s: float = GRACE_S
    """How long a racer whose connection dropped keeps their seat."""
    max_race_s: float = MAX_RACE_S
    idle_s: float = IDLE_S

    @property
    def reveals_seed(self) -> bool:
        """A daily deal's seed stays secret until its day is over (the API reveals it then)."""
        return self.deal_kind != "daily"

    def limit(self, started_at: float) -> float:
        """When a race started at ``started_at`` ends for whoever is still racing: its time
        limit, or its longest."""
        length = (
            self.max_race_s
            if self.time_limit_s is None
            else min(self.time_limit_s, self.max_race_s)
        )
        return started_at + length

    def new_game(self) -> Game:
        """The deal, as each racer gets it: no opening kept (replay is from the seed), no undo."""
        return find_rule_set(self.rule_set)(
            self.seed, self.algorithm, rules=self.rules, keep_opening=False, undo=False
        )

    def race_started(self, seq: int, started_at_ms: int, commitment: str) -> RaceStarted:
        return RaceStarted(
            seq=seq,
            started_at_ms=started_at_ms,
            commitment=commitment,
            deal_number=str(self.seed) if self.deal_kind == "number" else None,
            algorithm=self.algorithm,
            rules=self.rules,
        )

    def race_finished(self, seq: int, ranking: list[RankEntry]) -> RaceFinished:
        return RaceFinished(
            seq=seq,
            race_id=self.race_id,
            seed=str(self.seed) if self.reveals_seed else None,
            algorithm=self.algorithm,
            rules=self.rules,
            ranking=ranking,
        )
