"""The live verdict in solo play at the terminal (``patience-race play``), as KPat shows it:
after each move, the solver's word on the position, "still winnable", "no win is possible from
here any more" or "unknown" (``engine.hints.LIVE_WORDS``), with full knowledge of the hidden
cards like every verdict.

The search runs in a thread of its own, so the player never waits for it: the game goes on
while it searches, and its word is said once it has one. Only the newest position counts: a
move made while a search runs supersedes it (the search is stopped at its next report of
progress, and its answer is not said, though what it proved is kept), and positions passed
meanwhile are never searched. Where earlier searches settle a position (``Foresight``: after a
proved loss, every position is lost; along a winning line found, every position is won) the
word comes at once, without a search. The compiled core searches without the GIL, so the
thread takes nothing from the player's; the Python search shares it, in slices.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from engine.game import Game
from engine.hints import Foresight, hint_budget
from engine.solver import Budget, Effort, Result, Verdict, solve


class Search(Protocol):
    """``engine.solver.solve``, or a stand-in (tests)."""

    def __call__(
        self, game: Game, budget: Budget, *, progress: Callable[[Effort], None] | None = None
    ) -> Verdict: ...


class Superseded(Exception):
    """A newer position was asked about while a search ran: it is stopped."""


class LiveVerdict:
    """The verdicts on one game's positions, each said by ``say(moves, result)`` (from the
    search's thread, or at once from the caller's) for the position after ``moves`` moves,
    the newest asked about only. ``budget``: each search's (default: the rule set's hint
    budget, ``engine.hints.hint_budget``)."""

    def __init__(
        self,
        say: Callable[[int, Result], None],
        budget: Budget | None = None,
        search: Search = solve,
    ) -> None:
        self.say, self.budget, self.search = say, budget, search
        self.foresight = Foresight()
        self.latest: tuple[int, Result] | None = None
        """The last verdict said: after how many moves, and what."""
        self._changed = threading.Condition()
        self._asked = -1
        """How many moves the newest position asked about follows."""
        self._wanted: tuple[list[str], Game] | None = None
        """That position, waiting for the thread (its moves as texts, and a copy of the game)."""
        self._searching = False
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="live-verdict", daemon=True)
        self._thread.start()

    def position(self, game: Game) -> None:
        """The game's position now, to say a verdict on: at once if earlier searches settle
        it, else once it is searched, in the thread. The game is copied: play on with it."""
        moves = [str(move) for move in game.history]
        with self._changed:
            self._asked = len(moves)
            known = self.foresight.known(moves)
            self._wanted = None if known is not None else (moves, game.copy())
            self._changed.notify_all()
        if known is not None:
            self._tell(len(moves), known)

    def wait(self, timeout: float) -> bool:
        """Wait until the newest position asked about has its verdict said (True), or
        ``timeout`` seconds (False)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._settled() or self._closed, timeout)

    def _settled(self) -> bool:
        return (
            self._wanted is None
            and not self._searching
            and self.latest is not None
            and self.latest[0] == self._asked
        )

    def close(self) -> None:
        """Search no more (a search under way ends by its budget, unheard)."""
        with self._changed:
            self._closed, self._wanted = True, None
            self._changed.notify_all()

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._wanted is not None or self._closed)
                if self._closed or self._wanted is None:
                    return
                (moves, game), self._wanted = self._wanted, None
                self._searching = True
            try:
                verdict = self.search(
                    game,
                    hint_budget(game.name) if self.budget is None else self.budget,
                    progress=self._superseded(len(moves)),
                )
            except Superseded:
                self._searched(None)
                continue
            self._searched((moves, verdict.result, [str(move) for move in verdict.line]))

    def _superseded(self, made: int) -> Callable[[Effort], None]:
        def check(_: Effort) -> None:
            if self._asked != made or self._closed:
                raise Superseded

        return check

    def _searched(self, found: tuple[list[str], Result, list[str]] | None) -> None:
        """A search has ended (``found``: its position, verdict and line, None if stopped):
        learn from it, and say the newest position's verdict if it settles it."""
        told: tuple[int, Result] | None = None
        with self._changed:
            self._searching = False
            if found is not None:
                moves, result, line = found
                self.foresight.learn(moves, result, line)
                if len(moves) == self._asked:
                    told = len(moves), result
            if self._wanted is not None:  # a newer position: settled by what was learnt?
                newer = self._wanted[0]
                known = self.foresight.known(newer)
                if known is not None:
                    self._wanted, told = None, (len(newer), known)
            self._changed.notify_all()
        if told is not None:
            self._tell(*told)

    def _tell(self, moves: int, result: Result) -> None:
        """Say the verdict, if its position is still the newest (then ``wait`` returns)."""
        with self._changed:
            if self._closed or moves != self._asked:
                return
        self.say(moves, result)
        with self._changed:
            self.latest = moves, result
            self._changed.notify_all()
