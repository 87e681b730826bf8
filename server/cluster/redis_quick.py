"""The quick race's queue across workers, in Redis (``server.cluster.redis_bus``).

The seekers of every worker are one hash, ``{prefix}quick:seekers``: a field per player id (so a
player waits once, whichever worker they asked), its value the ``Entry`` as JSON, naming the
seeker's worker and connection. Any worker adds its own connections' seekers (``HSETNX``) and
takes them out again (compare-and-delete: only the entry it wrote).

One worker at a time matches: the one holding the lease ``{prefix}quick:matcher`` (``SET NX
PX``, renewed every wave by its holder, ``LEASE_S``). Each wave it reads the hash, drops the
seekers of workers whose heartbeat is gone (``server.cluster.directory``), runs the pure wave
(``server.core.matching``) and, for each group, claims it in one script: all of its entries
still as read, then all removed, or nothing is. So no player is in two rooms, whatever another
worker does meanwhile. It opens the room itself (``Openings.quick``: the room is its own) and
publishes ``matched`` to each seeker's worker, which joins its connection into the room through
the bus as a ``join`` of its own (a hop when the room is elsewhere). A matcher that dies stops
renewing; its lease runs out and the next worker to look takes it.

Every worker tells its own seekers how the queue stands each wave (``queue``), from the hash.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

import redis.asyncio as redis
from redis.exceptions import RedisError

from server.cluster.hops import Publish
from server.cluster.practice import PracticeBots
from server.cluster.quick import (
    Counts,
    Entry,
    Request,
    already_queued,
    counts,
    enter,
    group_room,
    groups,
    matched,
    may_seek,
    not_queued,
    practice_due,
    practice_room,
    queue_full,
    queued,
    send,
    statuses,
)
from server.core.errors import Refused
from server.core.matching import WAVE_S, Seeker
from server.rooms.host import RoomHost
from server.rooms.room import Client
from server.storage.ratings import shown_rating
from wire.protocol import LeaveQueue, Matched, Ok, QuickRace

log = logging.getLogger("patience_race.quick")

LEASE_S = 3 * WAVE_S
"""How long the matcher's lease lasts unrenewed: a matcher gone, another matches within it."""

LEAD = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
"""
"""Renew the lease if this worker holds it, else take it if nobody does: 1 if it is held."""
LET_GO = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
"""Give the lease up, if this worker holds it."""
CLAIM = """
for i = 1, #ARGV, 2 do
    if redis.call('HGET', KEYS[1], ARGV[i]) ~= ARGV[i + 1] then return 0 end
end
for i = 1, #ARGV, 2 do redis.call('HDEL', KEYS[1], ARGV[i]) end
return 1
"""
"""Take entries out of the queue, all as read (player id, JSON, ...) or none: 1 if taken."""


class RedisQueue:
    """This worker's part in the queue: its connections waiting, and the matcher's wave when it
    holds the lease."""

    def __init__(
        self,
        client: redis.Redis,
        key: Callable[..., str],
        worker_id: str,
        host: RoomHost,
        publish: Publish,
        request: Request,
        wave_s: float = WAVE_S,
    ) -> None:
        self.redis, self.id, self.host, self.publish = client, worker_id, host, publish
        self.request, self.wave_s = request, wave_s
        self.seekers, self.lease = key("quick", "seekers"), key("quick", "matcher")
        self._key = key
        self.mine: dict[str, Client] = {}
        """This worker's connections waiting, by connection id."""
        self.asked: dict[str, str] = {}
        """Their entries as written to the hash, by connection id (``hold_again``)."""
        self._lead = client.register_script(LEAD)
        self._let_go = client.register_script(LET_GO)
        self._claim = client.register_script(CLAIM)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.practice = PracticeBots(host.settings, host.sessions, host.writer)

    # -- a connection's requests ----------------------------------------------------------------

    def seeking(self, client: Client) -> bool:
        return client.connection_id in self.mine

    async def seek(self, client: Client, message: QuickRace) -> None:
        assert client.player_id is not None
        may_seek(client, message)
        if self.seeking(client):
            raise already_queued()
        most = self.host.settings.quick_queue_max
        if await self.redis.hlen(self.seekers) >= most:
            raise queue_full(most)
        rating = await shown_rating(self.host.sessions, client.player_id, message.rule_set)
        now = self.host.clock()
        entry = Entry(
            message.rule_set,
            Seeker(
                client.player_id, client.name or "", rating, message.rated, now, message.bot_after_s
            ),
            self.id,
            client.connection_id,
            message.id,
            client.address or "",
        )
        if not await self.redis.hsetnx(self.seekers, client.player_id, _text(entry)):
            raise already_queued()
        self.mine[client.connection_id] = client
        self.asked[client.connection_id] = _text(entry)
        waiting = sum(other.queue == entry.queue for other in await self._entries())
        send(client, queued(message, entry, waiting, now))

    async def leave(self, client: Client, message: LeaveQueue) -> None:
        """Out of the queue, unless a matcher has just taken the player (``matched`` is on its
        way: they race)."""
        if not self.seeking(client):
            raise not_queued()
        removed = await self._remove(client)  # (Redis away: they wait on, and may retry)
        self._forget(client.connection_id)
        if not removed:
            raise not_queued()
        send(client, Ok(id=message.id))

    def drop(self, client: Client) -> None:
        """The connection closed: its entry leaves the queue (in the background)."""
        if client.connection_id in self.mine:
            self._forget(client.connection_id)
            self._spawn(self._remove(client))

    def _forget(self, connection_id: str) -> None:
        del self.mine[connection_id], self.asked[connection_id]

    async def hold_again(self) -> None:
        """Redis has forgotten this worker (it restarted, or this worker stalled past its
        heartbeat and the matcher dropped its seekers as a dead worker's): write this worker's
        seekers into the queue again, as they asked, so that nobody waits for ever in a queue
        that no longer holds them. A player queued meanwhile from another worker keeps that
        place (``HSETNX``)."""
        for connection_id, text in list(self.asked.items()):
            client = self.mine[connection_id]
            assert client.player_id is not None
            await self.redis.hsetnx(self.seekers, client.player_id, text)

    async def _remove(self, client: Client) -> bool:
        """Take this connection's entry out of the hash, if it is still there and its own."""
        assert client.player_id is not None
        text = await self.redis.hget(self.seekers, client.player_id)
        if text is None or json.loads(text)["conn"] != client.connection_id:
            return False
        return bool(await self._claim(keys=[self.seekers], args=[client.player_id, text]))

    async def counts(self) -> Counts:
        return counts(await self._entries())

    # -- the waves ------------------------------------------------------------------------------

    async def run(self) -> None:
        """Every ``wave_s``: match, if this worker holds the lease (or can take it), and tell
        this worker's seekers how the queue stands."""
        while True:
            await asyncio.sleep(self.wave_s)
            try:
                if await self._lead(keys=[self.lease], args=[self.id, int(LEASE_S * 1000)]):
                    await self.wave()
                if self.mine:
                    self._tell_mine(await self._entries())
            except RedisError as error:
                log.debug("the quick race queue could not be read: %s", error)
            except Exception:  # a failed wave must not stop the queue
                log.exception("a quick race wave failed")

    async def wave(self) -> None:
        """The matcher's wave on what Redis holds."""
        read = await self._read()
        live = await self._drop_dead(read)
        now = self.host.clock()
        taken: set[str] = set()
        for group in groups(live, now):
            await self._open(group, read)
            taken.update(entry.seeker.player_id for entry in group)
        for entry in practice_due(live, now):
            if self.practice.free(entry.address) and entry.seeker.player_id not in taken:
                await self._practise(entry, read[entry.seeker.player_id][1])

    async def _drop_dead(self, read: dict[str, tuple[Entry, str]]) -> list[Entry]:
        """The entries of live workers; those of workers whose heartbeat is gone are taken
        out of the queue."""
        alive = {
            worker
            for worker in {entry.worker for entry, _ in read.values()}
            if await self.redis.exists(self._key("worker", worker))
        }
        live = []
        for entry, text in read.values():
            if entry.worker in alive:
                live.append(entry)
            else:
                await self._claim(keys=[self.seekers], args=[entry.seeker.player_id, text])
        return live

    async def _open(self, group: list[Entry], read: dict[str, tuple[Entry, str]]) -> None:
        """Claim the group, open its room here, and tell each seeker's worker. Should the room
        not open (the database does not take it), the group waits on in the queue."""
        pairs = [
            part
            for entry in group
            for part in (entry.seeker.player_id, read[entry.seeker.player_id][1])
        ]
        if not await self._claim(keys=[self.seekers], args=pairs):
            return  # one of them left, or was taken, meanwhile: the next wave sees
        try:
            room = await group_room(self.host, group)
        except Refused as refused:
            log.warning("a quick room could not be opened: %s", refused.message)
            for player_id, text in zip(pairs[::2], pairs[1::2], strict=True):
                await self.redis.hsetnx(self.seekers, player_id, text)
            return
        said = matched(group, room.race.terms.code)
        for entry in group:
            self._tell(entry, said)

    async def _practise(self, entry: Entry, text: str) -> None:
        """Claim the seeker, open their room with a practice bot here, and tell their worker."""
        player_id = entry.seeker.player_id
        if not await self._claim(keys=[self.seekers], args=[player_id, text]):
            return
        try:
            said = await practice_room(self.host, self.practice, entry)
        except Refused as refused:
            log.warning("a practice room could not be opened: %s", refused.message)
            await self.redis.hsetnx(self.seekers, player_id, text)
            return
        self._tell(entry, said)

    def _tell(self, entry: Entry, said: Matched) -> None:
        """Publish ``matched`` to the seeker's worker (``matched`` there)."""
        self.publish(
            entry.worker,
            {
                "k": "matched",
                "conn": entry.connection_id,
                "id": entry.request_id,
                "msg": said.model_dump(mode="json"),
            },
        )

    def matched(self, data: dict[str, Any], connections: dict[str, Client]) -> None:
        """A matcher matched a connection of this worker (``matched``): it joins the room."""
        client = connections.get(data["conn"])
        if data["conn"] in self.mine:
            self._forget(data["conn"])
        if client is not None:
            said = Matched.model_validate(data["msg"])
            self._spawn(enter(self.request, client, said, data["id"]))

    def _tell_mine(self, entries: list[Entry]) -> None:
        now = self.host.clock()
        for entry, status in statuses(entries, now):
            client = self.mine.get(entry.connection_id)
            if client is not None and entry.worker == self.id:
                send(client, status)

    async def _read(self) -> dict[str, tuple[Entry, str]]:
        """The queue as Redis holds it: each player's entry, and its text as stored."""
        stored = {
            str(player_id): str(text)
            for player_id, text in (await self.redis.hgetall(self.seekers)).items()
        }
        return {
            player_id: (Entry.from_json(player_id, json.loads(text)), text)
            for player_id, text in stored.items()
        }

    async def _entries(self) -> list[Entry]:
        return [entry for entry, _ in (await self._read()).values()]

    # -- stopping -------------------------------------------------------------------------------

    async def stop(self) -> None:
        """This worker stops: its seekers leave the queue and it gives the lease up, so that
        another matches at once."""
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(RedisError):
            for client in list(self.mine.values()):
                await self._remove(client)
            self.mine.clear()
            self.asked.clear()
            await self._let_go(keys=[self.lease], args=[self.id])
        await self.practice.close()

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("the quick race queue: %s", task.exception())


def _text(entry: Entry) -> str:
    return json.dumps(entry.as_json(), separators=(",", ":"))
