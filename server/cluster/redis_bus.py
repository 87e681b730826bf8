"""Rooms across worker processes and machines: the room directory and the hop, in Redis.

Each worker holds some rooms (a ``RoomHost``) and some connections (a ``Gateway``); the public
port hands connections to workers without looking at them, so a connection's room may be held
by another worker. A room lives in exactly one worker. Redis (``settings.redis_url``) holds the
room directory and each worker's heartbeat (``server.cluster.directory``) and carries, over
pub/sub, the requests of a connection whose room is held by another worker and that room's
frames back (``server.cluster.hops``, ``server.cluster.bus_outbox``), and the quick race's queue
(``server.cluster.redis_quick``).

**A worker may die.** Every worker looks at the others every ``HEARTBEAT_S``. Whoever first
locks a dead worker's reaping claims its rooms in the directory and rebuilds each from the
stored moves, as a restarted server does; what was acknowledged was stored, so nothing
acknowledged is lost. Every worker closes its own connections that were in a dead worker's
room (1012, service restart), so that their clients reconnect and resume as the dead worker's
own clients do.

**Redis may forget.** It keeps nothing on disk: restarted, it knows no worker and no room. So
Redis only says where to look; the database says who holds a race (``server.storage.holding``: a
holder, an epoch and a lease on the race's row, renewed every ``HEARTBEAT_S``, and checked by every
write of the race). A worker takes a room only where the database lets it (nobody holds the
race, or its holder's lease has run out); a room that Redis has forgotten but whose holder
still renews its lease is pointed at that holder again. A worker that finds its heartbeat gone
(Redis restarted, or the worker stalled past ``WORKER_TTL_S``) asks the database which of its
rooms are still its: it writes those into the directory again and lets go of the others. While
Redis cannot be reached, what needs it is refused with ``unavailable`` (try again in a moment),
/healthz says so, and connections in rooms of other workers are closed (1012), to resume once it
is back; rooms whose racers are all on their own worker race on. Once the directory is whole
again (``{prefix}directory``, after the sweep for orphans), a code with no entry is no room,
answered from Redis alone; until then it is looked up in the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from websockets.asyncio.server import broadcast

from server.cluster.bus_outbox import BusOutbox
from server.cluster.directory import HEARTBEAT_S, ORPHAN_SWEEP_S, RoomDirectory
from server.cluster.hops import HopFailed, Hops, RemoteMembers
from server.cluster.listing import REFRESH_S, RedisListing
from server.cluster.quick import Counts
from server.cluster.redis_quick import RedisQueue
from server.core.errors import Refusal
from server.rooms.delivery import MOVED_CLOSE
from server.rooms.host import RoomHost
from server.rooms.room import Client, Elsewhere, RoomRequest
from server.speedups import JsonLibrary, json_dumps, json_loads
from server.storage import holding
from server.storage.engine import Sessions
from server.storage.races import unfinished_race_codes
from wire.protocol import (
    CreateRoom,
    ErrorCode,
    JoinRoom,
    LeaveQueue,
    PlayDaily,
    QuickRace,
    Resume,
    Spectate,
)

log = logging.getLogger("patience_race.bus")

WORKER_TTL_S = 5
"""A worker not heard of for this long is dead, and its rooms are taken over."""
RESUBSCRIBE_S = 0.2
"""How soon a worker subscribes again to its channel once Redis has failed it."""


class RedisBus:
    """This worker on the Redis bus: its heartbeat, its channel read, and its connections'
    requests sent where their rooms are (``server.cluster.bus.Bus``). What it writes goes by
    its ``outbox``, in order; the ``directory`` says which worker holds which room; the
    ``hops`` are its connections' requests for rooms of other workers, and ``remote`` the
    other workers' connections in its rooms."""

    def __init__(
        self,
        url: str,
        prefix: str,
        host: RoomHost,
        sessions: Sessions,
        name: str | None = None,
        json_library: JsonLibrary = "json",
    ) -> None:
        self.id = name or holding.process_name()
        self.prefix, self.host, self.sessions = prefix, host, sessions
        # A command on a pooled connection that Redis dropped (it restarted) is tried again
        # at once on a new one, rather than taken for Redis being away.
        self.redis = redis.from_url(
            url,
            decode_responses=True,
            retry=Retry(ExponentialBackoff(cap=0.2, base=0.02), 2),
            retry_on_error=[RedisConnectionError, RedisTimeoutError],
        )
        self._loads = json_loads(json_library)
        self.address = ""
        """This worker's own WebSocket address (``reconnect_to``), once it serves."""
        self.connections: dict[str, Client] = {}
        """This worker's connections, by id: the gateway's own dictionary."""
        self.outbox = BusOutbox(
            self.redis,
            self._key,
            json_dumps(json_library),
            self._redis_failed,
            lambda: self.down_since is not None,
            self._nobody_listening,
        )
        self.listing = RedisListing(self.redis, self._key, self.outbox.put)
        self.directory = RoomDirectory(
            self.redis, self._key, self.id, host, sessions, self.listing, self.outbox.put
        )
        self.hops = Hops(self.id, self.outbox.publish)
        self.remote = RemoteMembers(host, self.outbox.publish, self.directory.adopted)
        self._tasks: list[asyncio.Task[None]] = []
        self._serving: set[asyncio.Task[None]] = set()
        self._beaten = False
        self._renewing: asyncio.Task[None] | None = None
        self.down_since: float | None = None
        """Since when Redis has not answered (loop time); None while it answers."""
        self.queue = RedisQueue(
            self.redis, self._key, self.id, host, self.outbox.publish, self.request
        )
        self.practice = self.queue.practice
        host.delivery.directory = self.directory
        host.delivery.carrier = self.remote
        host.openings.holder = self.id

    def _key(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        await pubsub.subscribe(self._key("to", self.id))
        await self._beat()
        await self.redis.sadd(self._key("workers"), self.id)
        if not await self.redis.exists(self._key("directory")) and not (
            await unfinished_race_codes(self.sessions)
        ):
            await self.directory.mark_whole()
        self._tasks = [
            asyncio.create_task(self._read_forever(pubsub)),
            asyncio.create_task(self.outbox.send_forever()),
            asyncio.create_task(self._watch_forever()),
            asyncio.create_task(self.queue.run()),
        ]
        log.info("worker %s on the Redis bus (%s)", self.id, self.prefix)

    async def stop(self) -> None:
        """Stop being a worker: the others take over whatever rooms are left at once (its
        heartbeat and its leases are given up)."""
        for task in [*self._tasks, *([self._renewing] if self._renewing else [])]:
            task.cancel()
        await self.queue.stop()
        with contextlib.suppress(Exception):
            await holding.release(self.sessions, self.id)
        with contextlib.suppress(Exception):
            await self.outbox.flush()
            await self.redis.delete(self._key("worker", self.id))
        await self.redis.aclose()

    async def _beat(self) -> None:
        """Say this worker is alive. Had its heartbeat expired meanwhile (Redis restarted, or
        the worker stalled for longer than ``WORKER_TTL_S`` and the others may have taken its
        rooms), it asks the database which of its rooms are still its, and writes its players
        waiting for a quick race into the queue again."""
        was = await self.redis.set(
            self._key("worker", self.id), self.address, ex=WORKER_TTL_S, get=True
        )
        if was is None:
            await self.redis.sadd(self._key("workers"), self.id)
            if self._beaten:
                await self.directory.hold_again()
                await self.queue.hold_again()
        self._beaten = True

    # -- requests (``server.cluster.bus.Bus``)
    # ------------------------------------------------------------

    async def request(self, client: Client, message: RoomRequest) -> None:
        try:
            worker = await self._worker_for(client, message)
            if worker == self.id:
                await self.host.handle(client, message)
                return
            if self.down_since is not None:
                raise Refusal(
                    ErrorCode.UNAVAILABLE,
                    "the room is held by another worker, "
                    "which cannot be reached now: try again in a moment",
                )
            await self.hops.hop(client, worker, message)
        except HopFailed:
            self._moved(client)
        except RedisError as error:
            self._redis_failed(error)
            raise Refusal(
                ErrorCode.UNAVAILABLE,
                "the servers' directory (Redis) cannot be reached: try again in a moment",
            ) from None

    def left(self, client: Client) -> None:
        self.queue.drop(client)
        room = client.room
        if isinstance(room, Elsewhere):
            self.hops.left(client, room.worker)
        else:
            self.host.disconnect(client)

    async def seek(self, client: Client, message: QuickRace) -> None:
        try:
            await self.queue.seek(client, message)
        except RedisError as error:
            raise self._queue_unavailable(error) from None

    async def leave_queue(self, client: Client, message: LeaveQueue) -> None:
        try:
            await self.queue.leave(client, message)
        except RedisError as error:
            raise self._queue_unavailable(error) from None

    def _queue_unavailable(self, error: RedisError) -> Refusal:
        """The quick race queue is in Redis: while it cannot be reached, nothing is queued."""
        self._redis_failed(error)
        return Refusal(
            ErrorCode.UNAVAILABLE,
            "the quick race queue (Redis) cannot be reached: try again in a moment",
        )

    def seeking(self, client: Client) -> bool:
        return self.queue.seeking(client)

    async def waiting(self) -> Counts:
        return await self.queue.counts()

    async def _worker_for(self, client: Client, message: RoomRequest) -> str:
        """Which worker acts on the request: the one holding its room, or this one."""
        room = client.room
        if isinstance(message, (CreateRoom, PlayDaily)):
            if isinstance(room, Elsewhere):
                raise Refusal(ErrorCode.IN_ANOTHER_ROOM, "leave your room first")
            return self.id
        if isinstance(message, (JoinRoom, Spectate, Resume)):
            code = message.code.upper()
            if isinstance(room, Elsewhere):
                if room.code != code:
                    raise Refusal(ErrorCode.IN_ANOTHER_ROOM, "leave your room first")
                return room.worker
            if room is not None:
                return self.id  # the host refuses, or answers for its own room
            # (none: the host says unknown_room)
            return await self.directory.holder(code) or self.id
        return room.worker if isinstance(room, Elsewhere) else self.id

    def _moved(self, client: Client) -> None:
        """Close a connection whose room's worker is gone: its client reconnects and resumes,
        and the room is rebuilt where that lands."""
        client.room = None
        task = asyncio.create_task(client.ws.close(*MOVED_CLOSE))
        self._serving.add(task)
        task.add_done_callback(self._serving.discard)

    # -- reading the channel --------------------------------------------------------------------

    async def _read_forever(self, pubsub: Any) -> None:
        """Read this worker's channel; subscribe again whenever Redis went away (what was
        published meanwhile is lost: the requests it carried time out, and the connections
        that missed frames were closed to resume, by ``_redis_failed``)."""
        while True:
            try:
                await self._read(pubsub)
            except RedisError as error:
                self._redis_failed(error)
            with contextlib.suppress(Exception):
                await pubsub.aclose()
            await asyncio.sleep(RESUBSCRIBE_S)
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            with contextlib.suppress(RedisError):
                await pubsub.subscribe(self._key("to", self.id))

    async def _read(self, pubsub: Any) -> None:
        async for message in pubsub.listen():
            try:
                for data in self._loads(message["data"]):  # (``BusOutbox.write`` sends lists)
                    self._receive(data)
            except Exception:
                log.exception("a bus message could not be handled")

    def _redis_failed(self, error: Exception) -> None:
        """Redis does not answer: say so (/healthz), and close this worker's connections in
        rooms of other workers, which cannot be reached until it is back (their clients
        resume then, with whatever they missed)."""
        if self.down_since is not None:
            return
        self.down_since = asyncio.get_running_loop().time()
        log.warning("Redis cannot be reached (%s): rooms of other workers are out of reach", error)
        for client in list(self.connections.values()):
            if isinstance(client.room, Elsewhere):
                self._moved(client)

    def _nobody_listening(self, worker: str) -> None:
        """Nobody reads that worker's channel (it is dead or stopped, or subscribing again
        after Redis came back): the requests hopped to it will not be answered."""
        self.hops.fail_to(worker)

    def _redis_answers(self) -> None:
        if self.down_since is not None:
            log.warning("Redis answers again")
            self.down_since = None

    def _receive(self, data: dict[str, Any]) -> None:
        kind = data["k"]
        if kind == "frames":
            broadcast(
                [
                    client.ws
                    for client in map(self.connections.get, data["conns"])
                    if client is not None
                ],
                data["frame"],
            )
        elif kind == "done":
            self.hops.done(data)
        elif kind == "req":
            task = asyncio.create_task(self.remote.serve(data))
            self._serving.add(task)
            task.add_done_callback(self._serving.discard)
        elif kind == "gone":
            self.remote.gone(data)
        elif kind == "out":
            client = self.connections.get(data["conn"])
            if client is not None:
                client.room = None
        elif kind == "moved":
            client = self.connections.get(data["conn"])
            if client is not None:
                self._moved(client)
        elif kind == "matched":
            self.queue.matched(data, self.connections)

    # -- watching the other workers ---------------------------------------------------------------

    async def _watch_forever(self) -> None:
        loop = asyncio.get_running_loop()
        next_orphan_sweep = loop.time() + ORPHAN_SWEEP_S
        next_refresh = loop.time() + REFRESH_S
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            if self._renewing is None or self._renewing.done():
                self._renewing = asyncio.create_task(self._renew_leases())
            try:
                await self._beat()
                self._redis_answers()
                await self._watch()
                if loop.time() >= next_refresh:
                    next_refresh = loop.time() + REFRESH_S
                    self.listing.refresh()
                if loop.time() >= next_orphan_sweep:
                    next_orphan_sweep = loop.time() + ORPHAN_SWEEP_S
                    await self.directory.sweep_orphans()
            except RedisError as error:
                self._redis_failed(error)
            except Exception:
                log.exception("watching the other workers failed")

    async def _renew_leases(self) -> None:
        """Renew this worker's leases on its races in the database (``server.storage.holding``), as
        it beats in Redis: its leases run out before its heartbeat does. Beside the heartbeat,
        not before it: a slow database must not make a live worker look dead."""
        held = [(room, room.race) for room in self.host.rooms.values()]
        if not held:
            return
        try:
            renewed = await self.host.writer.call(
                lambda: holding.renew(self.sessions, self.id, datetime.now(UTC)), HEARTBEAT_S
            )
        except Exception as error:  # noqa: BLE001 - the writer reports database failures
            log.debug("leases not renewed: %s", error)
            return
        for room, race in held:  # taken by another worker (this one stalled, or Redis forgot)
            if race.terms.race_id not in renewed and race.ended_at is None and room.race is race:
                self.listing.written.pop(room.race.terms.code, None)
                self.host.delivery.let_go(room)

    async def _watch(self) -> None:
        # Also the workers this one's connections are in rooms of, or have requests hopped to:
        # a dead one may have been reaped already (on a request, or by another worker) and be
        # gone from ``workers``.
        held_elsewhere = {
            client.room.worker
            for client in self.connections.values()
            if isinstance(client.room, Elsewhere)
        }
        workers = (
            {str(worker) for worker in await self.redis.smembers(self._key("workers"))}
            | held_elsewhere
            | self.hops.workers()
        )
        for worker in workers - {self.id}:
            if await self.redis.exists(self._key("worker", worker)):
                continue
            for client in list(self.connections.values()):
                if isinstance(client.room, Elsewhere) and client.room.worker == worker:
                    self._moved(client)
            self.hops.fail_to(worker)
            await self.directory.reap(worker)
