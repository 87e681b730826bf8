"""The statements that read each leaderboard (``server.storage.leaderboards``), built once per
kind of board and kept: a board's best line of a player, its pages by key and its rank counts.

``fastest_statements`` reads the fastest board of a ``Period``, ``most_wins_statements`` the
most wins board from ``player_wins``, ``deal_statements`` and ``daily_statements`` a deal's and
a daily deal's board from ``entries``, in the order of a race's ranking.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import (
    ColumnElement,
    Select,
    bindparam,
    func,
    literal_column,
    null,
    select,
    true,
    tuple_,
    union_all,
)

from server.storage import ranks
from server.storage.models import EntryRow, PlayerRow, PlayerWinsRow

Period = Literal["today", "week", "all"]

_ENTRIES = EntryRow.__table__.c
"""The columns of ``entries``, which the time boards select as plain columns."""
_PLAYER_WINS = PlayerWinsRow.__table__.c


@dataclass(frozen=True, slots=True)
class BoardStatements:
    """A board's statements, built once per kind of board with named parameters: building a
    statement of this size costs SQLAlchemy more (~1 ms) than the database's work in it.

    ``best`` is a player's best line (``:around``); ``top`` the first ``:limit`` lines;
    ``after`` the ``:limit`` lines from a key on (``:key0``...); ``around`` those and the
    ``:above`` lines before the key, as one statement; ``ranks[n]`` the lines better than
    ``n + 1`` rank terms at once (``:bucket0``, ``:low0``, ``:term0``...). Every line comes
    with its player's ``name`` and ``bot`` mark, its ``part`` (0 before the key, 1 from it
    on) and its keys last."""

    best: Select[*tuple[Any, ...]]
    top: Select[*tuple[Any, ...]]
    after: Select[*tuple[Any, ...]]
    around: Select[*tuple[Any, ...]]
    ranks: tuple[Select[*tuple[Any, ...]], Select[*tuple[Any, ...]]]
    keys: int


def _statements(
    lines: Select[*tuple[Any, ...]],
    player: ColumnElement[str],
    order: tuple[ColumnElement[Any], ...],
    width: int,
) -> BoardStatements:
    """The statements of a board whose lines ``lines`` selects, one row per line, with
    ``player`` its player id column; ``order`` is ascending, best first, and total; its first
    term, an integer column, decides the rank (lines equal on it tie) and is counted in
    ``board_counts`` by buckets of ``width``. Every board selects from its table itself, not
    from a subquery, so that each page is one plain range of an index."""
    keys = [term.label(f"key{number}") for number, term in enumerate(order)]
    bound = tuple_(
        *(bindparam(f"key{number}", type_=term.type) for number, term in enumerate(order))
    )
    named = lines.join(PlayerRow, PlayerRow.id == player).add_columns(PlayerRow.name, PlayerRow.bot)
    after = named.add_columns(literal_column("1").label("part"), *keys).order_by(*order)
    after_key = after.where(tuple_(*order) >= bound).limit(bindparam("limit"))
    before = (
        named.add_columns(literal_column("0").label("part"), *keys)
        .where(tuple_(*order) < bound)
        .order_by(*(term.desc() for term in order))
        .limit(bindparam("above"))
    )
    both = union_all(select(before.subquery()), select(after_key.subquery())).subquery()
    rank_term = order[0]

    def better(number: int) -> ColumnElement[Any]:
        below = ranks.lines_below(bindparam(f"bucket{number}"))
        if width == 1:
            return below
        return (
            below
            + lines.with_only_columns(func.count(), maintain_column_froms=True)
            .where(rank_term >= bindparam(f"low{number}"), rank_term < bindparam(f"term{number}"))
            .scalar_subquery()
        )

    return BoardStatements(
        best=lines.with_only_columns(*keys, maintain_column_froms=True)
        .where(player == bindparam("around"))
        .order_by(*order)
        .limit(1),
        top=after.limit(bindparam("limit")),
        after=after_key,
        around=select(both).order_by(both.c.part, *(both.c[key.name] for key in keys)),
        ranks=(select(better(0)), select(better(0), better(1))),
        keys=len(keys),
    )


_E = _ENTRIES


@functools.cache
def fastest_statements(period: Period) -> BoardStatements:
    conditions = [_E.rule_set == bindparam("rule_set"), _E.status == "won", _E.ranked == true()]
    if period == "today":
        conditions.append(_E.finish_day == bindparam("today"))  # ix_entries_today, time order
    elif period == "week":
        conditions += [_E.finished_at >= bindparam("since"), _E.finished_at < bindparam("tomorrow")]
    return _statements(
        _result_lines(*conditions),
        _E.player_id,
        (_E.time_ms, _E.finished_at, _E.race_id, _E.player_id),
        ranks.WIN_WIDTH,
    )


@functools.cache
def most_wins_statements() -> BoardStatements:
    w = _PLAYER_WINS
    return _statements(
        select(w.player_id, w.wins, w.last_win_at).where(w.rule_set == bindparam("rule_set")),
        w.player_id,
        (w.minus_wins, w.last_win_at, w.player_id),
        1,
    )


_RACE_ORDER = (_E.standing, _E.finished_at, _E.race_id, _E.player_id)
"""The order of ``Race.ranking`` (``standing``: winners by time; then by cards home, most
first, then by when that count was reached); ties broken by who finished first."""


@functools.cache
def deal_statements() -> BoardStatements:
    return _statements(
        _result_lines(
            _E.rule_set == bindparam("rule_set"),
            _E.seed == bindparam("seed"),
            _E.standing.is_not(None),
            daily_day=False,
        ),
        _E.player_id,
        _RACE_ORDER,
        ranks.STANDING_WIDTH,
    )


@functools.cache
def daily_statements() -> BoardStatements:
    return _statements(
        _result_lines(
            _E.rule_set == bindparam("rule_set"),
            _E.daily_day == bindparam("day"),
            _E.ranked == true(),
            _E.standing.is_not(None),
        ),
        _E.player_id,
        _RACE_ORDER,
        ranks.STANDING_WIDTH,
    )


def _result_lines(
    *conditions: ColumnElement[bool], daily_day: bool = True
) -> Select[*tuple[Any, ...]]:
    """The entries a time board lists, with the columns its lines show; without ``daily_day``
    (which only hides a daily deal's seed) the deal board reads its index alone."""
    e = _ENTRIES
    return select(
        e.race_id,
        e.player_id,
        e.status,
        e.time_ms,
        e.on_foundations,
        e.reached_at_ms,
        e.seed,
        e.daily_day if daily_day else null().label("daily_day"),
        e.finished_at,
    ).where(*conditions)
