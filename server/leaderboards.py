"""Leaderboards, read from the database: plain async functions over the session factory.

Leaderboards come in two shapes. The time boards (``fastest_wins``, ``deal_board``,
``daily_board``) have one ``ResultLine`` per racer per race, read from ``entries``;
``most_wins`` has one ``WinsLine`` per player, read from the counts in ``player_wins``. Lines
that tie share a rank (1, 2, 2, 4) and are listed in a fixed order: who got there first, then by
ids. Every board takes ``around``, a player id: then the lines are the ``limit`` lines around
that player's best line, which is also returned as ``me``.

Which results a board counts: the fastest, most wins and daily boards count only ``ranked``
results (``ranked``: secret deals, and daily deals played by identities made before the day);
a deal's board counts every result on that deal, chosen deals included.

Times: ``now`` and every timestamp are timezone-aware; "today" and a daily deal's day are UTC
days, and the "week" board counts from Monday 00:00 UTC.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Generic, Literal, TypeVar

from sqlalchemy import (
    ColumnElement,
    Label,
    Row,
    Select,
    case,
    func,
    literal,
    null,
    select,
    true,
    tuple_,
)
from sqlalchemy.ext.asyncio import AsyncSession

from server.db import (
    EntryRow,
    PlayerRow,
    PlayerWinsRow,
)
from server.store import Sessions, utc_day

Period = Literal["today", "week", "all"]


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


@dataclass(frozen=True, slots=True)
class WinsLine:
    rank: int
    player_id: str
    name: str
    wins: int
    last_win_at: datetime


L = TypeVar("L", ResultLine, WinsLine)
_ENTRIES = EntryRow.__table__.c
"""The columns of ``entries``, which the time boards select as plain columns."""
_PLAYER_WINS = PlayerWinsRow.__table__.c


@dataclass(frozen=True, slots=True)
class Board(Generic[L]):
    lines: list[L]
    me: L | None = None
    """With ``around``: that player's best line, if they have one on this board."""


async def fastest_wins(sessions: Sessions, rule_set: str, period: Period, limit: int,
                       now: datetime, *, around: str | None = None) -> Board[ResultLine]:
    """Every ranked win of the rule set, fastest first (a player may hold several lines)."""
    conditions = [EntryRow.rule_set == rule_set, EntryRow.status == "won",
                  EntryRow.ranked == true()]
    since = period_start(period, now)
    if since is not None:
        conditions.append(EntryRow.finished_at >= since)
    e = _ENTRIES
    order = (e.time_ms, e.finished_at, e.race_id, e.player_id)
    return await _board(sessions, _Query(_result_lines(*conditions), e.player_id, order, ties=1),
                        limit, around, _result_line(utc_day(now)))


async def most_wins(sessions: Sessions, rule_set: str, limit: int, *,
                    around: str | None = None) -> Board[WinsLine]:
    """Players by their number of ranked wins; of two with as many, the one who got there first
    (whose last win is the earlier). Read from ``player_wins``, along ``ix_player_wins_board``,
    which holds this order."""
    w = _PLAYER_WINS
    lines = select(w.player_id, w.wins, w.last_win_at).where(w.rule_set == rule_set)
    order = (w.minus_wins, w.last_win_at, w.player_id)
    return await _board(sessions, _Query(lines, w.player_id, order, ties=1), limit, around,
                        _wins_line)


async def deal_board(sessions: Sessions, rule_set: str, seed: int, limit: int, *,
                     around: str | None = None) -> Board[ResultLine]:
    """Everyone who finished a race on this deal, ranked as a race ranks its racers: every
    result on the deal, chosen, secret or daily, ranked or not (this board is about the deal)."""
    lines = _result_lines(EntryRow.rule_set == rule_set, EntryRow.seed == seed,
                          EntryRow.rank.is_not(None), daily_day=False)
    return await _board(sessions, _race_order(lines), limit, around, _result_line(None))


async def daily_board(sessions: Sessions, rule_set: str, day: date, limit: int, now: datetime,
                      *, around: str | None = None) -> Board[ResultLine]:
    """Everyone ranked who finished that day's daily deal (identities made before the day
    began), ranked as a race ranks its racers. The seed is in the lines only once the day is
    over."""
    lines = _result_lines(EntryRow.rule_set == rule_set, EntryRow.daily_day == day,
                          EntryRow.rank.is_not(None), EntryRow.ranked == true())
    return await _board(sessions, _race_order(lines), limit, around, _result_line(utc_day(now)))


def period_start(period: Period, now: datetime) -> datetime | None:
    """When a period's board begins: 00:00 UTC today, Monday 00:00 UTC, or never."""
    today = datetime.combine(utc_day(now), time(tzinfo=UTC))
    if period == "today":
        return today
    if period == "week":
        return today - timedelta(days=today.weekday())
    return None


@dataclass(frozen=True, slots=True)
class _Query:
    """A board as a query: ``lines`` selects one row per line, ``player`` is its player id
    column; ``order`` is ascending, best first, and total; its first ``ties`` terms decide the
    rank. Every board selects from its table itself, not from a subquery, so that a page is
    one plain indexed query (and cheap to build)."""

    lines: Select[*tuple[Any, ...]]
    player: ColumnElement[str]
    order: tuple[ColumnElement[Any], ...]
    ties: int


def _result_lines(*conditions: ColumnElement[bool],
                  daily_day: bool = True) -> Select[*tuple[Any, ...]]:
    """The entries a time board lists, with the columns its lines show; without ``daily_day``
    (which only hides a daily deal's seed) the deal board reads its index alone."""
    e = _ENTRIES
    return select(e.race_id, e.player_id, e.status, e.time_ms, e.on_foundations,
                  e.reached_at_ms, e.seed, e.daily_day if daily_day else null().label("daily_day"),
                  e.finished_at).where(*conditions)


def _race_order(lines: Select[*tuple[Any, ...]]) -> _Query:
    """The order of ``Race.ranking``: winners by time; then by cards home (most first), then by
    when that count was reached; ties broken by who finished first."""
    e = _ENTRIES
    won = e.status == "won"
    order = (case((won, 0), else_=1), case((won, e.time_ms), else_=0), -e.on_foundations,
             func.coalesce(e.reached_at_ms, 0), e.finished_at, e.race_id, e.player_id)
    return _Query(lines, e.player_id, order, ties=4)


async def _board(sessions: Sessions, query: _Query, limit: int, around: str | None,
                 make_line: Callable[[Row[Any], str, int], L]) -> Board[L]:
    """The top ``limit`` lines, or with ``around`` the ``limit`` lines centred on that player's
    best line.

    Pages are read by key, never by OFFSET: the lines before a key are the first ones below it
    in descending order, so a page costs the lines it returns (plus a sort where no index gives
    the order), wherever it is on the board; names are then read for those lines alone. A
    line's rank is one more than the number of lines strictly better: for a window that does
    not start at the top, one count finds the first line's position and rank, and the window's
    position gives the rest. Every term of the order is non-null on a board's lines."""
    if limit < 1:
        raise ValueError(f"a board shows at least one line, not {limit}")
    keys = [term.label(f"key{number}") for number, term in enumerate(query.order)]
    above_limit = (limit - 1) // 2
    async with sessions.begin() as session:
        mine: tuple[Any, ...] | None = None
        rows: list[Row[Any]] = []
        if around is not None:
            best = (await session.execute(
                query.lines.with_only_columns(*keys, maintain_column_froms=True)
                .where(query.player == around).order_by(*query.order).limit(1))).first()
            if best is not None:
                mine = tuple(best)
                if above_limit:
                    rows = await _page(session, query, keys, mine, above_limit, before=True)
        above = len(rows)
        rows += await _page(session, query, keys, mine, limit - above, before=False)
        full_keys = [tuple(row)[-len(keys):] for row in rows]
        tie_keys = [key[:query.ties] for key in full_keys]
        start, first_rank = 0, 1
        if mine is not None and above == above_limit and rows:
            start, better = await _count_before(session, query, full_keys[0])
            first_rank += better
        names: dict[str, str] = {player_id: name for player_id, name in (await session.execute(
            select(PlayerRow.id, PlayerRow.name)
            .where(PlayerRow.id.in_({row.player_id for row in rows})))).all()} if rows else {}
    ranks: list[int] = []
    for number, key in enumerate(tie_keys):
        if number == 0:
            ranks.append(first_rank)
        elif key == tie_keys[number - 1]:
            ranks.append(ranks[-1])
        else:
            ranks.append(start + number + 1)
    made = [make_line(row, names[row.player_id], rank)
            for row, rank in zip(rows, ranks, strict=True)]
    me = next((line for line, key in zip(made, full_keys, strict=True) if key == mine), None)
    return Board(made, me)


def _bound(terms: Sequence[ColumnElement[Any]], key: Sequence[Any]) -> ColumnElement[Any]:
    """A key as a row value, each value bound with its term's type (so that a timestamp is
    sent the way its column stores it)."""
    return tuple_(*(literal(value, term.type) for term, value in zip(terms, key, strict=True)))


async def _page(session: AsyncSession, query: _Query, keys: list[Label[Any]],
                key: tuple[Any, ...] | None, limit: int, *, before: bool) -> list[Row[Any]]:
    """Up to ``limit`` lines in board order, each with its keys last: from the top, or from
    ``key`` on (that line included), or with ``before`` the ones just before ``key``."""
    statement = query.lines.add_columns(*keys)
    if key is not None:
        order, bound = tuple_(*query.order), _bound(query.order, key)
        statement = statement.where(order < bound if before else order >= bound)
    statement = statement.order_by(*(term.desc() if before else term for term in query.order))
    rows = list((await session.execute(statement.limit(limit))).all())
    return rows[::-1] if before else rows


async def _count_before(session: AsyncSession, query: _Query,
                        key: tuple[Any, ...]) -> tuple[int, int]:
    """How many lines sort strictly before ``key``, and how many of those are strictly better
    on the ranking terms (the first ``ties``), in one pass: those are a part of the first."""
    order, ties = query.order, query.order[:query.ties]
    better = func.count().filter(tuple_(*ties) < _bound(ties, key[:query.ties]))
    before, better_count = (await session.execute(
        query.lines.with_only_columns(func.count(), better, maintain_column_froms=True)
        .where(tuple_(*order) < _bound(order, key)))).one()
    return before or 0, better_count or 0


def _result_line(today: date | None) -> Callable[[Row[Any], str, int], ResultLine]:
    """Makes time board lines; given ``today``, a daily deal's seed waits for its day's end."""

    def make(row: Row[Any], name: str, rank: int) -> ResultLine:
        hidden = today is not None and row.daily_day is not None and row.daily_day >= today
        return ResultLine(
            rank=rank, player_id=row.player_id, name=name, race_id=row.race_id,
            status=row.status, time_ms=row.time_ms, on_foundations=row.on_foundations,
            reached_at_ms=row.reached_at_ms, seed=None if hidden else row.seed,
            finished_at=row.finished_at)

    return make


def _wins_line(row: Row[Any], name: str, rank: int) -> WinsLine:
    return WinsLine(rank=rank, player_id=row.player_id, name=name, wins=row.wins,
                    last_win_at=row.last_win_at)
