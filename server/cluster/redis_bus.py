"""Rooms across worker processes and machines: the room directory and the hop, in Redis.

Each worker holds some rooms (a ``RoomHost``) and some connections (a ``Gateway``); the public
port hands connections to workers without looking at them, so a connection's room may be held
by another worker. A room lives in exactly one worker. Redis (``settings.redis_url``) holds:

- ``{prefix}worker:{id}``: the worker is alive while this key is; it sets it every
  ``HEARTBEAT_S`` and it expires after ``WORKER_TTL_S``. Its value is the worker's own address,
  given to clients as ``reconnect_to``.
- ``{prefix}workers``: the workers that have run and not been reaped.
- ``{prefix}room:{code}``: the worker that holds the room (the directory), and
  ``{prefix}rooms:{id}``: the rooms a worker holds, for whoever takes them over.
- ``{prefix}public`` and ``{prefix}public:{code}``: the public rooms open for racers, each kept
  by its room's worker (``server.cluster.listing``).
- ``{prefix}directory``: set once the directory is whole, that is holds every stored room not
  ended (a worker found none stored at its start, or the sweep for orphans below has run). A
  Redis restart takes it away with the entries it vouched for. While it is set, a code with no
  entry is no room, answered from Redis in one round trip (guessed codes cost 2-3 ms of CPU,
  two database transactions and five Redis commands each when every one was looked up).
- the channel ``{prefix}to:{id}``: what goes to a worker, in order from each sender: requests
  of other workers' connections for its rooms (``req``), the end of each such request
  (``done``), frames for its connections (``frames``), a connection closed (``gone``) and
  connections whose room has closed (``out``). Each published message is a JSON list of them:
  whatever a worker queued for one other while its last pipeline was under way.

A request for a room held elsewhere is published to the room's worker, which acts on it for a
``RemoteMember`` standing for the connection and publishes the frames and then ``done``: a hop
there and back per request, on top of the one-process path.

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
import functools
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from websockets.asyncio.server import broadcast

from server.cluster.listing import REFRESH_S, RedisListing
from server.core.errors import Refusal, Refused
from server.rooms.delivery import MOVED_CLOSE
from server.rooms.host import RoomHost
from server.rooms.room import (
    ROOM_REQUESTS,
    Client,
    Elsewhere,
    RemoteMember,
    Room,
    RoomRequest,
    write_for_client,
)
from server.speedups import JsonLibrary, json_dumps, json_loads
from server.storage import holding
from server.storage.engine import Sessions
from server.storage.races import unfinished_race_codes
from wire.protocol import (
    CLIENT_MESSAGE,
    CreateRoom,
    ErrorCode,
    JoinRoom,
    PlayDaily,
    Resume,
    Spectate,
)

log = logging.getLogger("patience_race.bus")

HEARTBEAT_S = 1.0
WORKER_TTL_S = 5
"""A worker not heard of for this long is dead, and its rooms are taken over."""
ROOM_TTL_S = 24 * 3600
"""How long a directory entry outlives a cluster that stopped without releasing it."""
REAP_LOCK_S = 30
HOP_TIMEOUT_S = 10.0
"""A request to another worker not answered by then: that worker is taken for dead."""
RESUBSCRIBE_S = 0.2
"""How soon a worker subscribes again to its channel once Redis has failed it."""
ORPHAN_SWEEP_S = 30.0
"""How often one worker looks for stored races in progress that no worker holds."""
TAKE_OVER = """
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
  return 1
end
return 0
"""
"""Claim a room for ARGV[2] if it is free or held by ARGV[1] (a dead worker)."""


class HopFailed(Exception):
    """The worker holding the room did not answer: the connection is closed (1012)."""


class RedisBus:
    def __init__(self, url: str, prefix: str, host: RoomHost, sessions: Sessions,
                 name: str | None = None, json_library: JsonLibrary = "json") -> None:
        self.id = name or holding.process_name()
        self.prefix, self.host, self.sessions = prefix, host, sessions
        # A command on a pooled connection that Redis dropped (it restarted) is tried again
        # at once on a new one, rather than taken for Redis being away.
        self.redis = redis.from_url(
            url, decode_responses=True, retry=Retry(ExponentialBackoff(cap=0.2, base=0.02), 2),
            retry_on_error=[RedisConnectionError, RedisTimeoutError])
        self._loads, self._dumps = json_loads(json_library), json_dumps(json_library)
        self.address = ""
        """This worker's own WebSocket address (``reconnect_to``), once it serves."""
        self.connections: dict[str, Client] = {}
        """This worker's connections, by id: the gateway's own dictionary."""
        self._members: dict[tuple[str, str], RemoteMember] = {}
        self._waiting: dict[str, asyncio.Future[tuple[str | None, list[str] | None]]] = {}
        """Requests hopped to another worker, by connection id, until that worker is done."""
        self._hopping_to: dict[str, str] = {}
        """The worker each of those went to: if it dies, the request fails at once (a ``join``
        in flight included, whose connection is in no room yet), not at ``HOP_TIMEOUT_S``."""
        self._outgoing: asyncio.Queue[tuple[str, str] | Callable[[Any], None]] = (
            asyncio.Queue())
        """Messages to publish (channel, payload), and other writes (given the pipeline)."""
        self._tasks: list[asyncio.Task[None]] = []
        self._serving: set[asyncio.Task[None]] = set()
        self._beaten = False
        self._adopting: dict[str, asyncio.Future[None]] = {}
        """Rooms claimed and being rebuilt: requests for them wait until they are."""
        self._take_over = self.redis.register_script(TAKE_OVER)
        self.listing = RedisListing(self.redis, self._key, self._outgoing.put_nowait)
        self._renewing: asyncio.Task[None] | None = None
        self.down_since: float | None = None
        """Since when Redis has not answered (loop time); None while it answers."""
        host.delivery.directory = self
        host.delivery.carrier = self
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
                await unfinished_race_codes(self.sessions)):
            await self._directory_whole()
        self._tasks = [asyncio.create_task(self._read_forever(pubsub)),
                       asyncio.create_task(self._send_forever()),
                       asyncio.create_task(self._watch_forever())]
        log.info("worker %s on the Redis bus (%s)", self.id, self.prefix)

    async def stop(self) -> None:
        """Stop being a worker: the others take over whatever rooms are left at once (its
        heartbeat and its leases are given up)."""
        for task in [*self._tasks, *([self._renewing] if self._renewing else [])]:
            task.cancel()
        with contextlib.suppress(Exception):
            await holding.release(self.sessions, self.id)
        with contextlib.suppress(Exception):
            await self._flush()
            await self.redis.delete(self._key("worker", self.id))
        await self.redis.aclose()

    async def _get(self, *key: str) -> str | None:
        value = await self.redis.get(self._key(*key))
        return None if value is None else str(value)

    async def _members_of(self, *key: str) -> set[str]:
        return {str(member) for member in await self.redis.smembers(self._key(*key))}

    async def _beat(self) -> None:
        """Say this worker is alive. Had its heartbeat expired meanwhile (Redis restarted, or
        the worker stalled for longer than ``WORKER_TTL_S`` and the others may have taken its
        rooms), it asks the database which of its rooms are still its."""
        was = await self.redis.set(self._key("worker", self.id), self.address, ex=WORKER_TTL_S,
                                   get=True)
        if was is None:
            await self.redis.sadd(self._key("workers"), self.id)
            if self._beaten:
                await self._hold_again()
        self._beaten = True

    async def _hold_again(self) -> None:
        """Write this worker's rooms into the directory again, those the database says it
        still holds (their epochs are its own), and let go of the others."""
        rooms = list(self.host.rooms.values())
        if not rooms:
            return
        now = await holding.epochs(self.sessions, [room.race.race_id for room in rooms])
        kept = [room for room in rooms if now.get(room.race.race_id) == room.epoch]
        for room in rooms:
            if room not in kept:
                self.listing.written.pop(room.race.code, None)  # (the new holder's to write)
                self.host.delivery.let_go(room)
        async with self.redis.pipeline(transaction=False) as pipe:
            for room in kept:
                pipe.set(self._key("room", room.race.code), self.id, ex=ROOM_TTL_S)
                pipe.sadd(self._key("rooms", self.id), room.race.code)
            await pipe.execute()
        self.listing.refresh()
        log.warning("directory written again: %d rooms still held here, %d let go", len(kept),
                    len(rooms) - len(kept))

    # -- the directory (``server.rooms.host.Directory``)
    # ------------------------------------------------

    async def claim(self, code: str) -> bool:
        claimed = await self.redis.set(self._key("room", code), self.id, nx=True, ex=ROOM_TTL_S)
        if claimed:
            await self.redis.sadd(self._key("rooms", self.id), code)
        return bool(claimed)

    def release(self, code: str) -> None:
        self.listing.forget(code)
        self._outgoing.put_nowait(lambda pipe: self._release(pipe, code))

    def _release(self, pipe: Any, code: str) -> None:
        pipe.delete(self._key("room", code))
        pipe.srem(self._key("rooms", self.id), code)

    def listed(self, room: Room) -> None:
        self.listing.changed(room)

    async def holder(self, code: str) -> str | None:
        """The live worker that holds the room, taking it over (or rebuilding it from the
        database) if its worker is dead or it has none; None if there is no such room: at
        once when the directory is whole and has no entry for it."""
        if code in self.host.rooms:
            return self.id
        entry, whole = await self.redis.mget(self._key("room", code), self._key("directory"))
        if entry is None and whole is not None:
            return None
        holder = None if entry is None else str(entry)
        if holder is not None and holder != self.id:
            if await self.redis.exists(self._key("worker", holder)):
                return holder
            await self._reap(holder)
            return self.id if code in self.host.rooms else await self._adopt_codes([code], holder)
        return await self._adopt_codes([code], holder)

    async def _adopt_codes(self, codes: list[str], dead: str | None) -> str | None:
        """Claim these rooms from a dead worker (or from nobody) and rebuild them from the
        stored races in progress; the worker that holds the first now, None if it is no
        room."""
        if codes[0] in self._adopting:
            await self._adopting[codes[0]]
            return self.id if codes[0] in self.host.rooms else None
        # Marked before the first claim is awaited: a request for one of them meanwhile (whose
        # directory entry may already name this worker) waits for this adoption instead of
        # claiming and taking the race a second time, which would leave the room behind the
        # epoch the database has.
        adopting = [code for code in codes if code not in self._adopting]
        adopted = asyncio.get_running_loop().create_future()
        self._adopting.update(dict.fromkeys(adopting, adopted))
        found: set[str] = set()
        held_elsewhere: dict[str, str] = {}
        try:
            claimed = [code for code in adopting if await self._take_over(
                keys=[self._key("room", code)], args=[dead or "", self.id, ROOM_TTL_S])]
            if claimed:
                found, held_elsewhere = await self._take(claimed)
        finally:
            for code in adopting:
                del self._adopting[code]
            adopted.set_result(None)
        if not claimed:
            holder = await self._get("room", codes[0])
            return holder if holder != self.id else None
        async with self.redis.pipeline(transaction=False) as pipe:
            for code in claimed:
                if code in found:
                    pipe.sadd(self._key("rooms", self.id), code)
                elif code in held_elsewhere:
                    pipe.set(self._key("room", code), held_elsewhere[code], ex=ROOM_TTL_S)
                    pipe.sadd(self._key("rooms", held_elsewhere[code]), code)
                else:
                    pipe.delete(self._key("room", code))
            await pipe.execute()
        if held_elsewhere:
            log.info("%d rooms left to the holders the database names", len(held_elsewhere))
        return self.id if codes[0] in found else held_elsewhere.get(codes[0])

    async def _take(self, codes: list[str]) -> tuple[set[str], dict[str, str]]:
        """Take the races of these rooms that the database lets this worker take, and rebuild
        them; return their codes, and the live holders of the others, by code. A holder the
        database names but Redis does not know (dead, or not beating again yet after a Redis
        restart) is waited for until its lease has run out: by then either its race may be
        taken, or it beats again."""
        loop = asyncio.get_running_loop()
        until = loop.time() + holding.LEASE_S + HEARTBEAT_S
        found: set[str] = set()
        while True:
            rows = await write_for_client(self.host.writer, functools.partial(
                holding.take, self.sessions, codes, self.id, datetime.now(UTC)),
                self.host.settings.write_wait_s)
            for row in rows:
                if row.code not in self.host.rooms:
                    self.host.adopt(row)
            found |= {row.code for row in rows}
            left = [code for code in codes if code not in found]
            elsewhere = await holding.holders(self.sessions, left) if left else {}
            holders = sorted(set(elsewhere.values()))
            beating = await self.redis.mget([self._key("worker", worker) for worker in holders]
                                            ) if holders else []
            silent = {worker for worker, beat in zip(holders, beating, strict=True)
                      if beat is None}
            if not silent or loop.time() >= until:
                return found, elsewhere
            codes = left
            await asyncio.sleep(HEARTBEAT_S)

    # -- requests (``server.cluster.bus.Bus``)
    # ------------------------------------------------------------

    async def request(self, client: Client, message: RoomRequest) -> None:
        try:
            worker = await self._worker_for(client, message)
            if worker == self.id:
                await self.host.handle(client, message)
                return
            if self.down_since is not None:
                raise Refusal(ErrorCode.UNAVAILABLE, "the room is held by another worker, "
                              "which cannot be reached now: try again in a moment")
            await self._hop(client, worker, message)
        except HopFailed:
            self._moved(client)
        except RedisError as error:
            self._redis_failed(error)
            raise Refusal(ErrorCode.UNAVAILABLE, "the servers' directory (Redis) cannot be "
                          "reached: try again in a moment") from None

    def left(self, client: Client) -> None:
        room = client.room
        if isinstance(room, Elsewhere):
            self._publish(room.worker, {"k": "gone", "conn": client.connection_id,
                                        "from": self.id})
        else:
            self.host.disconnect(client)

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
            return await self.holder(code) or self.id  # (none: the host says unknown_room)
        return room.worker if isinstance(room, Elsewhere) else self.id

    async def _hop(self, client: Client, worker: str, message: RoomRequest) -> None:
        done = asyncio.get_running_loop().create_future()
        self._waiting[client.connection_id] = done
        self._hopping_to[client.connection_id] = worker
        self._publish(worker, {
            "k": "req", "from": self.id, "conn": client.connection_id,
            "player": client.player_id, "name": client.name, "own": client.own_progress,
            "addr": client.address, "msg": message.model_dump(mode="json", by_alias=True)})
        try:
            async with asyncio.timeout(HOP_TIMEOUT_S):
                code, error = await done
        except TimeoutError:
            raise HopFailed from None
        finally:
            self._waiting.pop(client.connection_id, None)
            self._hopping_to.pop(client.connection_id, None)
        client.room = None if code is None else Elsewhere(code, worker)
        if error is not None:
            raise Refusal(ErrorCode(error[0]), error[1])

    def _moved(self, client: Client) -> None:
        """Close a connection whose room's worker is gone: its client reconnects and resumes,
        and the room is rebuilt where that lands."""
        client.room = None
        task = asyncio.create_task(client.ws.close(*MOVED_CLOSE))
        self._serving.add(task)
        task.add_done_callback(self._serving.discard)

    # -- the other side of a hop: this worker's rooms, other workers' connections ---------------

    async def _serve(self, data: dict[str, Any]) -> None:
        """Act on another worker's connection's request for one of this worker's rooms, then
        tell that worker it is done (after the reply's frames: the channel keeps the order)."""
        key = (data["from"], data["conn"])
        member = self._members.get(key)
        if member is None:  # ("addr": none from a worker of an older version, while upgrading)
            member = self._members[key] = RemoteMember(data["from"], data["conn"],
                                                       data["player"], data["name"], data["own"],
                                                       address=data.get("addr", ""))
        error = None
        try:
            message = CLIENT_MESSAGE.validate_python(data["msg"])
            if not isinstance(message, ROOM_REQUESTS):
                raise Refusal(ErrorCode.UNKNOWN_TYPE, "not a room request")
            code = getattr(message, "code", "").upper()
            if code in self._adopting:
                await self._adopting[code]
            await self.host.handle(member, message)
        except Refused as refused:
            error = [refused.code.value, refused.message]
        except Exception:
            log.exception("a request from worker %s failed", data["from"])
            error = [ErrorCode.INVALID_MESSAGE.value, "the server could not act on that"]
        room = member.room.race.code if isinstance(member.room, Room) else None
        if room is None:
            self._members.pop(key, None)
        self._publish(data["from"], {"k": "done", "conn": data["conn"], "room": room,
                                     "error": error})

    def send_frames(self, members: Sequence[RemoteMember], frame: str) -> None:
        """Frames for other workers' connections in this worker's rooms (``server.rooms.host``)."""
        by_worker: dict[str, list[str]] = {}
        for member in members:
            by_worker.setdefault(member.worker, []).append(member.connection_id)
        for worker, connections in by_worker.items():
            self._publish(worker, {"k": "frames", "conns": connections, "frame": frame})

    def out_of_room(self, members: Sequence[RemoteMember]) -> None:
        """A room of this worker closed: those connections are in no room now."""
        for member in members:
            self._members.pop((member.worker, member.connection_id), None)
            self._publish(member.worker, {"k": "out", "conn": member.connection_id})

    def moved(self, members: Sequence[RemoteMember]) -> None:
        """This worker let go of their room: their workers close them (1012)."""
        for member in members:
            self._publish(member.worker, {"k": "moved", "conn": member.connection_id})

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
                for data in self._loads(message["data"]):  # (``_write`` sends lists)
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
        log.warning("Redis cannot be reached (%s): rooms of other workers are out of reach",
                    error)
        for client in list(self.connections.values()):
            if isinstance(client.room, Elsewhere):
                self._moved(client)

    def _redis_answers(self) -> None:
        if self.down_since is not None:
            log.warning("Redis answers again")
            self.down_since = None

    def _receive(self, data: dict[str, Any]) -> None:
        kind = data["k"]
        if kind == "frames":
            broadcast([client.ws for client in map(self.connections.get, data["conns"])
                       if client is not None], data["frame"])
        elif kind == "done":
            waiting = self._waiting.get(data["conn"])
            if waiting is not None and not waiting.done():
                waiting.set_result((data["room"], data["error"]))
        elif kind == "req":
            task = asyncio.create_task(self._serve(data))
            self._serving.add(task)
            task.add_done_callback(self._serving.discard)
        elif kind == "gone":
            member = self._members.pop((data["from"], data["conn"]), None)
            if member is not None:
                self.host.disconnect(member)
        elif kind == "out":
            client = self.connections.get(data["conn"])
            if client is not None:
                client.room = None
        elif kind == "moved":
            client = self.connections.get(data["conn"])
            if client is not None:
                self._moved(client)

    # -- writing to Redis, in order -------------------------------------------------------------

    def _publish(self, worker: str, data: dict[str, Any]) -> None:
        self._outgoing.put_nowait((self._key("to", worker), self._dumps(data)))

    async def _send_forever(self) -> None:
        """Everything published or released, in the order it was queued, in pipelines of as
        many as are waiting."""
        while True:
            batch = [await self._outgoing.get()]
            while not self._outgoing.empty() and len(batch) < 1000:
                batch.append(self._outgoing.get_nowait())
            try:
                await self._write(batch)
            except RedisError as error:
                (log.debug if self.down_since is not None else log.warning)(
                    "the Redis bus could not send %d messages: %s", len(batch), error)
                self._redis_failed(error)
            except Exception:
                log.exception("the Redis bus could not send %d messages", len(batch))

    async def _flush(self) -> None:
        batch = []
        while not self._outgoing.empty():
            batch.append(self._outgoing.get_nowait())
        if batch:
            await self._write(batch)

    async def _write(self, batch: list[tuple[str, str] | Callable[[Any], None]]) -> None:
        """One pipeline, and one ``PUBLISH`` per channel of the messages queued for it, as a
        JSON list in the order they were queued: under load a move's frames and the end of its
        request go together (each command costs redis-py more than its bytes do). Then the
        other writes (releases, the public list), in the order they were queued."""
        by_channel: dict[str, list[str]] = {}
        writes = []
        for queued in batch:
            if isinstance(queued, tuple):
                by_channel.setdefault(queued[0], []).append(queued[1])
            else:
                writes.append(queued)
        async with self.redis.pipeline(transaction=False) as pipe:
            for channel, payloads in by_channel.items():
                pipe.publish(channel, f"[{','.join(payloads)}]")
            for write in writes:
                write(pipe)
            answers = await pipe.execute()
        for channel, listening in zip(by_channel, answers, strict=False):
            if listening == 0:
                self._nobody_listening(channel.removeprefix(self._key("to", "")))

    def _nobody_listening(self, worker: str) -> None:
        """Nobody reads that worker's channel (it is dead or stopped, or subscribing again
        after Redis came back): the requests hopped to it will not be answered. They fail now,
        not at ``HOP_TIMEOUT_S``: their connections are closed (1012), to reconnect and resume
        where the room is."""
        for connection_id, waiting in list(self._waiting.items()):
            if self._hopping_to.get(connection_id) == worker and not waiting.done():
                waiting.set_exception(HopFailed())

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
                    await self._sweep_orphans()
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
            renewed = await self.host.writer.call(lambda: holding.renew(
                self.sessions, self.id, datetime.now(UTC)), HEARTBEAT_S)
        except Exception as error:  # noqa: BLE001 - the writer reports database failures
            log.debug("leases not renewed: %s", error)
            return
        for room, race in held:  # taken by another worker (this one stalled, or Redis forgot)
            if race.race_id not in renewed and race.ended_at is None and room.race is race:
                self.listing.written.pop(room.race.code, None)
                self.host.delivery.let_go(room)

    async def _watch(self) -> None:
        # Also the workers this one's connections are in rooms of, or have requests hopped to:
        # a dead one may have been reaped already (on a request, or by another worker) and be
        # gone from ``workers``.
        held_elsewhere = {client.room.worker for client in self.connections.values()
                          if isinstance(client.room, Elsewhere)}
        workers = (await self._members_of("workers") | held_elsewhere
                   | set(self._hopping_to.values()))
        for worker in workers - {self.id}:
            if await self.redis.exists(self._key("worker", worker)):
                continue
            for client in list(self.connections.values()):
                if isinstance(client.room, Elsewhere) and client.room.worker == worker:
                    self._moved(client)
            for connection_id, waiting in list(self._waiting.items()):
                if self._hopping_to.get(connection_id) == worker and not waiting.done():
                    waiting.set_exception(HopFailed())
            await self._reap(worker)

    async def _reap(self, worker: str) -> None:
        """Take over a dead worker's rooms, if no other worker is doing it."""
        if not await self.redis.set(self._key("reap", worker), self.id, nx=True,
                                    ex=REAP_LOCK_S):
            return
        codes = sorted(await self._members_of("rooms", worker))
        if codes:
            await self._adopt_codes(codes, worker)
            log.warning("took over %d rooms of dead worker %s", len(codes), worker)
        await self.redis.delete(self._key("rooms", worker))
        await self.redis.srem(self._key("workers"), worker)

    async def _sweep_orphans(self) -> None:
        """Races in progress that no worker holds (their directory entries were lost): one
        worker at a time rebuilds them, so that their clocks run again."""
        if not await self.redis.set(self._key("orphans"), self.id, nx=True,
                                    ex=int(ORPHAN_SWEEP_S)):
            return
        codes = await unfinished_race_codes(self.sessions)
        held = await self.redis.mget([self._key("room", code) for code in codes]) if codes else []
        orphans = [code for code, holder in zip(codes, held, strict=True) if holder is None]
        if orphans:
            await self._adopt_codes(orphans, None)
        await self._directory_whole()

    async def _directory_whole(self) -> None:
        """Every stored room not ended has its entry in the directory now (``holder``)."""
        await self.redis.set(self._key("directory"), self.id)

