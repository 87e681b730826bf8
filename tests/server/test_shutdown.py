"""A graceful shutdown has a bound (``settings.shutdown_s``), well inside a container's 10 s stop
timeout: clients that never answer the close, or a database that cannot take the last writes,
do not hold it up. Real server, real sockets, a real lock on the database."""

from __future__ import annotations

import asyncio
import base64
import os
from urllib.parse import urlsplit

import pytest

from tests.server.conftest import moves_locked
from tests.server.rooms.test_delivery import a_write_is_queued
from tests.server.test_server import (
    Server,
    Sessions,
    make_settings,
    race_of,
    start_server,
)
from wire.protocol import ShuttingDown, YourView

SILENT_CLIENTS = 3
WAITED_FOR_BEFORE_S = 10.0
"""How long websockets waits for a client to answer the close (its close timeout)."""
SQLITE_BUSY_TIMEOUT_S = 5.0
"""How long SQLite's driver lets a write wait for a lock (sqlite3's default)."""
SLACK_S = 3.0
"""What a loaded CI machine may add to the shutdown's bound: the bound plus this stays well
under the ``WAITED_FOR_BEFORE_S`` that the bugs these tests catch took."""


async def silent_connection(url: str) -> asyncio.StreamWriter:
    """A connection that does the WebSocket opening handshake, then never reads or sends again
    (a frozen tab, a laptop put to sleep): it never answers the server's close."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    response = await reader.readuntil(b"\r\n\r\n")
    assert response.startswith(b"HTTP/1.1 101"), response
    return writer


async def timed_stop(server: Server) -> float:
    """Stop the server; how long it took. Fails once it has taken as long as one silent client
    used to hold it up (and leaves the server to finish on its own)."""
    loop = asyncio.get_running_loop()
    began = loop.time()
    server.stop.set_result(None)
    done, _ = await asyncio.wait([server.task], timeout=WAITED_FOR_BEFORE_S + 2)
    took = loop.time() - began
    assert done, f"the shutdown was still going on after {took:.1f} s"
    server.task.result()
    return took


async def test_clients_that_never_answer_the_close_do_not_hold_up_the_shutdown(
    sessions: Sessions, database_url: str
) -> None:
    running = await start_server(make_settings(database_url))
    silent = [await silent_connection(running.url) for _ in range(SILENT_CLIENTS)]
    ann = await running.client("Ann")  # one that does answer
    took = await timed_stop(running)
    assert took < running.settings.shutdown_s + SLACK_S
    assert isinstance(await ann.next_event(ShuttingDown), ShuttingDown)
    assert ann.ws.close_code == 1001, "a client that answers is closed as before"
    for connection in silent:
        connection.close()


async def test_a_database_that_cannot_take_the_last_moves_does_not_hold_up_the_clients(
    sessions: Sessions, database_url: str
) -> None:
    """The writes not done by the deadline are given up, unacknowledged, and the clients are
    let go on time; the server ends once the database driver has let go of the write it cut
    short (on SQLite that takes until its 5 s busy timeout)."""
    running = await start_server(make_settings(database_url))
    (ann, bob), code = await race_of(running, "octagon", ["Ann", "Bob"])
    legal = [(await client.next_event(YourView)).view.legal_moves for client in (ann, bob)]
    loop = asyncio.get_running_loop()
    async with moves_locked(database_url):
        ann_moves = asyncio.create_task(ann.move(legal[0][0]))
        await asyncio.sleep(0.1)  # the writer takes Ann's move, and waits on the lock...
        bob_moves = asyncio.create_task(bob.move(legal[1][0]))
        await a_write_is_queued(running)  # ...and Bob's waits behind it
        began = loop.time()
        running.stop.set_result(None)
        async with asyncio.timeout(WAITED_FOR_BEFORE_S + 2):
            await asyncio.gather(ann.ws.wait_closed(), bob.ws.wait_closed())
        let_go = loop.time() - began
        assert let_go < running.settings.shutdown_s + SLACK_S
        for waiting in (ann_moves, bob_moves):
            with pytest.raises(ConnectionError):
                await waiting  # neither move was stored, and neither was acknowledged
        async with asyncio.timeout(SQLITE_BUSY_TIMEOUT_S + 2):
            await running.task
