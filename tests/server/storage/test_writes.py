"""Every database write the server makes goes through its one writer (``server.storage.writer``).

Under CPU starvation a ``hello`` once failed with ``sqlite3.OperationalError: database is
locked`` in ``store.create_player`` and its connection was closed (1011): player creation and
the daily claim were written on sessions of their own, beside the writer's, and on SQLite a
write that waits more than the driver's busy timeout (5 s) for the lock fails. These tests hold
the write lock from another connection for longer than that, which is what starvation does to
the server's own connections.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from server.storage.models import PlayerRow
from tests.server.conftest import tables_locked
from tests.server.test_server import make_settings, start_server, stop_server

Sessions = async_sessionmaker[AsyncSession]
LOCKED_S = 6.0
"""Longer than SQLite's busy timeout (5 s): a write that only waits for the lock fails."""
WRITE_TABLES = ("players", "races", "daily_deals", "daily_plays")


async def request(ws: ClientConnection, message: dict[str, Any]) -> dict[str, Any] | int:
    """Send a request and return its reply, or the close code if the connection closed."""
    await ws.send(json.dumps(message))
    try:
        async with asyncio.timeout(30):
            reply: dict[str, Any] = json.loads(await ws.recv())
            return reply
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd is not None else 1006


async def test_every_write_waits_out_a_lock_held_past_the_busy_timeout(
    database_url: str, sessions: Sessions
) -> None:
    server = await start_server(make_settings(database_url, new_players_per_address_per_min=100))
    try:
        async with connect(server.url) as host, connect(server.url) as daily:
            assert (await request(host, {"type": "hello", "name": "host"}))["type"] == "welcome"
            assert (await request(daily, {"type": "hello", "name": "day"}))["type"] == "welcome"
            newcomers = [await connect(server.url) for _ in range(10)]
            async with tables_locked(database_url, *WRITE_TABLES):
                replies = asyncio.gather(
                    *(
                        request(ws, {"type": "hello", "name": f"new{n}"})
                        for n, ws in enumerate(newcomers)
                    ),
                    request(
                        host,
                        {
                            "type": "create_room",
                            "rule_set": "all-fours",
                            "seats": 2,
                            "deal": {"kind": "secret"},
                        },
                    ),
                    request(daily, {"type": "daily", "rule_set": "all-fours"}),
                )
                await asyncio.sleep(LOCKED_S)
            answered = await replies
            for ws in newcomers:
                await ws.close()
    finally:
        await stop_server(server)
    assert [reply if isinstance(reply, int) else reply["type"] for reply in answered] == [
        *["welcome"] * 10,
        "room",
        "room",
    ]
    async with sessions() as session:
        assert await session.scalar(select(func.count()).select_from(PlayerRow)) == 12


async def test_a_write_not_begun_in_time_is_refused_unavailable_and_the_connection_lives(
    database_url: str, sessions: Sessions
) -> None:
    settings = make_settings(database_url, new_players_per_address_per_min=100, write_wait_s=1.0)
    server = await start_server(settings)
    loop = asyncio.get_running_loop()

    async def timed_hello(ws: ClientConnection, name: str) -> tuple[float, dict[str, Any] | int]:
        began = loop.time()
        reply = await request(ws, {"type": "hello", "name": name})
        return loop.time() - began, reply

    try:
        newcomers = [await connect(server.url) for _ in range(5)]
        async with tables_locked(database_url, *WRITE_TABLES):
            replies = asyncio.gather(
                *(timed_hello(ws, f"new{n}") for n, ws in enumerate(newcomers))
            )
            await asyncio.sleep(LOCKED_S)
        answered = await replies
        again = [await request(ws, {"type": "hello", "name": "again"}) for ws in newcomers]
        for ws in newcomers:
            await ws.close()
    finally:
        await stop_server(server)
    # The first hello's write begins at once and waits for the lock: on SQLite it fails once
    # the busy timeout is out, past the bound, and is refused; PostgreSQL waits the lock out.
    # The others, queued behind it, are refused once the bound is out.
    refused = [
        took
        for took, reply in answered
        if isinstance(reply, dict) and reply.get("code") == "unavailable"
    ]
    assert all(
        isinstance(reply, dict) and reply["type"] in {"welcome", "error"} for _, reply in answered
    ), answered
    assert len(refused) >= 4
    assert sorted(refused)[3] < 2.0, "the writes queued behind are refused once the bound is out"
    assert [reply if isinstance(reply, int) else reply["type"] for reply in again] == [
        "welcome"
    ] * 5
