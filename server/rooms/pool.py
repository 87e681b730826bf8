"""The pool of secret deals proved winnable, for races that ask for one (issue 12).

Solving a deal takes seconds of CPU, and a race cannot wait for it: so the server keeps, per rule
set, up to ``winnable_pool_target`` deals the solver has proved winnable and no race has used, in
the database (``winnable_deals``; their winning lines in ``deal_verdicts``). One process fills
it: the only server, or worker 0 of ``serve --workers N`` (``Service.start``). The
``PoolFiller`` draws random secret seeds and searches each in a solver process of its own (never
on the event loop; its own process, at the lowest priority, so hints do not wait behind it) within
``winnable_pool_budget_s``, keeping the wins, one rule set after another, until every rule set of
``winnable_pool_rule_sets`` has its target; then it looks again every ``POOL_CHECK_S``.

A room asking for a winnable deal takes the oldest ready one (``take_winnable``; the pool's
queries are in ``server.storage.deals``: the database marks it used, so of two rooms taking at
once only one gets it, and each deal is used once); a room whose race never starts gives it
back as its lobby is closed (``give_back``), and each player may open
``winnable_rooms_per_player_per_hour`` such rooms (``server.rooms.host``). If
none is ready it waits up to ``winnable_pool_wait_s``, looking every ``POLL_S``, and then falls
back to an unproved secret deal: the room says ``winnable: false``. A rule set not in
``winnable_pool_rule_sets`` falls back at once: by default every rule set is pooled where the
compiled core searches Four Corners, and all but Four Corners where the Python search would
(it found a win in 2 deals of 408 at 2 s: docs/winnability.md; filling its pool would keep a
core busy for hours; ``server.settings.pooled_rule_sets``). The daily deal is taken from the
pool too, by default (``daily_draw``), when it is first drawn on its day. A pooled seed is
secret like any other: it is in no message before the race ends, and the race's commitment is
published at its start.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial

from sqlalchemy.ext.asyncio import AsyncSession

from engine.deal import DEAL_ALGORITHM
from engine.game import RULES_VERSION
from engine.hints import solve_deal
from server.core.errors import Refusal
from server.rooms.solver_process import BACKGROUND_NICENESS
from server.rooms.solver_processes import SLACK_S, SolverProcesses
from server.settings import Settings
from server.storage.deals import add_winnable, ready_counts, take_in, take_winnable
from server.storage.engine import Sessions
from server.storage.writer import Writer

log = logging.getLogger("patience_race.pool")

POOL_CHECK_S = 10.0
"""How often a full pool is looked at again."""
POLL_S = 0.5
"""How often a room waiting for a winnable deal looks for one."""


async def winnable_seed(
    settings: Settings,
    sessions: Sessions,
    rule_set: str,
    write: Callable[[Callable[[], Awaitable[int | None]]], Awaitable[int | None]],
) -> int | None:
    """A pooled seed for a new room, waiting up to ``winnable_pool_wait_s`` for one; None:
    fall back to an unproved secret deal. ``write`` does the claim through the writer."""
    if rule_set not in settings.winnable_pool_rule_sets:
        return None
    loop = asyncio.get_running_loop()
    give_up = loop.time() + settings.winnable_pool_wait_s
    while True:
        seed = await write(lambda: take_winnable(sessions, rule_set, datetime.now(UTC)))
        if seed is not None or loop.time() + POLL_S > give_up:
            return seed
        await asyncio.sleep(POLL_S)


def daily_draw(
    settings: Settings, rule_set: str
) -> Callable[[AsyncSession], Awaitable[int | None]] | None:
    """How a day's daily deal is drawn, the first time it is asked for: from the pool (it
    does not wait: none ready, a random deal, and the room says ``winnable: false``), unless
    ``daily_winnable`` is off or the rule set is not pooled (then ``winnable`` is null)."""
    if not settings.daily_winnable or rule_set not in settings.winnable_pool_rule_sets:
        return None
    return lambda session: take_in(session, rule_set, datetime.now(UTC))


class PoolFiller:
    """Keeps the pool topped up, in its own solver process."""

    def __init__(self, settings: Settings, sessions: Sessions, writer: Writer) -> None:
        self.settings, self.sessions, self.writer = settings, sessions, writer
        self.solver = SolverProcesses("the winnable pool", 1, BACKGROUND_NICENESS)
        self.searched = 0
        """Deals searched since the start (for the logs and the tests)."""

    async def run(self) -> None:
        """Start the solver process (``/healthz`` says when it is warm), and fill until
        cancelled."""
        await self.solver.start()
        while True:
            try:
                filled = await self.fill_round()
            except Refusal as failed:  # the solver process failed or was late
                log.warning("filling the winnable pool: %s", failed.message)
                filled = False
            except Exception:  # a database outage, a bug: try again later, never stop
                log.exception("filling the winnable pool failed")
                filled = False
            await asyncio.sleep(0 if filled else POOL_CHECK_S)

    async def fill_round(self) -> bool:
        """Search one random deal of each rule set short of its target; False if none is."""
        counts = await ready_counts(self.sessions)
        short = [
            rule_set
            for rule_set in self.settings.winnable_pool_rule_sets
            if counts.get(rule_set, 0) < self.settings.winnable_pool_target
        ]
        budget = self.settings.winnable_pool_budget_s
        for rule_set in short:
            seed = secrets.randbits(64)
            answer = await self.solver.run(
                solve_deal,
                rule_set,
                seed,
                DEAL_ALGORITHM,
                RULES_VERSION,
                budget,
                within_s=budget + SLACK_S,
            )
            self.searched += 1
            if answer["result"] == "won":
                await self.writer.run(
                    partial(
                        add_winnable,
                        self.sessions,
                        rule_set,
                        seed,
                        answer["line"],
                        budget,
                        datetime.now(UTC),
                    )
                )
        return bool(short)

    def close(self) -> None:
        self.solver.close()
