"""The database goes away for a few seconds in the middle of a race: racing goes on.

A move is stored before it is acknowledged, so the moves made while the database is away wait
for it, unacknowledged, while the writer (server/storage/writer.py) retries; the connections and the
race stay up, the server logs a warning and /healthz says "degraded" with the last error (which
names no move); once the database is back every waiting move is stored and acknowledged,
/healthz says "ok" again, and the database holds every acknowledged move exactly once.

- PostgreSQL (needs PATIENCE_RACE_TEST_POSTGRES_URL): the server reaches its database through
  a TCP proxy in this test. Cut: its connections are dropped and its port closed, so new
  connections are refused, then it listens again on the same port. Stalled: it stops passing
  bytes either way, as a network that drops packets does, so only timeouts can tell (the
  engine's statement timeout, 10 s, see server.storage.engine.make_engine).
- SQLite: another connection holds the write lock (``BEGIN EXCLUSIVE``, as a backup or a
  maintenance script would) for longer than the driver's 5 s busy timeout; a shorter lock is no
  outage at all, the writes just wait for it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import make_url, select
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool
from websockets.protocol import State

from clients.sdk import RaceClient
from server.storage.models import MoveRow
from tests.server.conftest import POSTGRES_URL_VARIABLE, create_database, drop_database
from tests.server.test_server import Server, make_settings, start_server, stop_server
from wire.protocol import MakeMove, MoveAccepted, YourView

DEAL = 424242
RULE_SET = "octagon"
MOVES_BEFORE = MOVES_AFTER = 3
"""Moves each racer makes before the outage and after it; one more is made during it."""
SQLITE_BUSY_TIMEOUT_S = 5.0
"""sqlite3's default, which aiosqlite and SQLAlchemy keep: how long a write waits for a lock."""


class Proxy:
    """A TCP proxy on 127.0.0.1 to ``host:port``. ``cut`` drops (resets) every connection
    through it and closes its port, so that new connections are refused, until ``restore``
    listens again on the same port; ``stall`` stops passing bytes, either way, on every
    connection, old and new, until ``resume``."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._ends: set[asyncio.StreamWriter] = set()
        self._flowing = asyncio.Event()
        self._flowing.set()

    @property
    def is_cut(self) -> bool:
        return self._server is None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._link, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    restore = start

    async def cut(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for end in list(self._ends):
            end.transport.abort()
        await server.wait_closed()

    async def stall(self) -> None:
        self._flowing.clear()

    async def resume(self) -> None:
        self._flowing.set()

    async def _link(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection(*self.target)
        except OSError:
            client_writer.transport.abort()
            return
        self.connections += 1
        ends = {client_writer, server_writer}
        self._ends |= ends
        try:
            await asyncio.gather(
                self._pipe(client_reader, server_writer), self._pipe(server_reader, client_writer)
            )
        finally:
            self._ends -= ends

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                await self._flowing.wait()
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.transport.abort()


@dataclass
class Racer:
    client: RaceClient
    legal: list[str]
    acknowledged: list[str] = field(default_factory=list)

    async def play(self, timeout: float = 10.0) -> MoveAccepted:
        """Make the first legal move (never resign) and wait for its acknowledgement."""
        move = next(move for move in self.legal if move != "resign")
        reply = await self.client.request(
            MakeMove.model_validate({"type": "move", "move": move}), timeout=timeout
        )
        assert isinstance(reply, MoveAccepted), reply
        assert reply.status == "in_progress", "the deal should last the whole test"
        self.legal = reply.legal_moves
        self.acknowledged.append(reply.move)
        return reply


async def open_race(server: Server) -> list[Racer]:
    clients = [await server.client(name) for name in ("Ann", "Bob")]
    room = await clients[0].create_room(RULE_SET, deal="number", number=DEAL)
    await clients[1].join(room.code)
    for client in clients:
        await client.ready()
    return [
        Racer(client, (await client.next_event(YourView)).view.legal_moves) for client in clients
    ]


async def health_becomes(server: Server, status: str, timeout: float) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        while True:
            code, health = await server.http_get("/healthz")
            if health["status"] == status:
                assert code == (200 if status == "ok" else 503)
                return dict(health)
            await asyncio.sleep(0.1)


async def race_through_an_outage(
    server: Server,
    caplog: pytest.LogCaptureFixture,
    cut: Callable[[], Awaitable[None]],
    restore: Callable[[], Awaitable[None]],
    degraded_within_s: float,
    error: str,
) -> list[Racer]:
    """Race, cut the database, move, check the server waits and says so, restore it, check
    every move is acknowledged, race on; return the racers."""
    racers = await open_race(server)
    for racer in racers:
        for _ in range(MOVES_BEFORE):
            await racer.play()
    assert (await server.http_get("/healthz"))[1]["status"] == "ok"

    await cut()
    waiting = [asyncio.create_task(racer.play(timeout=120)) for racer in racers]
    health = await health_becomes(server, "degraded", degraded_within_s)
    assert health["database"]["writes_failing"] is True
    assert health["database"]["last_error"] and error in health["database"]["last_error"]
    waiting_moves = [next(m for m in racer.legal if m != "resign") for racer in racers]
    assert not any(move in health["database"]["last_error"] for move in waiting_moves)
    await asyncio.sleep(3)  # the outage goes on: nothing is acknowledged, nobody is dropped
    assert not any(task.done() for task in waiting)
    assert all(racer.client.ws.state is State.OPEN for racer in racers)
    assert server.task.done() is False
    warnings = [
        record
        for record in caplog.records
        if record.levelno == logging.WARNING and record.name == "patience_race.writer"
    ]
    assert warnings and "database write failed, retrying" in warnings[0].getMessage()

    await restore()
    async with asyncio.timeout(30):
        acknowledged = await asyncio.gather(*waiting)
    assert [ack.moves for ack in acknowledged] == [MOVES_BEFORE + 1] * 2
    health = await health_becomes(server, "ok", 5)
    database = health["database"]
    assert (database["writes_failing"], database["last_error"], database["queued_writes"]) == (
        False,
        None,
        0,
    )
    assert database["moves_stored"] >= len(waiting) and database["move_commits"] >= 1
    assert "database writes succeed again" in caplog.text
    for racer in racers:  # the race goes on as if nothing happened
        for _ in range(MOVES_AFTER):
            await racer.play()
    return racers


async def assert_stored_exactly_once(database_url: str, racers: list[Racer]) -> None:
    engine = create_async_engine(database_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            stored = (
                await connection.execute(
                    select(MoveRow.player_id, MoveRow.index, MoveRow.text).order_by(
                        MoveRow.player_id, MoveRow.index
                    )
                )
            ).all()
    finally:
        await engine.dispose()
    for racer in racers:
        mine = [(index, text) for player, index, text in stored if player == racer.client.player_id]
        assert mine == list(enumerate(racer.acknowledged))
    assert len(stored) == sum(len(racer.acknowledged) for racer in racers)
    assert len(stored) == 2 * (MOVES_BEFORE + 1 + MOVES_AFTER)


needs_postgresql = pytest.mark.skipif(
    not os.environ.get(POSTGRES_URL_VARIABLE),
    reason=f"needs PostgreSQL: set {POSTGRES_URL_VARIABLE}, e.g. to "
    "postgresql+asyncpg://postgres@127.0.0.1/test",
)


@needs_postgresql
@pytest.mark.parametrize(
    ("outage", "degraded_within_s", "error"),
    [
        ("cut", 5.0, ""),
        ("stall", 10.0 + 5.0, "TimeoutError"),
    ],
    ids=["cut", "stall"],
)
async def test_racing_goes_on_through_a_postgresql_outage(
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
    outage: str,
    degraded_within_s: float,
    error: str,
) -> None:
    caplog.set_level(logging.INFO, logger="patience_race")
    database_url = await create_database("postgresql", tmp_path)
    try:
        racers, connections = await outage_through_a_proxy(
            caplog, database_url, outage, degraded_within_s, error
        )
        if outage == "cut":
            assert connections[1] > connections[0], "the server connected again"
        await assert_stored_exactly_once(database_url, racers)
    finally:
        await drop_database(database_url)


async def outage_through_a_proxy(
    caplog: pytest.LogCaptureFixture,
    database_url: str,
    outage: str,
    degraded_within_s: float,
    error: str,
) -> tuple[list[Racer], tuple[int, int]]:
    """The race through an outage of the proxy, with how many connections it had passed
    before the database came back and in all."""
    database = make_url(database_url)
    proxy = Proxy(database.host or "127.0.0.1", database.port or 5432)
    connections_before = 0
    end = proxy.restore if outage == "cut" else proxy.resume

    async def restore() -> None:
        nonlocal connections_before
        connections_before = proxy.connections
        await end()

    await proxy.start()
    try:
        server = await start_server(
            make_settings(
                database.set(host="127.0.0.1", port=proxy.port).render_as_string(
                    hide_password=False
                )
            )
        )
        try:
            racers = await race_through_an_outage(
                server,
                caplog,
                proxy.cut if outage == "cut" else proxy.stall,
                restore,
                degraded_within_s,
                error,
            )
        finally:  # the database back, so that the server can store everything and stop
            if proxy.is_cut:
                await proxy.restore()
            await proxy.resume()
            await asyncio.wait_for(stop_server(server), 60)
    finally:
        await proxy.cut()
    return racers, (connections_before, proxy.connections)


@needs_postgresql
async def test_after_a_quiet_postgresql_outage_the_first_requests_are_served(
    tmp_path: Path,
) -> None:
    """The database went away and came back while nobody asked anything: the connections
    pooled before are dead, and are replaced before use, not handed to the next request (which
    would fail, and the server closes a connection whose request fails)."""
    database_url = await create_database("postgresql", tmp_path)
    database = make_url(database_url)
    proxy = Proxy(database.host or "127.0.0.1", database.port or 5432)
    try:
        await proxy.start()
        server = await start_server(
            make_settings(
                database.set(host="127.0.0.1", port=proxy.port).render_as_string(
                    hide_password=False
                )
            )
        )
        try:
            ann = await server.client("Ann")
            await ann.leaderboard(RULE_SET)
            await proxy.cut()
            await proxy.restore()
            board = await ann.leaderboard(RULE_SET)
            assert board.entries == [] and ann.ws.state is State.OPEN
            assert (await server.client("Bob")).player_id
            assert (await server.http_get("/healthz"))[1]["status"] == "ok"
        finally:
            await asyncio.wait_for(stop_server(server), 60)
    finally:
        await proxy.cut()
        await drop_database(database_url)


async def test_racing_goes_on_while_another_connection_locks_sqlite(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.INFO, logger="patience_race")
    database_url = await create_database("sqlite", tmp_path)
    path = make_url(database_url).database
    assert path is not None
    server = await start_server(make_settings(database_url))
    locker = sqlite3.connect(path, isolation_level=None)

    async def lock() -> None:
        locker.execute("BEGIN EXCLUSIVE")

    async def unlock() -> None:
        if locker.in_transaction:
            locker.execute("COMMIT")

    try:
        racers = await race_through_an_outage(
            server,
            caplog,
            lock,
            unlock,
            degraded_within_s=SQLITE_BUSY_TIMEOUT_S + 5,
            error="database is locked",
        )
    finally:
        await unlock()
        locker.close()
        await asyncio.wait_for(stop_server(server), 60)
    await assert_stored_exactly_once(database_url, racers)
