"""The hot path's SQL (server/storage/moves.py), written once as the driver takes it, is the SQL
SQLAlchemy makes for the same statements (``holding.stale``'s update, the insert that skips a
stored move), on SQLite and on PostgreSQL; what it does is tested through ``MoveRecorder`` in
test_holding.py and by every race the server tests run."""

from __future__ import annotations

from typing import cast

import pytest
from sqlalchemy import Table, tuple_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Dialect

from server.storage.models import MoveRow, RaceRow
from server.storage.moves import INSERT_MOVES, still_held

RACES = cast(Table, RaceRow.__table__)
MOVES = cast(Table, MoveRow.__table__)
DIALECTS: dict[str, Dialect] = {
    "qmark": sqlite.dialect(),
    "numeric_dollar": postgresql.asyncpg.dialect(),  # type: ignore[no-untyped-call]
}


@pytest.mark.parametrize("paramstyle", DIALECTS)
@pytest.mark.parametrize("races", [1, 3])
def test_still_held_is_the_update_holding_stale_makes(paramstyle: str, races: int) -> None:
    statement = (
        update(RACES)
        .where(tuple_(RACES.c.id, RACES.c.holder_epoch).in_([(f"r{n}", n) for n in range(races)]))
        .values(holder_epoch=RACES.c.holder_epoch)
        .returning(RACES.c.id)
    )
    compiled = statement.compile(
        dialect=DIALECTS[paramstyle], compile_kwargs={"render_postcompile": True}
    )
    assert still_held(paramstyle, races) == str(compiled)


@pytest.mark.parametrize("paramstyle", DIALECTS)
def test_the_insert_is_the_one_that_skips_a_stored_move(paramstyle: str) -> None:
    dialect_insert = sqlite.insert if paramstyle == "qmark" else postgresql.insert
    statement = dialect_insert(MOVES).on_conflict_do_nothing(
        index_elements=[MOVES.c.race_id, MOVES.c.player_id, MOVES.c.index]
    )
    assert INSERT_MOVES[paramstyle] == str(statement.compile(dialect=DIALECTS[paramstyle]))


def test_an_unknown_parameter_style_is_refused() -> None:
    with pytest.raises(NotImplementedError):
        still_held("pyformat", 1)
