"""Connecting to the database: the engine, the session factory, and the schema's migrations.

The caller makes one engine and one session factory (``make_engine``, ``make_sessionmaker``) at
start-up; nothing connects at import time. The schema itself is created by the Alembic
migrations in ``migrations/`` (``upgrade_database``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import event, make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

Sessions = async_sessionmaker[AsyncSession]

ALEMBIC_INI = Path(__file__).resolve().parents[2] / "alembic.ini"


def make_engine(url: str) -> AsyncEngine:
    """An engine for an async URL (``Settings.database_url``).

    On SQLite, every connection enforces foreign keys (off by default there) and uses write-ahead
    logging, so readers do not wait for the writer; a write waits up to 5 s for a lock held by
    another connection (sqlite3's default busy timeout), then fails. The server writes only
    through ``server.storage.writer``, one write at a time, so no write of its own waits for
    another; a lock held by someone else fails the write, and the writer retries it.

    On PostgreSQL (asyncpg), the database may go away and come back while the server runs:
    every pooled connection is checked before use (``pool_pre_ping``), so one that died
    meanwhile is replaced instead of failing the next request; and connecting times out after
    5 s and any one statement after 10 s, so a database that stops answering (a network cut
    that drops packets rather than refusing them) fails the writes, which ``server.storage.writer``
    then retries and reports, rather than hanging them unreported.

    Statement parameters are kept out of error messages (``hide_parameters``): those reach the
    log and /healthz, and the parameters of a failed write are player ids and the moves, which
    name cards, of races in progress.
    """
    driver = make_url(url).get_driver_name()
    if driver == "asyncpg":
        return create_async_engine(
            url,
            hide_parameters=True,
            pool_pre_ping=True,
            connect_args={"timeout": 5.0, "command_timeout": 10.0},
        )
    engine = create_async_engine(url, hide_parameters=True)
    if engine.dialect.name == "sqlite":
        event.listen(engine.sync_engine, "connect", _configure_sqlite)
    return engine


def _configure_sqlite(connection: Any, record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.execute("PRAGMA journal_mode = WAL")
    cursor.close()


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


async def upgrade_database(url: str) -> None:
    """``alembic upgrade head`` on ``url``. Alembic's async environment runs its own event loop,
    so it runs in a worker thread, which keeps this usable from a running loop."""
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))  # ini-style escaping
    await asyncio.to_thread(command.upgrade, config, "head")
