"""Inserts that meet a row already stored, on PostgreSQL and SQLite alike.

Both databases write the same SQL for it (``INSERT ... ON CONFLICT (key) DO NOTHING``, or
``DO UPDATE`` for a count added to), but SQLAlchemy gives each dialect an insert construct of
its own: ``insert`` picks the connection's, once for the whole store. ``insert_or_ignore`` and
``insert_new`` are the common case, a row skipped when its primary key is taken, which makes an
insert safe to retry.
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Table, inspect
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage.models import Base


def insert(connection: AsyncConnection, table: Table) -> postgresql.Insert | sqlite.Insert:
    """An insert into ``table`` in the connection's dialect, which can say what to do when a row
    meets one already stored (``on_conflict_do_nothing``, ``on_conflict_do_update``)."""
    dialect = connection.dialect.name
    if dialect == "postgresql":
        return postgresql.insert(table)
    if dialect == "sqlite":
        return sqlite.insert(table)
    raise NotImplementedError(f"insert on conflict is not written for {dialect}")


def insert_or_ignore(
    connection: AsyncConnection, model: type[Base]
) -> postgresql.Insert | sqlite.Insert:
    """An insert that skips a row whose primary key is taken, in the connection's dialect."""
    return insert(connection, cast(Table, model.__table__)).on_conflict_do_nothing(
        index_elements=inspect(model).primary_key
    )


async def insert_new(
    connection: AsyncConnection, model: type[Base], rows: list[dict[str, Any]]
) -> None:
    """Insert the rows whose primary key is not taken yet. The rows are plain column values:
    nothing is loaded into a session."""
    if not rows:
        return
    # A Core insert on the connection: the ORM's bulk insert path costs more than the statement.
    await connection.execute(insert_or_ignore(connection, model), rows)
