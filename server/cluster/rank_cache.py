"""Ranks on the hot boards from Redis sorted sets, kept in step with the database.

The all-time fastest board and the most wins board of each rule set are held as sorted sets,
``{prefix}ranks:<board>`` (``server.storage.ranks`` names the boards): a fastest line as
``<race id>:<player id>`` scored by its time, a player on the most wins board by minus their
wins. The lines strictly better than a rank term ``t`` are ``ZCOUNT key -inf (t``, O(log n) in
Redis. Pages are still read from the database, one index range in board order: that keeps the
documented order within ties, which a sorted set (ordering ties by name) would not.

The database is the truth. The sets take what ``server.storage.results.record_results`` returns,
after its commit: the lines as they now stand (``ZADD``, so setting them twice changes nothing;
a player's count only grows, so it is set only lower, ``LT``, and an older count never undoes a
newer one). They are rebuilt from the database at start and on demand (``patience-race
leaderboards rebuild``): into new keys, renamed over the old ones. While a rebuild runs
(``{prefix}ranks-building`` is set) every write goes to both, so a result stored after the
rebuild read the database is not lost. ``{prefix}ranks-ready`` says a complete rebuild is in
place: without it (none yet, or an error while writing, which removes it) the cache answers
nothing and the database answers instead.
"""

from __future__ import annotations

import contextlib
import logging
from collections import defaultdict
from collections.abc import Callable, Sequence

import redis.asyncio as redis

from server.storage import ranks
from server.storage.engine import Sessions

log = logging.getLogger("patience_race.rank_cache")

CHUNK = 10_000
"""Members sent per ZADD while rebuilding."""


def held(boards: tuple[str, ...]) -> str | None:
    """The board a sorted set holds, if these keys are one such board: the all-time fastest
    board or the most wins board of a rule set (not a day's or a week's)."""
    if len(boards) != 1:
        return None
    kind, _, rest = boards[0].partition(":")
    return boards[0] if (kind == "fastest" and ":" not in rest) or kind == "wins" else None


class RedisRanks:
    """``ranks.RankCache`` in Redis, with the writes and rebuilds that keep it in step."""

    def __init__(self, url: str, prefix: str) -> None:
        self.redis = redis.Redis.from_url(url)
        self.prefix = prefix
        self._ready = f"{prefix}ranks-ready"
        self._building = f"{prefix}ranks-building"

    def key(self, board: str, *, new: bool = False) -> str:
        return f"{self.prefix}{'ranks-new' if new else 'ranks'}:{board}"

    async def lines_below(self, boards: tuple[str, ...], terms: Sequence[int]) -> list[int] | None:
        board = held(boards)
        if board is None:
            return None
        try:
            pipe = self.redis.pipeline(transaction=False)
            pipe.exists(self._ready)
            for term in terms:
                pipe.zcount(self.key(board), "-inf", f"({term}")
            ready, *below = await pipe.execute()
        except redis.RedisError:
            log.warning("rank cache unreachable: ranks come from the database", exc_info=True)
            return None
        return [int(lines) for lines in below] if ready else None

    async def set_lines(self, scored: Sequence[ranks.Scored]) -> None:
        """Set the lines a stored result gave (after its commit). A failure takes the cache out
        of use until the next rebuild, rather than let it answer without these lines."""
        if not scored:
            return
        try:
            building = bool(await self.redis.exists(self._building))
            pipe = self.redis.pipeline(transaction=False)
            for new in (False, True) if building else (False,):
                for board, member, term in scored:
                    pipe.zadd(
                        self.key(board, new=new), {member: term}, lt=board.startswith("wins:")
                    )
            await pipe.execute()
        except redis.RedisError:
            log.warning("rank cache write failed: out of use until rebuilt", exc_info=True)
            with contextlib.suppress(redis.RedisError):  # unreachable: nobody reads it either
                await self.redis.delete(self._ready)

    async def rebuild(self, sessions: Sessions) -> int:
        """Fill the sets from the database, and put them in use (the sets of boards left
        without a line are dropped). Returns the lines set."""
        await self.redis.set(self._building, 1, ex=3600)
        stale = [key async for key in self.redis.scan_iter(f"{self.prefix}ranks-new:*")]
        if stale:
            await self.redis.delete(*stale)
        boards: set[str] = set()
        lines = 0
        async for board_of, rows in ranks.hot_board_lines(sessions, CHUNK):
            lines += await self._add(rows, board_of, boards, lt=board_of is ranks.wins_board)
        emptied = [  # boards with no line left (every one held for fair play, say)
            key
            async for key in self.redis.scan_iter(f"{self.prefix}ranks:*")
            if key.decode().removeprefix(f"{self.prefix}ranks:") not in boards
        ]
        pipe = self.redis.pipeline(transaction=True)
        if emptied:
            pipe.delete(*emptied)
        for board in sorted(boards):
            pipe.rename(self.key(board, new=True), self.key(board))
        pipe.delete(self._building)
        pipe.set(self._ready, 1)
        await pipe.execute()
        return lines

    async def _add(
        self,
        rows: Sequence[tuple[str, str, int | None]],
        board_of: Callable[[str], str],
        boards: set[str],
        *,
        lt: bool,
    ) -> int:
        by_board: dict[str, dict[str, int]] = defaultdict(dict)
        for rule_set, member, term in rows:
            by_board[board_of(rule_set)][member] = term or 0  # a win's time, a count: not null
        pipe = self.redis.pipeline(transaction=False)
        for board, members in by_board.items():
            boards.add(board)
            pipe.zadd(self.key(board, new=True), members, lt=lt)
        await pipe.execute()
        return len(rows)

    async def close(self) -> None:
        await self.redis.aclose()
