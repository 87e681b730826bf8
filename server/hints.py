"""Hints over the protocol: who may have one, and the process pool that searches for it.

A hint runs the solver (``engine.hints``), which takes up to its budget of CPU: never on the
event loop. The ``SolverPool`` hands each search to a small ``ProcessPoolExecutor`` (started
on the first hint, with the ``spawn`` method, so a child holds nothing of the server's sockets,
threads or event loop; what it runs, ``engine.hints``, needs only the engine) and awaits it.
Requests are handled one at a time per connection, so a hint holds up its asker's next request
by up to its budget, nobody else's. It is bounded twice: searches waiting
or running at most ``hint_queue_max`` (past it, ``unavailable``), and each player's hints a
minute (``hints_per_player_per_min``, a token bucket; past it, ``rate_limited``).

After a race the pool also searches its deal from the start (``after_race``, budget
``verdict_budget_s``; at most ``verdict_queue_max`` deals at once, the others are left
unsearched) and stores the verdict (``server.store.save_verdict``) for the race record:
whether the deal was winnable, and the solver's winning line.

``refusal`` is the rule, pure: a hint is for practice alone, never during a race with others,
on a secret deal (ranked) or on the daily deal (ranked); the server refuses with ``no_hints``
and says why. The solver sees the hidden cards, so a hint is given with full knowledge; it is
a move the player can make now, and reveals no card.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import UTC, datetime
from typing import Any

from engine.hints import hint_for_log, solve_deal
from engine.replay import MoveLog
from engine.solver import FULL_KNOWLEDGE
from server import store
from server.errors import Refusal
from server.limits import AddressLimiter
from server.race import Phase, Race
from server.settings import Settings
from server.solver_process import begin
from server.store import Sessions
from server.writer import Writer
from wire.protocol import ErrorCode, HintGiven

log = logging.getLogger("patience_race.hints")

SLACK_S = 10.0
"""How much longer than its budget a search may take to come back (a child starting, a busy
machine) before it is given up as ``unavailable``."""


def refusal(race: Race, player_id: str) -> Refusal | None:
    """Why ``player_id`` may not have a hint in ``race`` now, or None."""
    racer = race.racers.get(player_id)
    if racer is None:
        return Refusal(ErrorCode.NOT_IN_ROOM, "you have no seat in this room's race")
    if race.deal_kind == "daily":
        return Refusal(ErrorCode.NO_HINTS, "no hints on the daily deal: it is ranked")
    if len(race.racers) > 1:
        return Refusal(ErrorCode.NO_HINTS, "no hints in a race with others")
    if race.deal_kind != "number":
        return Refusal(ErrorCode.NO_HINTS, "no hints on a secret deal: it is ranked; "
                       "practise alone on a chosen deal number to have hints")
    if race.phase is not Phase.RACING or racer.game is None or racer.finished:
        return Refusal(ErrorCode.NOT_RACING, "your game is not on")
    return None


class SolverPool:
    """The server's solver processes, and who may use them how often."""

    def __init__(self, settings: Settings, writer: Writer, sessions: Sessions) -> None:
        self.settings, self.writer, self.sessions = settings, writer, sessions
        self._executor: ProcessPoolExecutor | None = None
        self._busy = 0
        self._searches: set[asyncio.Task[None]] = set()
        """Deals being searched after their race."""
        self._closed = False
        self._quota = AddressLimiter(settings.hints_per_player_per_min / 60,
                                     max(1.0, settings.hints_per_player_per_min / 4),
                                     settings.http_rate_clients)

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                self.settings.solver_processes, multiprocessing.get_context("spawn"),
                initializer=begin, initargs=(os.getpid(),))
        return self._executor

    async def run(self, function: Any, *args: Any, within_s: float) -> Any:
        """``function(*args)`` in a solver process; ``unavailable`` when the answer does not
        come within ``within_s`` or the process died."""
        try:
            future = asyncio.get_running_loop().run_in_executor(self._pool(), function, *args)
            return await asyncio.wait_for(future, within_s)
        except TimeoutError:
            raise Refusal(ErrorCode.UNAVAILABLE, "the solver took too long: try again") from None
        except BrokenProcessPool:  # a solver process died (killed, out of memory): start anew
            log.exception("a solver process died")
            self.close()
            raise Refusal(ErrorCode.UNAVAILABLE, "the solver failed: try again") from None

    async def hint(self, race: Race, player_id: str, request_id: str | None,
                   now: float) -> HintGiven:
        """A hint for the player's position now, or the refusal raised."""
        refused = refusal(race, player_id)
        if refused is not None:
            raise refused
        if self._quota.take(player_id, now) > 0:
            raise Refusal(ErrorCode.RATE_LIMITED, "at most "
                          f"{self.settings.hints_per_player_per_min:g} hints a minute")
        if self._busy >= self.settings.hint_queue_max:
            raise Refusal(ErrorCode.UNAVAILABLE, "the solver is busy: try again in a moment")
        game = race.racers[player_id].game
        assert game is not None
        moves = len(game.history)
        seconds = self.settings.hint_budget_s
        self._busy += 1
        try:
            answer = await self.run(hint_for_log, MoveLog.of(game).to_json(), seconds,
                                    within_s=seconds + SLACK_S)
        finally:
            self._busy -= 1
        return HintGiven(id=request_id, after_moves=moves, knowledge=FULL_KNOWLEDGE, **answer)

    def after_race(self, race: Race) -> None:
        """Search the race's deal in the background and store the verdict (not when too many
        deals are waiting already: that race's record then says ``winnable: null``)."""
        if self._closed or self.settings.verdict_budget_s <= 0 or race.winnable:
            return  # (a deal from the winnable pool has its verdict already)
        if len(self._searches) >= self.settings.verdict_queue_max:
            log.warning("race %s: its deal is left unsearched, %d others are waiting",
                        race.race_id, len(self._searches))
            return
        task = asyncio.create_task(self._search(race))
        self._searches.add(task)
        task.add_done_callback(self._searches.discard)

    async def _search(self, race: Race) -> None:
        seconds = self.settings.verdict_budget_s
        try:
            answer = await self.run(solve_deal, race.rule_set, race.seed, race.algorithm,
                                    race.rules, seconds, within_s=seconds + SLACK_S)
        except Refusal as failed:
            log.warning("race %s: its deal was not searched: %s", race.race_id, failed.message)
            return
        now = datetime.now(UTC)
        await self.writer.run(lambda: store.save_verdict(
            self.sessions, race.rule_set, race.seed, race.algorithm, race.rules,
            answer["result"], answer["line"], seconds, now))

    def close(self) -> None:
        """Stop the processes (a search under way is dropped)."""
        self._closed = True
        for task in self._searches:
            task.cancel()
        if self._executor is not None:
            # A search runs to its budget; a stopping server does not wait for it. (Python
            # 3.14 names this ``terminate_workers``; 3.11 keeps the processes here.)
            processes = list(getattr(self._executor, "_processes", {}).values())
            self._executor.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                process.terminate()
            self._executor = None
