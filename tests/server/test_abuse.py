"""Hostile clients (issue 10), against the real server on real sockets.

Each test starts its own server with a limit lowered so it is reached in a fraction of a
second; the defaults and what each limit answers are in docs/protocol.md ("Limits").
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from tests.server.test_server import Server, make_settings, start_server, stop_server


@asynccontextmanager
async def server_with(database_url: str, **limits: Any) -> AsyncIterator[Server]:
    running = await start_server(make_settings(database_url, **limits))
    try:
        yield running
    finally:
        await stop_server(running)


async def frames_until_closed(ws: ClientConnection, timeout: float = 20.0) -> list[Any]:
    """Every frame the server sends until it closes the connection."""
    frames = []
    async with asyncio.timeout(timeout):
        try:
            async for frame in ws:
                frames.append(json.loads(frame))
        except ConnectionClosed:
            pass
    return frames


async def reply(ws: ClientConnection, timeout: float = 5.0) -> Any:
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))


async def test_repeating_a_request_that_changes_nothing_broadcasts_nothing(
        server: Server) -> None:
    ann, bob, eve = [await server.client(n) for n in ("Ann", "Bob", "Eve")]
    room = await ann.create_room("octagon", seats=3)
    await bob.join(room.code)
    first = await eve.spectate(room.code)
    for _ in range(20):
        again = await eve.spectate(room.code)
    assert again.seq == first.seq and again.spectators == 1
    await bob.ready()
    await bob.ready()
    await bob.ready()
    rejoined = await bob.join(room.code)
    assert rejoined.seq == first.seq + 1  # a room event for bob's first ready only
