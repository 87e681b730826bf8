"""Alembic environment: runs the migrations over an asyncio connection.

The URL is ``sqlalchemy.url`` from the Alembic config when the caller set one (as
``server.storage.engine.upgrade_database`` and the tests do), otherwise ``Settings().database_url``
(the ``PATIENCE_RACE_DATABASE_URL`` environment variable). Constraint names come from the
models' naming convention, so every database gets the same names.

Several servers may start at once on one database (machines after a deploy): on PostgreSQL
each upgrade first takes an advisory lock, so they migrate one after the other and the later
ones find the database at head, rather than creating the same tables together and failing.
"""

from __future__ import annotations

import asyncio
from logging.config import fileConfig

from alembic import context
from sqlalchemy import pool, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from server.settings import Settings, async_url
from server.storage.models import Base

MIGRATION_LOCK = 0x70617469656E6365
"""The PostgreSQL advisory lock an upgrade holds until it commits (any constant: "patience")."""

config = context.config
target_metadata = Base.metadata

# Logging is set up from alembic.ini only for the `alembic` command: a program that calls
# upgrade_database keeps its own logging configuration.
if config.cmd_opts is not None and config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def database_url() -> str:
    return async_url(config.get_main_option("sqlalchemy.url") or Settings().database_url)


def run_migrations_offline() -> None:
    """Write the SQL to standard output instead of running it (``alembic upgrade --sql``)."""
    context.configure(
        url=database_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def do_run_migrations(connection: Connection) -> None:
    # Batch mode lets later migrations alter tables on SQLite, which has little ALTER TABLE.
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":  # released when the transaction ends
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        context.run_migrations()


async def run_async_migrations() -> None:
    engine = create_async_engine(database_url(), poolclass=pool.NullPool)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(do_run_migrations)
    finally:
        await engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    asyncio.run(run_async_migrations())
