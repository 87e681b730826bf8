"""The service of one process: its connections, its rooms, the bus between them, its writer.

Nothing here decides anything; it puts the pieces together and runs their lifecycle:

- ``server.net.connection``: where a connection is handled (the ``Gateway``: frames in, limits,
  ``hello``, refusals as error messages);
- ``server.rooms.host``: where a room lives (the ``RoomHost``: races, members, outboxes, timers);
- ``server.cluster.bus``: what carries room requests from a connection to its room's host and frames
  back (``LocalBus`` in one process, ``server.cluster.redis_bus.RedisBus`` across workers);
- ``server.storage.writer`` and ``server.storage.races.MoveRecorder``: storage, in order, one
  group commit at a time;
- ``server.sweeper``: what nobody closes by themselves, closed on a timer.

Plain HTTP on the same port is ``server.net.http``; starting and stopping, ``server.main``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial

from sqlalchemy.ext.asyncio import AsyncEngine
from websockets.asyncio.server import ServerConnection

from server.cluster.bus import Bus, LocalBus
from server.cluster.rank_cache import RedisRanks
from server.cluster.redis_bus import RedisBus
from server.net.connection import Gateway
from server.rooms.host import RoomHost
from server.rooms.pool import PoolFiller
from server.rooms.room import Client, Room
from server.settings import Settings
from server.storage import holding
from server.storage.engine import make_sessionmaker
from server.storage.moves import MoveRecorder
from server.storage.writer import Writer
from server.sweeper import deadlines, sweep

log = logging.getLogger("patience_race.server")


class Service:
    def __init__(
        self,
        settings: Settings,
        engine: AsyncEngine,
        clock: Callable[[], float] = time.time,
        worker: str | None = None,
        fills_pool: bool = True,
    ) -> None:
        """``worker``: this process's name among the workers (``server.cluster.workers``);
        ``fills_pool``: whether this process fills the winnable pool (``server.rooms.pool``: one
        process does, the only one or worker 0)."""
        self.settings, self.clock = settings, clock
        self.sessions = make_sessionmaker(engine)
        self.move_recorder = MoveRecorder(engine)
        self.writer = Writer(
            self.move_recorder,
            window_s=settings.commit_window_ms / 1000,
            max_batch=settings.commit_batch_max,
        )
        self.host = RoomHost(settings, self.sessions, self.writer, clock)
        self.redis_bus = (
            None
            if settings.redis_url is None
            else RedisBus(
                settings.redis_url,
                settings.redis_prefix,
                self.host,
                self.sessions,
                worker,
                settings.json_library,
            )
        )
        self.bus: Bus = self.redis_bus or LocalBus(self.host)
        self.gateway = Gateway(settings, self.sessions, self.writer, self.bus, clock)
        if self.redis_bus is not None:
            self.redis_bus.connections = self.gateway.clients
        self.rank_cache = (
            None
            if settings.redis_url is None
            else RedisRanks(settings.redis_url, settings.redis_prefix)
        )
        self.host.delivery.rank_cache = self.gateway.rank_cache = self.rank_cache
        if self.rank_cache is not None:  # a result held for fair play leaves the cache too
            self.host.solver.on_held = partial(self.rank_cache.rebuild, self.sessions)
        self._rebuilds_ranks = fills_pool
        self._ranking: asyncio.Task[None] | None = None
        self.closing = False
        self.closed_by: float | None = None
        """When shutting down: the loop time by which everything must be closed."""
        self._sweeper: asyncio.Task[None] | None = None
        self.filler = (
            PoolFiller(settings, self.sessions, self.writer)
            if fills_pool and settings.winnable_pool_target > 0
            else None
        )
        self._filling: asyncio.Task[None] | None = None
        self._warming: asyncio.Task[None] | None = None

    @property
    def rooms(self) -> dict[str, Room]:
        return self.host.rooms

    @property
    def worker_name(self) -> str | None:
        """This process's name on the Redis bus; None when it is the only one."""
        return None if self.redis_bus is None else self.redis_bus.id

    @property
    def clients(self) -> list[Client]:
        return list(self.gateway.clients.values())

    async def handle(self, ws: ServerConnection) -> None:
        await self.gateway.handle(ws)

    # -- lifecycle ------------------------------------------------------------------------------

    def serving_at(self, address: str) -> None:
        """This process's own WebSocket address, for ``reconnect_to``, and where its practice
        bots connect (``server.cluster.practice``)."""
        self.bus.practice.url = address
        if self.redis_bus is not None:
            self.host.address = self.redis_bus.address = address

    async def start(self) -> None:
        """Rebuild the races in progress, or with Redis join the other workers (who rebuild the
        races of workers that are gone), and start sweeping. The solver processes start and
        warm up meanwhile (``SolverPool.start``): the listener does not wait for them."""
        self.writer.start()
        self._warming = asyncio.create_task(self.host.solver.start())
        if self.redis_bus is not None:
            await self.redis_bus.start()
        else:
            # The only server: every race in progress is its own, whatever leases say.
            for row in await holding.take(
                self.sessions, None, self.host.openings.holder, datetime.now(UTC), force=True
            ):
                self.host.adopt(row)
        self._sweeper = asyncio.create_task(self._sweep_forever())
        if self.rank_cache is not None and self._rebuilds_ranks:
            self._ranking = asyncio.create_task(self._rebuild_ranks(self.rank_cache))
        if self.filler is not None:
            self._filling = asyncio.create_task(self.filler.run())

    async def _rebuild_ranks(self, cache: RedisRanks) -> None:
        """Fill the rank cache from the database (one process does, as for the pool); until it
        is done, ranks come from the database."""
        try:
            lines = await cache.rebuild(self.sessions)
            log.info("rank cache rebuilt from the database: %d lines", lines)
        except Exception:  # the database still answers every board
            log.exception("rank cache rebuild failed")

    async def _sweep_forever(self) -> None:
        """Close idle connections and stale lobbies (``server.sweeper``) until shutdown."""
        rules = deadlines(self.settings)
        interval = rules.interval()
        while not self.closing:
            await asyncio.sleep(interval)
            try:
                sweep(self.gateway, self.host, rules, self.clock())
            except Exception:  # a bug here must not stop the sweeping
                log.exception("sweep failed")

    async def shutdown(self) -> None:
        """Store everything queued, tell everyone, close every connection at once: all within
        ``settings.shutdown_s``. From now on no request is acted on.

        Writes the database has not taken by then are given up (none was acknowledged: the
        racers resume without them). A write cut short may hold up the end of the shutdown,
        not the clients, for as long as its driver takes to let go (``Writer.stopped``)."""
        loop = asyncio.get_running_loop()
        self.closing = self.gateway.closing = True
        self.closed_by = loop.time() + self.settings.shutdown_s
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self._filling is not None and self.filler is not None:
            self._filling.cancel()
            self.filler.close()
        self.host.delivery.stop_timers()
        given_up = await self.writer.close(self._time_left())
        if given_up:
            log.warning("stopping with %d database writes not done in time", given_up)
        await self.gateway.close(self.clients, self._time_left())
        await self.writer.stopped()
        await self.move_recorder.close()
        if self._warming is not None:
            self._warming.cancel()
        self.host.solver.close()
        if self._ranking is not None:
            self._ranking.cancel()
        if self.rank_cache is not None:
            await self.rank_cache.close()
        await self.bus.stop()

    def _time_left(self) -> float:
        assert self.closed_by is not None
        return max(0.0, self.closed_by - asyncio.get_running_loop().time())
