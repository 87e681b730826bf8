"""Database fixtures for the server tests: real databases, SQLite and PostgreSQL.

``database_kind`` is parametrized over both. The PostgreSQL case needs the variable
PATIENCE_RACE_TEST_POSTGRES_URL, a server where that user may create databases (CI sets
``postgresql+asyncpg://postgres@127.0.0.1/test``); without it those tests are skipped. Every
database is a throwaway one: a file in a temporary directory, or a uniquely named PostgreSQL
database, dropped at the end.

- ``database_url``: one database per kind for the session, migrated with ``alembic upgrade
  head``; ``sessions`` empties it before each test, so tests do not see each other's rows.
- ``sessions``: the session factory the store functions take.
- ``empty_database_url``: a fresh database with no tables, for migration tests.
- ``server``: the real server on an ephemeral port, on the emptied ``database_url``.
- ``writer``: the database writer, started, on the emptied ``database_url``: what a
  ``RoomHost`` or a ``Gateway`` of a test's own writes through.
- ``redis_url``: a Redis server (PATIENCE_RACE_TEST_REDIS_URL), for the tests of several
  workers; without it every test that needs it, directly or through another fixture, is
  skipped at collection, before any of its fixtures is built.
- ``moves_locked``: another connection holds a lock that makes every write of moves wait (a slow
  commit, as a backup or a maintenance script would cause), until the block ends.
- ``tables_locked``: the same for writes to the tables named (on SQLite, to any table).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio as redis
from sqlalchemy import make_url, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import NullPool

from server.settings import async_url
from server.storage.engine import make_engine, make_sessionmaker, upgrade_database
from server.storage.models import Base
from server.storage.moves import MoveRecorder
from server.storage.writer import Writer
from tests.server.test_server import Server, make_settings, start_server, stop_server

POSTGRES_URL_VARIABLE = "PATIENCE_RACE_TEST_POSTGRES_URL"
REDIS_URL_VARIABLE = "PATIENCE_RACE_TEST_REDIS_URL"


async def drop_redis_keys(url: str, prefix: str) -> None:
    """Delete what a test's servers left in Redis under their key prefix."""
    connection = redis.from_url(url)
    keys = [key async for key in connection.scan_iter(f"{prefix}*")]
    if keys:
        await connection.delete(*keys)
    await connection.aclose()


REDIS_SKIP_REASON = (
    f"tests that use Redis run only when {REDIS_URL_VARIABLE} is set, "
    "e.g. to redis://127.0.0.1:6379/0"
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Without Redis, mark every test that needs ``redis_url`` (itself or through another
    fixture) skipped, so that it skips before any fixture is set up: a skip from ``redis_url``
    itself would come only after the fixtures the test names before it (a database of
    thousands of races takes minutes)."""
    if os.environ.get(REDIS_URL_VARIABLE):
        return
    for item in items:
        if "redis_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.skip(reason=REDIS_SKIP_REASON))


@pytest.fixture
def redis_url() -> str:
    """A Redis server for the tests of several workers (each uses keys of its own prefix)."""
    url = os.environ.get(REDIS_URL_VARIABLE)
    if not url:
        pytest.skip(REDIS_SKIP_REASON)
    return url


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def database_kind(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    if kind == "postgresql" and not os.environ.get(POSTGRES_URL_VARIABLE):
        pytest.skip(
            f"PostgreSQL tests run only when {POSTGRES_URL_VARIABLE} is set, e.g. to "
            "postgresql+asyncpg://postgres@127.0.0.1/test"
        )
    return kind


async def create_database(kind: str, directory: Path) -> str:
    """The URL of a new, empty database of that kind."""
    if kind == "sqlite":
        return f"sqlite+aiosqlite:///{directory / f'test-{secrets.token_hex(4)}.sqlite3'}"
    server = make_url(async_url(os.environ[POSTGRES_URL_VARIABLE]))
    name = f"patience_race_test_{secrets.token_hex(6)}"
    await postgres_admin(server.render_as_string(hide_password=False), f'CREATE DATABASE "{name}"')
    return server.set(database=name).render_as_string(hide_password=False)


async def drop_database(url: str) -> None:
    """Drop a PostgreSQL database made by ``create_database`` (SQLite files go with their
    temporary directory)."""
    database = make_url(url)
    if database.get_backend_name() == "postgresql":
        server = make_url(async_url(os.environ[POSTGRES_URL_VARIABLE]))
        await postgres_admin(
            server.render_as_string(hide_password=False),
            f'DROP DATABASE IF EXISTS "{database.database}" WITH (FORCE)',
        )


async def postgres_admin(server_url: str, statement: str) -> None:
    """Run a statement that cannot run in a transaction (CREATE/DROP DATABASE)."""
    engine = create_async_engine(server_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            await connection.execute(text(statement))
    finally:
        await engine.dispose()


@pytest.fixture(scope="session")
def database_url(database_kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # Session fixtures are set up before, and torn down after, every test's event loop.
    url = asyncio.run(create_database(database_kind, tmp_path_factory.mktemp("database")))
    try:
        asyncio.run(upgrade_database(url))
        yield url
    finally:
        asyncio.run(drop_database(url))


@pytest_asyncio.fixture
async def sessions(database_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = make_engine(database_url)
    try:
        async with engine.begin() as connection:
            for table in reversed(Base.metadata.sorted_tables):
                await connection.execute(table.delete())
        yield make_sessionmaker(engine)
    finally:
        await engine.dispose()


@pytest_asyncio.fixture
async def empty_database_url(database_kind: str, tmp_path: Path) -> AsyncIterator[str]:
    url = await create_database(database_kind, tmp_path)
    try:
        yield url
    finally:
        await drop_database(url)


@pytest_asyncio.fixture
async def server(
    sessions: async_sessionmaker[AsyncSession], database_url: str
) -> AsyncIterator[Server]:
    """The real server on an ephemeral port, on an emptied database (``sessions``)."""
    running = await start_server(make_settings(database_url))
    try:
        yield running
    finally:
        await stop_server(running)


@pytest_asyncio.fixture
async def writer(
    sessions: async_sessionmaker[AsyncSession], database_url: str
) -> AsyncIterator[Writer]:
    async with writing_to(database_url) as writing:
        yield writing


@asynccontextmanager
async def writing_to(database_url: str) -> AsyncIterator[Writer]:
    """A database writer of its own, started, as a process has one; stopped at the end."""
    engine = make_engine(database_url)
    recorder = MoveRecorder(engine)
    writing = Writer(recorder)
    writing.start()
    try:
        yield writing
    finally:
        await writing.close(5)
        await writing.stopped()
        await recorder.close()
        await engine.dispose()


@asynccontextmanager
async def moves_locked(database_url: str) -> AsyncIterator[None]:
    """Hold a lock that makes the server's writes of moves wait: on SQLite the write lock
    (``BEGIN IMMEDIATE``; hold it less than the driver's 5 s busy timeout for a slow commit
    rather than a failed one), on PostgreSQL the ``moves`` table."""
    async with tables_locked(database_url, "moves", reads=False):
        yield


@asynccontextmanager
async def tables_locked(database_url: str, *tables: str, reads: bool = True) -> AsyncIterator[None]:
    """Hold a lock that makes every write to ``tables`` wait: on SQLite the write lock of the
    whole database (``BEGIN IMMEDIATE``), on PostgreSQL those tables, still open to reads
    (``EXCLUSIVE``) or, with ``reads=False``, not (``ACCESS EXCLUSIVE``)."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        assert url.database is not None
        locker = sqlite3.connect(url.database, isolation_level=None)
        try:
            locker.execute("BEGIN IMMEDIATE")
            yield
        finally:
            if locker.in_transaction:
                locker.execute("COMMIT")
            locker.close()
        return
    mode = "EXCLUSIVE" if reads else "ACCESS EXCLUSIVE"
    engine = create_async_engine(database_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            await connection.execute(text(f"LOCK TABLE {', '.join(tables)} IN {mode} MODE"))
            try:
                yield
            finally:
                await connection.rollback()
    finally:
        await engine.dispose()
