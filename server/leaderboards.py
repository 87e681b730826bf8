"""Leaderboards, read from the database: plain async functions over the session factory.

Leaderboards come in two shapes. The time boards (``fastest_wins``, ``deal_board``,
``daily_board``) have one ``ResultLine`` per racer per race, read from ``entries``;
``most_wins`` has one ``WinsLine`` per player, read from the counts in ``player_wins``. Lines
that tie share a rank (1, 2, 2, 4) and are listed in a fixed order: who got there first, then by
ids. Every board takes ``around``, a player id: then the lines are the ``limit`` lines around
that player's best line, which is also returned as ``me``.

Every page is one range of an index in the board's own order, and no rank counts the lines
above it: ranks come from the counts kept per bucket (``server.ranks``), or from a rank cache
(``server.rank_cache``, Redis sorted sets) for the boards it holds. Either way a board costs the
same wherever the player is on it and however many results are stored.

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
from typing import Any, Generic, Literal, TypeVar

from sqlalchemy import (
    ColumnElement,
    Label,
    Row,
    Select,
    func,
    literal,
    null,
    select,
    true,
    tuple_,
)
from sqlalchemy.ext.asyncio import AsyncSession

from server import ranks
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
                       now: datetime, *, around: str | None = None,
        cache: ranks.RankCache | None = None) -> Board[ResultLine]:
    """Every ranked win of the rule set, fastest first (a player may hold several lines)."""
    e, today = _ENTRIES, utc_day(now)
    conditions = [e.rule_set == rule_set, e.status == "won", e.ranked == true()]
    since = period_start(period, now)
    days: list[date | None] = [None]
    if period == "today":
        conditions.append(e.finish_day == today)  # along ix_entries_today, in time order
        days = [today]
    elif since is not None:
        tomorrow = datetime.combine(today + timedelta(days=1), time(tzinfo=UTC))
        conditions += [e.finished_at >= since, e.finished_at < tomorrow]
        days = [since.date() + timedelta(days=n) for n in range((today - since.date()).days + 1)]
    order = (e.time_ms, e.finished_at, e.race_id, e.player_id)
    counted = ranks.Counted(tuple(ranks.fastest_board(rule_set, day) for day in days),
                            ranks.WIN_WIDTH)
    return await _board(sessions, _Query(_result_lines(*conditions), e.player_id, order, counted),
                        limit, around, _result_line(today), cache)


async def most_wins(sessions: Sessions, rule_set: str, limit: int, *,
                    around: str | None = None,
        cache: ranks.RankCache | None = None) -> Board[WinsLine]:
    """Players by their number of ranked wins; of two with as many, the one who got there first
    (whose last win is the earlier). Read from ``player_wins``, along ``ix_player_wins_board``,
    which holds this order."""
    w = _PLAYER_WINS
    lines = select(w.player_id, w.wins, w.last_win_at).where(w.rule_set == rule_set)
    order = (w.minus_wins, w.last_win_at, w.player_id)
    counted = ranks.Counted((ranks.wins_board(rule_set),), 1)
    return await _board(sessions, _Query(lines, w.player_id, order, counted), limit, around,
                        _wins_line, cache)


async def deal_board(sessions: Sessions, rule_set: str, seed: int, limit: int, *,
                     around: str | None = None,
        cache: ranks.RankCache | None = None) -> Board[ResultLine]:
    """Everyone who finished a race on this deal, ranked as a race ranks its racers: every
    result on the deal, chosen, secret or daily, ranked or not (this board is about the deal)."""
    lines = _result_lines(EntryRow.rule_set == rule_set, EntryRow.seed == seed,
                          EntryRow.standing.is_not(None), daily_day=False)
    counted = ranks.Counted((ranks.deal_board(rule_set, seed),), ranks.STANDING_WIDTH)
    return await _board(sessions, _race_order(lines, counted), limit, around, _result_line(None),
                        cache)


async def daily_board(sessions: Sessions, rule_set: str, day: date, limit: int, now: datetime,
                      *, around: str | None = None,
        cache: ranks.RankCache | None = None) -> Board[ResultLine]:
    """Everyone ranked who finished that day's daily deal (identities made before the day
    began), ranked as a race ranks its racers. The seed is in the lines only once the day is
    over."""
    lines = _result_lines(EntryRow.rule_set == rule_set, EntryRow.daily_day == day,
                          EntryRow.ranked == true(), EntryRow.standing.is_not(None))
    counted = ranks.Counted((ranks.daily_board(rule_set, day),), ranks.STANDING_WIDTH)
    return await _board(sessions, _race_order(lines, counted), limit, around,
                        _result_line(utc_day(now)), cache)


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
    column; ``order`` is ascending, best first, and total; its first term, an integer column,
    decides the rank (lines equal on it tie), and ``counted`` says where its lines are counted
    by buckets of that term. Every board selects from its table itself, not from a subquery,
    so that a page is one plain indexed query (and cheap to build)."""

    lines: Select[*tuple[Any, ...]]
    player: ColumnElement[str]
    order: tuple[ColumnElement[Any], ...]
    counted: ranks.Counted


def _result_lines(*conditions: ColumnElement[bool],
                  daily_day: bool = True) -> Select[*tuple[Any, ...]]:
    """The entries a time board lists, with the columns its lines show; without ``daily_day``
    (which only hides a daily deal's seed) the deal board reads its index alone."""
    e = _ENTRIES
    return select(e.race_id, e.player_id, e.status, e.time_ms, e.on_foundations,
                  e.reached_at_ms, e.seed, e.daily_day if daily_day else null().label("daily_day"),
                  e.finished_at).where(*conditions)


def _race_order(lines: Select[*tuple[Any, ...]], counted: ranks.Counted) -> _Query:
    """The order of ``Race.ranking`` (``standing``: winners by time; then by cards home, most
    first, then by when that count was reached); ties broken by who finished first."""
    e = _ENTRIES
    return _Query(lines, e.player_id, (e.standing, e.finished_at, e.race_id, e.player_id),
                  counted)


async def _board(sessions: Sessions, query: _Query, limit: int, around: str | None,
                 make_line: Callable[[Row[Any], str, int], L],
                 cache: ranks.RankCache | None) -> Board[L]:
    """The top ``limit`` lines, or with ``around`` the ``limit`` lines centred on that player's
    best line.

    Pages are read by key, never by OFFSET: the lines before a key are the first ones below it
    in descending order, so a page costs the lines it returns (plus a sort where no index gives
    the order), wherever it is on the board; names are then read for those lines alone. A
    line's rank is one more than the number of lines strictly better (``_better``): for a
    window that does not start at the top, that is found for its first line and for the first
    line that does not tie with it; from there on, a line that ties with none before it is
    ranked by its place. Every term of the order is non-null on a board's lines."""
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
        terms = [key[0] for key in full_keys]
        known = {0: 1}
        if mine is not None and above == above_limit and rows:
            second = next((n for n, term in enumerate(terms) if term != terms[0]), None)
            for number in (0,) if second is None else (0, second):
                known[number] = 1 + await _better(session, query, terms[number], cache)
        names: dict[str, str] = {player_id: name for player_id, name in (await session.execute(
            select(PlayerRow.id, PlayerRow.name)
            .where(PlayerRow.id.in_({row.player_id for row in rows})))).all()} if rows else {}
    made = [make_line(row, names[row.player_id], rank)
            for row, rank in zip(rows, _ranks(terms, known), strict=True)]
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


async def _better(session: AsyncSession, query: _Query, term: int,
                  cache: ranks.RankCache | None) -> int:
    """How many lines of the board rank strictly better than ``term``: from the cache if it
    holds the board, else the counts of the buckets below ``term``'s plus the lines of its own
    bucket below it (one short range of the board's index)."""
    counted = query.counted
    if cache is not None:
        cached = await cache.lines_below(counted.boards, term)
        if cached is not None:
            return cached
    bucket = counted.bucket(term)
    below = await ranks.lines_below(session, counted, bucket)
    if counted.width == 1:
        return below
    rank_term = query.order[0]
    inside = await session.scalar(query.lines.with_only_columns(
        func.count(), maintain_column_froms=True).where(
        rank_term >= bucket * counted.width, rank_term < term))
    return below + int(inside or 0)


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
            rank=rank, player_id=row.player_id, name=name, race_id=row.race_id,
            status=row.status, time_ms=row.time_ms, on_foundations=row.on_foundations,
            reached_at_ms=row.reached_at_ms, seed=None if hidden else row.seed,
            finished_at=row.finished_at)

    return make


def _wins_line(row: Row[Any], name: str, rank: int) -> WinsLine:
    return WinsLine(rank=rank, player_id=row.player_id, name=name, wins=row.wins,
                    last_win_at=row.last_win_at)
