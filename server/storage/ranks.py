"""Ranks without counting everything above: a result's standing, and the counts kept per board.

A line's rank is one more than the number of lines whose rank term (the first term of the
board's order; lines that tie on it share a rank) is strictly lower. Counting those lines reads
every one of them: at a million results, 20-30 ms for a line in the middle of a board. Instead
``board_counts`` keeps, per board and per bucket of the rank term, how many lines are in it,
updated in the transaction that stores the results (``server.storage.results.record_results``). The
lines
below a term ``t`` are then the sum of the counts of the buckets below ``t``'s, one index range
over at most a few thousand rows whatever the number of results, plus the lines of ``t``'s own
bucket below ``t``, one range of the board's own index over at most one bucket
(``server.storage.leaderboards`` counts those).

The boards and their buckets:

- ``fastest:<rule set>``, and ``fastest:<rule set>:<day>`` per UTC day of ``finish_day``: the
  ranked wins by ``time_ms``, buckets of one second (``WIN_WIDTH``). The week's board adds up
  its days' counts.
- ``wins:<rule set>``: the players of ``player_wins`` by ``minus_wins``, a bucket per number of
  wins (so no line is below another inside its bucket).
- ``deal:<rule set>:<seed>``: every result on the deal by ``standing``, buckets of
  ``STANDING_WIDTH``; ``daily:<rule set>:<day>``: the ranked results on that day's daily deal.

A bucket's width trades the rows summed against the lines counted inside one bucket: at ten
million results the busiest second of the most played rule set holds about 2,000 wins.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol, cast

from sqlalchemy import BindParameter, ColumnElement, Table, bindparam, func, select, text, true
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage import dialect
from server.storage.engine import Sessions
from server.storage.models import BoardCountRow, EntryRow, PlayerWinsRow

SPAN = 10**10
"""More milliseconds than any race lasts (115 days): the room each part of a standing has."""
NOT_WON = 10**15
MOST_CARDS = 1000
"""More cards than any rule set plays with."""
WIN_WIDTH = 1000
STANDING_WIDTH = 10_000

_COUNTS = cast(Table, BoardCountRow.__table__)


def standing(
    status: str, time_ms: int | None, on_foundations: int, reached_at_ms: int | None
) -> int:
    """A result's place in a race's order (``Race.ranking``) as one number, lower is better:
    a win by its time; after every win, the most cards home, then who reached that count first.
    With it a deal's and a day's board is ordered, paged and bucketed by one indexed column."""
    if status == "won":
        if time_ms is None:
            raise ValueError("a win has a time")
        return time_ms
    return NOT_WON + (MOST_CARDS - on_foundations) * SPAN + (reached_at_ms or 0)


STANDING_SQL = (
    f"CASE WHEN status = 'won' THEN time_ms ELSE {NOT_WON} + ({MOST_CARDS} - "
    f"on_foundations) * {SPAN} + COALESCE(reached_at_ms, 0) END"
)
"""``standing`` in SQL, over the columns of ``entries``."""


def fastest_board(rule_set: str, day: date | None = None) -> str:
    """The all-time fastest board's key, or with ``day`` that day's."""
    return f"fastest:{rule_set}" if day is None else f"fastest:{rule_set}:{day.isoformat()}"


def wins_board(rule_set: str) -> str:
    return f"wins:{rule_set}"


def deal_board(rule_set: str, seed: int) -> str:
    return f"deal:{rule_set}:{seed:020d}"


def daily_board(rule_set: str, day: date) -> str:
    return f"daily:{rule_set}:{day.isoformat()}"


@dataclass(frozen=True, slots=True)
class Counted:
    """Where a board's lines are counted: the keys whose buckets add up to it (a week is its
    days), and the width of a bucket of its rank term."""

    boards: tuple[str, ...]
    width: int

    def bucket(self, term: int) -> int:
        return term // self.width


class RankCache(Protocol):
    """Ranks held outside the database (``server.cluster.rank_cache``), for the boards it holds."""

    async def lines_below(self, boards: tuple[str, ...], terms: Sequence[int]) -> list[int] | None:
        """How many lines of the board have a rank term below each of ``terms`` (one round
        trip); None when the cache does not hold that board (or is not ready): the database
        answers then."""


@dataclass(frozen=True, slots=True)
class StoredResult:
    """A result as the counts see it: which boards it is on, and where."""

    rule_set: str
    seed: int
    daily_day: date | None
    ranked: bool
    status: str
    time_ms: int | None
    standing: int
    finish_day: date | None


Change = tuple[str, int, int]
"""A board, a bucket, and how many lines it gains (or loses, below zero)."""
Scored = tuple[str, str, int]
"""A board, a line's name on it, and its rank term: what a sorted set holds
(``server.cluster.rank_cache``). A fastest line is named ``<race id>:<player id>``, a most wins
line by its player id."""


def result_changes(result: StoredResult) -> list[Change]:
    """The lines a newly stored result adds to the time boards."""
    changes = [(deal_board(result.rule_set, result.seed), result.standing // STANDING_WIDTH, 1)]
    if result.ranked and result.daily_day is not None:
        changes.append(
            (daily_board(result.rule_set, result.daily_day), result.standing // STANDING_WIDTH, 1)
        )
    if result.ranked and result.status == "won":
        if result.time_ms is None or result.finish_day is None:
            raise ValueError("a win has a time and a day")
        bucket = result.time_ms // WIN_WIDTH
        changes += [
            (fastest_board(result.rule_set), bucket, 1),
            (fastest_board(result.rule_set, result.finish_day), bucket, 1),
        ]
    return changes


def wins_changes(rule_set: str, wins: int) -> list[Change]:
    """A player's wins went from ``wins - 1`` to ``wins``: they move up one bucket."""
    changes = [(wins_board(rule_set), -wins, 1)]
    if wins > 1:
        changes.append((wins_board(rule_set), 1 - wins, -1))
    return changes


async def add_counts(connection: AsyncConnection, changes: Iterable[Change]) -> None:
    """Add the changes to ``board_counts``, one row per board and bucket (the same upsert on
    PostgreSQL and SQLite, ``server.storage.dialect``)."""
    total: Counter[tuple[str, int]] = Counter()
    for board, bucket, lines in changes:
        total[board, bucket] += lines
    rows = [
        {"board": board, "bucket": bucket, "lines": lines}
        for (board, bucket), lines in sorted(total.items())
        if lines
    ]
    if not rows:
        return
    statement = dialect.insert(connection, _COUNTS)
    await connection.execute(
        statement.on_conflict_do_update(
            index_elements=[_COUNTS.c.board, _COUNTS.c.bucket],
            set_={"lines": _COUNTS.c.lines + statement.excluded.lines},
        ),
        rows,
    )


def lines_below(bucket: BindParameter[int]) -> ColumnElement[int]:
    """How many lines of the boards ``:boards`` (a list of keys) are in the buckets below
    ``bucket``: a scalar subquery, for a statement that reads several ranks at once."""
    c = _COUNTS.c
    return (
        select(func.coalesce(func.sum(c.lines), 0))
        .where(c.board.in_(bindparam("boards", expanding=True)), c.bucket < bucket)
        .scalar_subquery()
    )


RECOUNT = f"""
INSERT INTO board_counts (board, bucket, lines)
SELECT 'fastest:' || rule_set, time_ms / {WIN_WIDTH}, count(*)
FROM entries WHERE status = 'won' AND ranked
GROUP BY rule_set, time_ms / {WIN_WIDTH}
UNION ALL
SELECT 'fastest:' || rule_set || ':' || CAST(finish_day AS VARCHAR), time_ms / {WIN_WIDTH},
       count(*)
FROM entries WHERE status = 'won' AND ranked
GROUP BY rule_set, finish_day, time_ms / {WIN_WIDTH}
UNION ALL
SELECT 'wins:' || rule_set, minus_wins, count(*)
FROM player_wins GROUP BY rule_set, minus_wins
UNION ALL
SELECT 'deal:' || rule_set || ':' || seed, standing / {STANDING_WIDTH}, count(*)
FROM entries WHERE standing IS NOT NULL
GROUP BY rule_set, seed, standing / {STANDING_WIDTH}
UNION ALL
SELECT 'daily:' || rule_set || ':' || CAST(daily_day AS VARCHAR), standing / {STANDING_WIDTH},
       count(*)
FROM entries WHERE standing IS NOT NULL AND ranked AND daily_day IS NOT NULL
GROUP BY rule_set, daily_day, standing / {STANDING_WIDTH}
"""
"""Every board's counts from ``entries`` and ``player_wins``. Dates are ISO text on both
databases (PostgreSQL's default DateStyle; SQLite stores them so), seeds their 20 digits."""


async def recount(connection: AsyncConnection) -> None:
    """Count every board again from the results (after rows were stored without
    ``record_results``, as bench/leaderboard_bench.py loads them). Migration 0007 fills the
    table with the same statement, written out there."""
    await connection.execute(_COUNTS.delete())
    await connection.execute(text(RECOUNT))


class ScoredLines(Protocol):
    """Where the lines each stored result gave are handed after its commit: the rank cache of
    several workers (``server.cluster.rank_cache.RedisRanks``)."""

    async def set_lines(self, scored: Sequence[Scored]) -> None: ...


async def hot_board_lines(
    sessions: Sessions, chunk: int
) -> AsyncIterator[tuple[Callable[[str], str], Sequence[tuple[str, str, int | None]]]]:
    """Every line of the hot boards (each rule set's all-time fastest and most wins), read in one
    transaction, in chunks of up to ``chunk`` rows, each with the function that names its
    board: (rule set, player id, minus wins) for ``wins_board``, then (rule set,
    ``<race id>:<player id>``, time) for ``fastest_board``. For a rank cache's rebuild."""
    e, w = EntryRow, PlayerWinsRow
    async with sessions.begin() as session:
        wins = await session.stream(select(w.rule_set, w.player_id, w.minus_wins))
        async for players in wins.partitions(chunk):
            yield wins_board, players
        fastest = await session.stream(
            select(e.rule_set, e.race_id + ":" + e.player_id, e.time_ms).where(
                e.status == "won", e.ranked == true()
            )
        )
        async for won in fastest.partitions(chunk):
            yield fastest_board, won
