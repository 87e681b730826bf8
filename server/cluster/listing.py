"""The list of open public rooms (``GET /api/rooms``): rooms their hosts made public
(``create_room.public``), still in the lobby, with a free seat; at most ``LISTED``, the
addresses they were opened from in turn (``in_turn``): the newest lobby of each address,
newest first, then the second newest of each, and so on. One address holding many lobbies
cannot fill the list (60 lobbies of one address's 10 players hid every other room), and how
many it may hold is bounded besides (``public_lobbies``, ``settings.public_lobbies_per_*``).

With one process the list is read from the host's own rooms. With several workers each worker
keeps its own public rooms' entries in Redis (``RedisListing``, driven by
``server.cluster.redis_bus``):

- ``{prefix}public``: a sorted set of room codes, scored by when the lobby opened (ms);
- ``{prefix}public:{code}``: the room's entry (JSON, with the address it was opened from as
  ``by``, which the list never shows), expiring after ``ENTRY_TTL_S`` unless its worker
  refreshes it: a dead worker's entries vanish by themselves, and readers drop codes whose
  entry has gone from the sorted set.

Bounded: the sorted set keeps the newest ``KEPT`` codes (a listed lobby is already bounded by
the rooms each player may open an hour and the players each address may make a minute,
``server.core.budgets``, and lives at most ``lobby_max_s``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from server.core.race import Phase, Race

if TYPE_CHECKING:
    import redis.asyncio as redis

    from server.rooms.host import Room

LISTED = 50
"""The most rooms the list shows."""
KEPT = 1000
"""The most codes the Redis sorted set keeps (its oldest are dropped past it)."""
ENTRY_TTL_S = 30
REFRESH_S = 10.0
"""How often a worker renews its entries' expiry."""
SCANNED = 4 * LISTED
"""How many codes a read looks at, for the ``LISTED`` whose entries are still there."""


def entry(race: Race) -> dict[str, Any] | None:
    """The room as the list shows it, or None when it is not to be listed."""
    host = race.racers.get(race.host_id)
    if (not race.public or race.phase is not Phase.LOBBY or host is None
            or len(race.racers) >= race.seats_max):
        return None
    return {"code": race.code, "rule_set": race.rule_set, "host": host.name,
            "racers": len(race.racers), "seats": race.seats_max, "deal_kind": race.deal_kind,
            "time_limit_s": race.time_limit_s}


def opened_by(room: Room) -> str:
    """Whom the room counts against in the list: the address it was opened from, or for a
    room restored from the database (whose address is not stored) the room alone."""
    return room.host_address or f"room:{room.race.code}"


def in_turn(listed: Iterable[tuple[float, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Entries (when opened, by whom, the entry) in the list's order, at most ``LISTED``:
    each address's newest first, newest first; then each address's second newest, and so on.
    An honest room is shown while fewer than ``LISTED`` addresses have a newer one, however
    many lobbies each holds."""
    turns: Counter[str] = Counter()
    ranked = []
    for _, by, listing in sorted(listed, key=lambda item: item[0], reverse=True):
        ranked.append((turns[by], listing))
        turns[by] += 1
    ranked.sort(key=lambda item: item[0])  # stable: newest first within a turn
    return [listing for _, listing in ranked[:LISTED]]


def local_list(rooms: Iterable[Room]) -> list[dict[str, Any]]:
    """The list, from one process's rooms."""
    return in_turn((room.opened, opened_by(room), listing) for room in rooms
                   if (listing := entry(room.race)) is not None)


def public_lobbies(rooms: Iterable[Room], player_id: str, address: str | None) -> tuple[int, int]:
    """How many public lobbies (listed or full) ``player_id`` hosts, and how many were opened
    from ``address``, of these rooms."""
    by_player = by_address = 0
    for room in rooms:
        race = room.race
        if race.public and race.phase is Phase.LOBBY:
            by_player += race.host_id == player_id
            by_address += address is not None and room.host_address == address
    return by_player, by_address


class RedisListing:
    """One worker's public rooms in Redis, and the list read from every worker's.

    ``changed`` is called on every change of a public room (``RoomHost.deliver``); it queues a
    write only when the room's entry differs from the one last written, through ``queue``: the
    bus's one ordered queue of Redis commands, so that a room's writes (and its release) land in
    the order they were made."""

    def __init__(self, client: redis.Redis, key: Callable[..., str],
                 queue: Callable[[Callable[[Any], None]], None]) -> None:
        self.redis, self._key, self._queue = client, key, queue
        self.written: dict[str, tuple[str, int]] = {}
        """The entries this worker has in Redis, by code: as JSON, and their score."""

    def changed(self, room: Room) -> None:
        code, listing = room.race.code, entry(room.race)
        if listing is None:
            self.forget(code)
            return
        written = (json.dumps({**listing, "by": opened_by(room)}, separators=(",", ":")),
                   round(room.opened * 1000))
        if self.written.get(code) != written:
            self.written[code] = written
            self._queue(lambda pipe: self._write(pipe, code, *written))

    def _write(self, pipe: Any, code: str, text: str, score: int) -> None:
        pipe.set(self._key("public", code), text, ex=ENTRY_TTL_S)
        pipe.zadd(self._key("public"), {code: score})
        pipe.zremrangebyrank(self._key("public"), 0, -KEPT - 1)

    def forget(self, code: str) -> None:
        """The room is listed no more (full, started, closed, or held elsewhere now)."""
        if self.written.pop(code, None) is None:
            return

        def write(pipe: Any) -> None:
            pipe.delete(self._key("public", code))
            pipe.zrem(self._key("public"), code)

        self._queue(write)

    def refresh(self) -> None:
        """Write this worker's entries again (every ``REFRESH_S``): their expiry renewed, and
        any a reader dropped from the sorted set while it was being rewritten put back."""
        for code, (text, score) in self.written.items():
            self._queue(partial(self._write, code=code, text=text, score=score))

    async def read(self) -> list[dict[str, Any]]:
        """The list, from every worker's entries; codes whose entry has expired are dropped."""
        newest: list[tuple[str, float]] = await self.redis.zrevrange(  # type: ignore[assignment]
            self._key("public"), 0, SCANNED - 1, withscores=True)  # (redis-py types it loosely)
        scored = [(str(code), float(score)) for code, score in newest]
        if not scored:
            return []
        codes = [code for code, _ in scored]
        entries = await self.redis.mget([self._key("public", code) for code in codes])
        gone = [code for code, text in zip(codes, entries, strict=True) if text is None]
        if gone:
            await self.redis.zrem(self._key("public"), *gone)
        listed = []
        for (_, score), text in zip(scored, entries, strict=True):
            if text is not None:
                listing = json.loads(text)
                listed.append((score, str(listing.pop("by")), listing))
        return in_turn(listed)
