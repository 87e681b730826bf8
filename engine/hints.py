"""Hints for a player alone: the next move of a winning line from where they are (issue 12).

A hint asks the solver (``engine.solver``, through its public API) about the player's current
position within a small budget and gives the first move of the winning line it found, or says
that no win is possible from here any more (proved), or that it does not know (the budget ran
out). The solver sees the face-down and undealt cards, so a hint is given **with full
knowledge**: a move a player who could see them would make (``FULL_KNOWLEDGE``). It reveals no
card: the move is one the player can legally make now, and the player sees its cards already.
What it does give away is that this move keeps a win possible: in Hidden Cards, which of the
face-down reserve cards to take.

Pure, like the rest of the engine: the CLI calls ``hint`` in its own process; the server calls
it in a process of its pool (``server.rooms.solver``), never on its event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.game import Game
from engine.moves import Move
from engine.registry import RULE_SET_NAMES, find_rule_set
from engine.replay import MoveLog, replay_trusted
from engine.solver import FULL_KNOWLEDGE, Budget, Result, Verdict, solve
from engine.solver.compiled import RULE_SETS as COMPILED_RULE_SETS

HINT_BUDGET = Budget(seconds=1.5)
"""A hint's search where the Python search answers (engine/solver/search.py): short enough to
wait for at the table, long enough for it to decide Hidden Cards and All Fours and some of the
heap games' positions."""
FAST_HINT_BUDGET = Budget(seconds=0.1)
"""A hint's search where the compiled core answers (engine/solver/compiled.py): it answers
within 200 ms, the search's set-up, the replay of its line and the hop to a server's solver
process included, even on a busy machine (there these took 40-60 ms beyond the budget). Longer
decides little more: of 30 Cornerstones positions reached by random play the core decided 3 at
0.08 s, 3 at 0.15 s, 4 at 0.3 s and at 1 s (measured on 2026-11-27)."""
WARM_UP_BUDGET = Budget(nodes=50)
"""``warm_up``'s search of each rule set: a few milliseconds."""


@dataclass(frozen=True, slots=True)
class Hint:
    """The answer to "what now?": ``verdict`` is the solver's from the position asked about;
    ``move`` the first move of its winning line (None unless won and the game is still on)."""

    verdict: Verdict

    @property
    def result(self) -> Result:
        return self.verdict.result

    @property
    def move(self) -> Move | None:
        return self.verdict.line[0] if self.verdict.line else None

    @property
    def moves_to_win(self) -> int | None:
        """The winning line's length from here (0: the game is already won)."""
        return len(self.verdict.line) if self.result is Result.WON else None

    def message(self) -> str:
        """A sentence for the player; ``FULL_KNOWLEDGE`` goes beside it."""
        if self.result is Result.WON:
            if self.move is None:
                return "the game is won"
            count = len(self.verdict.line)
            return f"{self.move} (a win is possible in {count} move{'s' * (count != 1)})"
        if self.result is Result.LOST:
            return "no win is possible from here any more"
        return f"unknown: no winning line found within {self.verdict.budget}"

    def __str__(self) -> str:
        return f"hint: {self.message()}; {FULL_KNOWLEDGE}"


def hint_budget(rule_set: str) -> Budget:
    """A hint's search for the rule set: ``FAST_HINT_BUDGET`` where the compiled core searches
    it, else ``HINT_BUDGET``."""
    return FAST_HINT_BUDGET if rule_set in COMPILED_RULE_SETS else HINT_BUDGET


def hint(game: Game, budget: Budget | None = None) -> Hint:
    """A hint for ``game``'s position (the game is left as it is), searched within ``budget``
    (by default ``hint_budget`` of its rule set)."""
    return Hint(solve(game, hint_budget(game.name) if budget is None else budget))


def hint_for_log(log: dict[str, Any], seconds: float | None) -> dict[str, Any]:
    """A hint for the position a move log (``MoveLog.to_json``) reaches, as JSON: what a
    server's solver process is given and returns (plain data, so it crosses the process
    boundary cheaply, and the child needs only the engine). ``seconds`` None: the rule set's
    ``hint_budget``."""
    given = hint(
        replay_trusted(MoveLog.from_json(log)), None if seconds is None else Budget(seconds=seconds)
    )
    return {
        "result": str(given.result),
        "move": None if given.move is None else str(given.move),
        "moves_to_win": given.moves_to_win,
        "message": given.message(),
    }


LIVE_WORDS = {
    Result.WON: "still winnable",
    Result.LOST: "no win is possible from here any more",
    Result.UNKNOWN: "unknown",
}
"""The live verdict on a player's position after each move, in solo play, as KPat shows it:
these words and nothing else (no move, no card), with full knowledge like every verdict."""


@dataclass(slots=True)
class Foresight:
    """What the searches of earlier positions of one game say of later ones, without a search
    (a live verdict after each move needs one only where these say nothing):

    - a position proved lost makes every later position of the game lost: each is reachable
      from it, so the proof searched it (or a bound covered it) and found no win;
    - a winning line found from a position makes each position along it won, as long as the
      player's moves are the line's (the line was replayed through the engine from there).

    Positions are named by the game's moves so far, as texts (``str(move)``)."""

    lost: tuple[str, ...] | None = None
    """The moves to the earliest position proved lost."""
    line_from: tuple[str, ...] = ()
    line: tuple[str, ...] = ()
    """A winning line from the position after the moves ``line_from``."""

    def learn(self, moves: Sequence[str], result: Result, line: Sequence[str] = ()) -> None:
        """A search's verdict on the position after ``moves`` (with its winning line)."""
        if result is Result.LOST and (self.lost is None or len(moves) < len(self.lost)):
            self.lost = tuple(moves)
        elif result is Result.WON:
            self.line_from, self.line = tuple(moves), tuple(line)

    def known(self, moves: Sequence[str]) -> Result | None:
        """The verdict on the position after ``moves``, where earlier searches settle it."""
        if self.lost is not None and tuple(moves[: len(self.lost)]) == self.lost:
            return Result.LOST
        start, followed = len(self.line_from), len(moves) - len(self.line_from)
        if (
            self.line
            and 0 <= followed <= len(self.line)
            and tuple(moves[:start]) == self.line_from
            and tuple(moves[start:]) == self.line[:followed]
        ):
            return Result.WON
        return None


def verdict_for_log(log: dict[str, Any], seconds: float | None) -> dict[str, Any]:
    """The solver's verdict on the position a move log reaches, within ``seconds`` (None: the
    rule set's ``hint_budget``), as JSON: ``result`` and the winning ``line`` (move texts).
    What a server's solver process searches for a live verdict: the server keeps the line to
    itself (``Foresight``) and tells the player only ``LIVE_WORDS``."""
    game = replay_trusted(MoveLog.from_json(log))
    verdict = solve(game, hint_budget(game.name) if seconds is None else Budget(seconds=seconds))
    return {"result": str(verdict.result), "line": [str(move) for move in verdict.line]}


def solve_deal(
    rule_set: str, seed: int, algorithm: int, rules: int, seconds: float
) -> dict[str, Any]:
    """The solver's verdict on a deal from its start, as JSON: ``result`` and the winning
    ``line`` (move texts). What a server's solver process searches after a race."""
    game = find_rule_set(rule_set)(seed, algorithm, rules=rules)
    verdict = solve(game, Budget(seconds=seconds))
    return {"result": str(verdict.result), "line": [str(move) for move in verdict.line]}


def warm_up() -> None:
    """A trivial search of each rule set's deal 0: what a fresh solver process runs before its
    first real search, so that search pays neither for the imports nor for the first run."""
    for name in RULE_SET_NAMES:
        solve(find_rule_set(name)(0), WARM_UP_BUDGET)
