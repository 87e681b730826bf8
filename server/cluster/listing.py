"""The list of open public rooms (``GET /api/rooms``) across workers; which rooms it shows, and
in what order, is ``server.core.lobbies``.

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
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from server.core.lobbies import LISTED, entry, in_turn
from server.rooms.room import Room, opened_by

if TYPE_CHECKING:
    import redis.asyncio as redis

KEPT = 1000
"""The most codes the Redis sorted set keeps (its oldest are dropped past it)."""
ENTRY_TTL_S = 30
REFRESH_S = 10.0
"""How often a worker renews its entries' expiry."""
SCANNED = 4 * LISTED
"""How many codes a read looks at, for the ``LISTED`` whose entries are still there."""


class RedisListing:
    """One worker's public rooms in Redis, and the list read from every worker's.

    ``changed`` is called on every change of a public room (``RoomHost.deliver``); it queues a
    write only when the room's entry differs from the one last written, through ``queue``: the
    bus's one ordered queue of Redis commands, so that a room's writes (and its release) land in
    the order they were made."""

    def __init__(
        self,
        client: redis.Redis,
        key: Callable[..., str],
        queue: Callable[[Callable[[Any], None]], None],
    ) -> None:
        self.redis, self._key, self._queue = client, key, queue
        self.written: dict[str, tuple[str, int]] = {}
        """The entries this worker has in Redis, by code: as JSON, and their score."""

    def changed(self, room: Room) -> None:
        code, listing = room.race.terms.code, entry(room.race)
        if listing is None:
            self.forget(code)
            return
        written = (
            json.dumps({**listing, "by": opened_by(room)}, separators=(",", ":")),
            round(room.opened * 1000),
        )
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
            self._key("public"), 0, SCANNED - 1, withscores=True
        )  # (redis-py types it loosely)
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
