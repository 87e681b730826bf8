"""Leaderboards, read from the database: plain async functions over the session factory.

Leaderboards come in two shapes. The time boards (``fastest_wins``, ``deal_board``,
``daily_board``) have one ``ResultLine`` per racer per race, read from ``entries``;
``most_wins`` has one ``WinsLine`` per player, read from the counts in ``player_wins``. Lines
that tie share a rank (1, 2, 2, 4) and are listed in a fixed order: who got there first, then by
ids. Every board takes ``around``, a player id: then the lines are the ``limit`` lines around
that player's best line, which is also returned as ``me``.

Every page is one range of an index in the board's own order, and no rank counts the lines
above it: ranks come from the counts kept per bucket (``server.storage.ranks``), or from a rank
cache (``server.cluster.rank_cache``, Redis sorted sets) for the boards it holds. Either way a board
costs the same wherever the player is on it and however many results are stored. The
statements that read each board are built in ``server.storage.board_statements``.

Which results a board counts: the fastest, most wins and daily boards count only ``ranked``
results (``ranked``: secret deals, and daily deals played by identities made before the day);
a deal's board counts every result on that deal, chosen deals included.

Times: ``now`` and every timestamp are timezone-aware; "today" and a daily deal's day are UTC
days, and the "week" board counts from Monday 00:00 UTC up to the end of today (a result
stored with a later finish, which only a clock set back could give, waits for its day).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Generic, TypeVar

from sqlalchemy import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage import ranks
from server.storage.board_statements import (
    BoardStatements,
    Period,
    daily_statements,
    deal_statements,
    fastest_statements,
    most_wins_statements,
)
from server.storage.engine import Sessions
from server.storage.races import utc_day


@dataclass(frozen=True, slots=True)
class ResultLine:
    """A line of a time board: one racer's result in one race."""

    rank: int
    player_id: str
    name: str
    race_id: str
    status: str
    time_ms: int | None
    on_foundations: int
    reached_at_ms: int | None
    seed: int | None
    """None for a daily deal whose day is not over."""
    finished_at: datetime
    bot: bool = False
    """The player is a bot account (``players.bot``)."""


@dataclass(frozen=True, slots=True)
class WinsLine:
    rank: int
    player_id: str
    name: str
    wins: int
    last_win_at: datetime
    bot: bool = False


L = TypeVar("L", ResultLine, WinsLine)


@dataclass(frozen=True, slots=True)
class Board(Generic[L]):
    lines: list[L]
    me: L | None = None
    """With ``around``: that player's best line, if they have one on this board."""


async def fastest_wins(
    sessions: Sessions,
    rule_set: str,
    period: Period,
    limit: int,
    now: datetime,
    *,
    around: str | None = None,
    cache: ranks.RankCache | None = None,
) -> Board[ResultLine]:
    """Every ranked win of the rule set, fastest first (a player may hold several lines)."""
    today = utc_day(now)
    since = period_start(period, now)
    values: dict[str, Any] = {"rule_set": rule_set}
    days: list[date | None] = [None]
    if period == "today":
        values["today"] = today
        days = [today]
    elif since is not None:
        values["since"] = since
        values["tomorrow"] = datetime.combine(today + timedelta(days=1), time(tzinfo=UTC))
        days = [since.date() + timedelta(days=n) for n in range((today - since.date()).days + 1)]
    counted = ranks.Counted(
        tuple(ranks.fastest_board(rule_set, day) for day in days), ranks.WIN_WIDTH
    )
    return await _board(
        sessions,
        fastest_statements(period),
        values,
        counted,
        limit,
        around,
        _result_line(today),
        cache,
    )


async def most_wins(
    sessions: Sessions,
    rule_set: str,
    limit: int,
    *,
    around: str | None = None,
    cache: ranks.RankCache | None = None,
) -> Board[WinsLine]:
    """Players by their number of ranked wins; of two with as many, the one who got there first
    (whose last win is the earlier). Read from ``player_wins``, along ``ix_player_wins_board``,
    which holds this order."""
    counted = ranks.Counted((ranks.wins_board(rule_set),), 1)
    return await _board(
        sessions,
        most_wins_statements(),
        {"rule_set": rule_set},
        counted,
        limit,
        around,
        _wins_line,
        cache,
    )


async def deal_board(
    sessions: Sessions,
    rule_set: str,
    seed: int,
    limit: int,
    *,
    around: str | None = None,
    cache: ranks.RankCache | None = None,
) -> Board[ResultLine]:
    """Everyone who finished a race on this deal, ranked as a race ranks its racers: every
    result on the deal, chosen, secret or daily, ranked or not (this board is about the deal)."""
    counted = ranks.Counted((ranks.deal_board(rule_set, seed),), ranks.STANDING_WIDTH)
    return await _board(
        sessions,
        deal_statements(),
        {"rule_set": rule_set, "seed": seed},
        counted,
        limit,
        around,
        _result_line(None),
        cache,
    )


async def daily_board(
    sessions: Sessions,
    rule_set: str,
    day: date,
    limit: int,
    now: datetime,
    *,
    around: str | None = None,
    cache: ranks.RankCache | None = None,
) -> Board[ResultLine]:
    """Everyone ranked who finished that day's daily deal (identities made before the day
    began), ranked as a race ranks its racers. The seed is in the lines only once the day is
    over."""
    counted = ranks.Counted((ranks.daily_board(rule_set, day),), ranks.STANDING_WIDTH)
    return await _board(
        sessions,
        daily_statements(),
        {"rule_set": rule_set, "day": day},
        counted,
        limit,
        around,
        _result_line(utc_day(now)),
        cache,
    )


def period_start(period: Period, now: datetime) -> datetime | None:
    """When a period's board begins: 00:00 UTC today, Monday 00:00 UTC, or never."""
    today = datetime.combine(utc_day(now), time(tzinfo=UTC))
    if period == "today":
        return today
    if period == "week":
        return today - timedelta(days=today.weekday())
    return None


async def _board(
    sessions: Sessions,
    statements: BoardStatements,
    values: dict[str, Any],
    counted: ranks.Counted,
    limit: int,
    around: str | None,
    make_line: Callable[[Row[Any], str, int], L],
    cache: ranks.RankCache | None,
) -> Board[L]:
    """The top ``limit`` lines, or with ``around`` the ``limit`` lines centred on that player's
    best line, in three statements: the player's best line, the window with its names, the
    ranks (at ten million results a statement's round trip costs more than the database's
    work in it). ``values`` are the board's parameters; ``counted`` where its lines are
    counted.

    Pages are read by key, never by OFFSET: the lines before a key are the first ones below it
    in descending order, so a page costs the lines it returns, wherever it is on the board. Where
    fewer than half a window are above the player, the window is the top of the board, read
    then by a fourth statement (and no rank needs counting). A line's rank is one more than
    the number of lines strictly better (``_better``): for a window that does not start at the
    top, that is found for its first line and for the first line that does not tie with it;
    from there on, a line that ties with none before it is ranked by its place. Every term of
    the order is non-null on a board's lines."""
    if limit < 1:
        raise ValueError(f"a board shows at least one line, not {limit}")
    above_limit = (limit - 1) // 2
    async with sessions.begin() as session:
        connection = await session.connection()
        mine: tuple[Any, ...] | None = None
        if around is not None:
            best = (await connection.execute(statements.best, {**values, "around": around})).first()
            mine = None if best is None else tuple(best)
        rows: Sequence[Row[Any]] = []
        above = 0
        if mine is not None:
            window = {
                **values,
                "limit": limit - above_limit,
                "above": above_limit,
                **{f"key{number}": value for number, value in enumerate(mine)},
            }
            rows = (
                await connection.execute(
                    statements.around if above_limit else statements.after, window
                )
            ).all()
            above = sum(1 for row in rows if row.part == 0)
        if mine is None or above < above_limit and len(rows) - above == limit - above_limit:
            # From the top: no player, or fewer lines above them than half a window and more
            # below than the window holds.
            rows = (await connection.execute(statements.top, {**values, "limit": limit})).all()
        full_keys = [tuple(row)[-statements.keys :] for row in rows]
        terms = [key[0] for key in full_keys]
        known = {0: 1}
        if mine is not None and rows and above == above_limit:  # lines may be above it
            second = next((n for n, term in enumerate(terms) if term != terms[0]), None)
            numbers = (0,) if second is None else (0, second)
            better = await _better(
                connection,
                statements,
                values,
                counted,
                [terms[number] for number in numbers],
                cache,
            )
            known = {number: 1 + lines for number, lines in zip(numbers, better, strict=True)}
    made = [
        make_line(row, row.name, rank) for row, rank in zip(rows, _ranks(terms, known), strict=True)
    ]
    me = next((line for line, key in zip(made, full_keys, strict=True) if key == mine), None)
    return Board(made, me)


async def _better(
    connection: AsyncConnection,
    statements: BoardStatements,
    values: dict[str, Any],
    counted: ranks.Counted,
    terms: list[int],
    cache: ranks.RankCache | None,
) -> list[int]:
    """How many lines of the board rank strictly better than each of ``terms``: from the cache
    if it holds the board, else, in one statement, the counts of the buckets below each term's
    plus the lines of its own bucket below it (one short range of the board's index)."""
    if cache is not None:
        cached = await cache.lines_below(counted.boards, terms)
        if cached is not None:
            return cached
    asked = {**values, "boards": list(counted.boards)}
    for number, term in enumerate(terms):
        bucket = counted.bucket(term)
        asked |= {
            f"bucket{number}": bucket,
            f"low{number}": bucket * counted.width,
            f"term{number}": term,
        }
    row = (await connection.execute(statements.ranks[len(terms) - 1], asked)).one()
    return [int(lines) for lines in row]


def _ranks(terms: Sequence[Any], known: dict[int, int]) -> list[int]:
    """The ranks of consecutive lines, given their rank terms and the ranks ``known`` of some
    (the first among them): a line that ties with the one before shares its rank; any other
    is ranked by its place, counted from the last line whose rank is known."""
    made: list[int] = []
    last = 0
    for number, term in enumerate(terms):
        if number in known:
            last = number
            made.append(known[number])
        elif term == terms[number - 1]:
            made.append(made[-1])
        else:
            made.append(known[last] + number - last)
    return made


def _result_line(today: date | None) -> Callable[[Row[Any], str, int], ResultLine]:
    """Makes time board lines; given ``today``, a daily deal's seed waits for its day's end."""

    def make(row: Row[Any], name: str, rank: int) -> ResultLine:
        hidden = today is not None and row.daily_day is not None and row.daily_day >= today
        return ResultLine(
            rank=rank,
            player_id=row.player_id,
            name=name,
            race_id=row.race_id,
            status=row.status,
            time_ms=row.time_ms,
            on_foundations=row.on_foundations,
            reached_at_ms=row.reached_at_ms,
            seed=None if hidden else row.seed,
            finished_at=row.finished_at,
            bot=row.bot,
        )

    return make


def _wins_line(row: Row[Any], name: str, rank: int) -> WinsLine:
    return WinsLine(
        rank=rank,
        player_id=row.player_id,
        name=name,
        wins=row.wins,
        last_win_at=row.last_win_at,
        bot=row.bot,
    )
