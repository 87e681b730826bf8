"""What a search returns: a ``Verdict`` (won, lost or unknown, with the winning line) and the
``Effort`` it took, and the ``Budget`` it was given. Small values with text and JSON forms.

Every verdict is one of a **thoughtful** player: the solver sees the face-down and undealt cards
(as solvers in the literature do), so "won" means a player who knew them could win, an upper
bound for a player who cannot see them; "lost" means nobody can win, whatever they know.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from engine.moves import Move

FULL_KNOWLEDGE = (
    "with full knowledge of face-down and undealt cards: an upper bound for a "
    "player who cannot see them"
)
"""What to print beside every verdict shown to a person."""


class Result(StrEnum):
    WON = "won"
    """A winning line was found (and replayed through the engine)."""
    LOST = "lost"
    """Proved: every position reachable was searched, or shown lost by a bound
    (engine/solver/bounds.py), and none is won."""
    UNKNOWN = "unknown"
    """The budget ran out first."""


@dataclass(frozen=True, slots=True)
class Budget:
    """How long a search may run: at most ``nodes`` positions and ``seconds`` of wall time
    (None: no limit of that kind). ``Budget()`` has no limit at all: only for small positions."""

    seconds: float | None = None
    nodes: int | None = None

    def __post_init__(self) -> None:
        if self.seconds is not None and not self.seconds > 0:
            raise ValueError(f"a budget of {self.seconds!r} seconds: give a positive number")
        if self.nodes is not None and self.nodes < 1:
            raise ValueError(f"a budget of {self.nodes!r} nodes: give at least 1")

    def __str__(self) -> str:
        parts = []
        if self.seconds is not None:
            parts.append(f"{self.seconds:g} s")
        if self.nodes is not None:
            parts.append(f"{self.nodes:,} positions")
        return " or ".join(parts) or "no limit"

    def to_json(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "nodes": self.nodes}


@dataclass(frozen=True, slots=True)
class Effort:
    """What a search did: ``nodes`` moves made, that is positions reached (repeats included;
    not the moves made and taken back at once to order a position's moves), ``positions`` how
    many of those were distinct (with the table of positions seen; the starting position, which
    no move reached, is not counted), ``seconds`` of wall time."""

    nodes: int
    positions: int
    seconds: float

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        return (
            f"{self.nodes:,} positions reached ({self.positions:,} of them distinct) in "
            f"{self.seconds:.2f} s, {self.nodes_per_second:,.0f}/s"
        )

    def to_json(self) -> dict[str, Any]:
        return {"nodes": self.nodes, "positions": self.positions, "seconds": round(self.seconds, 6)}


@dataclass(frozen=True, slots=True)
class Verdict:
    """The answer for one position: ``result``, the winning ``line`` (empty unless won: the
    moves from the position searched, checked through the engine's validated ``play``), and
    the ``effort``."""

    result: Result
    line: tuple[Move, ...]
    effort: Effort
    budget: Budget

    def __post_init__(self) -> None:
        if bool(self.line) and self.result is not Result.WON:
            raise ValueError("only a won verdict has a line")

    @property
    def is_decided(self) -> bool:
        return self.result is not Result.UNKNOWN

    def __str__(self) -> str:
        if self.result is Result.WON:
            moves = len(self.line)
            head = f"won: a win in {moves} move{'s' * (moves != 1)}"
        elif self.result is Result.LOST:
            head = "lost: no win is possible (proved: searched to the end, or by a bound)"
        else:
            head = f"unknown: the budget ({self.budget}) ran out"
        return f"{head}; {self.effort}"

    def to_json(self) -> dict[str, Any]:
        return {
            "result": str(self.result),
            "line": [str(move) for move in self.line],
            "moves": len(self.line),
            "effort": self.effort.to_json(),
            "budget": self.budget.to_json(),
            "knowledge": FULL_KNOWLEDGE,
        }
