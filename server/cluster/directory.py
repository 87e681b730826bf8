"""The room directory in Redis: which worker holds which room, and the taking over of rooms
whose worker is dead or that no worker holds (``server.cluster.redis_bus``).

Redis holds:

- ``{prefix}worker:{id}``: the worker is alive while this key is; it sets it every
  ``HEARTBEAT_S`` and it expires after ``server.cluster.redis_bus.WORKER_TTL_S``. Its value is
  the worker's own address, given to clients as ``reconnect_to``.
- ``{prefix}workers``: the workers that have run and not been reaped.
- ``{prefix}room:{code}``: the worker that holds the room (the directory), and
  ``{prefix}rooms:{id}``: the rooms a worker holds, for whoever takes them over.
- ``{prefix}public`` and ``{prefix}public:{code}``: the public rooms open for racers, each kept
  by its room's worker (``server.cluster.listing``).
- ``{prefix}directory``: set once the directory is whole, that is holds every stored room not
  ended (a worker found none stored at its start, or the sweep for orphans has run). A
  Redis restart takes it away with the entries it vouched for. While it is set, a code with no
  entry is no room, answered from Redis in one round trip (guessed codes cost 2-3 ms of CPU,
  two database transactions and five Redis commands each when every one was looked up).

Whoever first locks a dead worker's reaping claims its rooms in the directory and rebuilds each
from the stored moves, as a restarted server does. A worker takes a room only where the
database lets it (``server.storage.holding``: nobody holds the race, or its holder's lease has
run out); a room that Redis has forgotten but whose holder still renews its lease is pointed at
that holder again.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as redis

from server.cluster.listing import RedisListing
from server.rooms.host import RoomHost
from server.rooms.room import Room, write_for_client
from server.storage import holding
from server.storage.engine import Sessions
from server.storage.races import unfinished_race_codes

log = logging.getLogger("patience_race.bus")

HEARTBEAT_S = 1.0
"""How often a worker says it is alive, renews its leases and looks at the others."""
ROOM_TTL_S = 24 * 3600
"""How long a directory entry outlives a cluster that stopped without releasing it."""
REAP_LOCK_S = 30
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


class RoomDirectory:
    """Which worker holds which room, in Redis (the host's ``server.rooms.room.Directory``),
    and the rooms this worker takes over: from a dead worker, or from nobody."""

    def __init__(
        self,
        client: redis.Redis,
        key: Callable[..., str],
        worker_id: str,
        host: RoomHost,
        sessions: Sessions,
        listing: RedisListing,
        queue: Callable[[Callable[[Any], None]], None],
    ) -> None:
        self.redis, self._key, self.id = client, key, worker_id
        self.host, self.sessions, self.listing, self._queue = host, sessions, listing, queue
        self._adopting: dict[str, asyncio.Future[None]] = {}
        """Rooms claimed and being rebuilt: requests for them wait until they are."""
        self._take_over = self.redis.register_script(TAKE_OVER)

    async def adopted(self, code: str) -> None:
        """Wait until the room is rebuilt, if it is being adopted."""
        if code in self._adopting:
            await self._adopting[code]

    async def _get(self, *key: str) -> str | None:
        value = await self.redis.get(self._key(*key))
        return None if value is None else str(value)

    async def _members_of(self, *key: str) -> set[str]:
        return {str(member) for member in await self.redis.smembers(self._key(*key))}

    async def hold_again(self) -> None:
        """Write this worker's rooms into the directory again, those the database says it
        still holds (their epochs are its own), and let go of the others."""
        rooms = list(self.host.rooms.values())
        if not rooms:
            return
        now = await holding.epochs(self.sessions, [room.race.terms.race_id for room in rooms])
        kept = [room for room in rooms if now.get(room.race.terms.race_id) == room.epoch]
        for room in rooms:
            if room not in kept:
                self.listing.written.pop(room.race.terms.code, None)  # (the new holder's to write)
                self.host.delivery.let_go(room)
        async with self.redis.pipeline(transaction=False) as pipe:
            for room in kept:
                pipe.set(self._key("room", room.race.terms.code), self.id, ex=ROOM_TTL_S)
                pipe.sadd(self._key("rooms", self.id), room.race.terms.code)
            await pipe.execute()
        self.listing.refresh()
        log.warning(
            "directory written again: %d rooms still held here, %d let go",
            len(kept),
            len(rooms) - len(kept),
        )

    async def claim(self, code: str) -> bool:
        claimed = await self.redis.set(self._key("room", code), self.id, nx=True, ex=ROOM_TTL_S)
        if claimed:
            await self.redis.sadd(self._key("rooms", self.id), code)
        return bool(claimed)

    def release(self, code: str) -> None:
        self.listing.forget(code)
        self._queue(lambda pipe: self._release(pipe, code))

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
            await self.reap(holder)
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
            claimed = [
                code
                for code in adopting
                if await self._take_over(
                    keys=[self._key("room", code)], args=[dead or "", self.id, ROOM_TTL_S]
                )
            ]
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
            rows = await write_for_client(
                self.host.writer,
                functools.partial(holding.take, self.sessions, codes, self.id, datetime.now(UTC)),
                self.host.settings.write_wait_s,
            )
            for row in rows:
                if row.code not in self.host.rooms:
                    self.host.adopt(row)
            found |= {row.code for row in rows}
            left = [code for code in codes if code not in found]
            elsewhere = await holding.holders(self.sessions, left) if left else {}
            holders = sorted(set(elsewhere.values()))
            beating = (
                await self.redis.mget([self._key("worker", worker) for worker in holders])
                if holders
                else []
            )
            silent = {worker for worker, beat in zip(holders, beating, strict=True) if beat is None}
            if not silent or loop.time() >= until:
                return found, elsewhere
            codes = left
            await asyncio.sleep(HEARTBEAT_S)

    async def reap(self, worker: str) -> None:
        """Take over a dead worker's rooms, if no other worker is doing it."""
        if not await self.redis.set(self._key("reap", worker), self.id, nx=True, ex=REAP_LOCK_S):
            return
        codes = sorted(await self._members_of("rooms", worker))
        if codes:
            await self._adopt_codes(codes, worker)
            log.warning("took over %d rooms of dead worker %s", len(codes), worker)
        await self.redis.delete(self._key("rooms", worker))
        await self.redis.srem(self._key("workers"), worker)

    async def sweep_orphans(self) -> None:
        """Races in progress that no worker holds (their directory entries were lost): one
        worker at a time rebuilds them, so that their clocks run again."""
        if not await self.redis.set(self._key("orphans"), self.id, nx=True, ex=int(ORPHAN_SWEEP_S)):
            return
        codes = await unfinished_race_codes(self.sessions)
        held = await self.redis.mget([self._key("room", code) for code in codes]) if codes else []
        orphans = [code for code, holder in zip(codes, held, strict=True) if holder is None]
        if orphans:
            await self._adopt_codes(orphans, None)
        await self.mark_whole()

    async def mark_whole(self) -> None:
        """Every stored room not ended has its entry in the directory now (``holder``)."""
        await self.redis.set(self._key("directory"), self.id)
