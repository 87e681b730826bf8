"""Hostile clients (issue 10), against the real server on real sockets.

Each test starts its own server with a limit lowered so it is reached in a fraction of a
second; the defaults and what each limit answers are in docs/protocol.md ("Limits").
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from sqlalchemy import func, select
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from clients.sdk import RaceClient, RequestRefused
from server.storage.models import RaceRow
from tests.fakeclock import FakeClock
from tests.server.test_server import Server, Sessions, make_settings, start_server, stop_server


@asynccontextmanager
async def server_with(
    database_url: str, clock: Callable[[], float] = time.time, **limits: Any
) -> AsyncIterator[Server]:
    running = await start_server(make_settings(database_url, **limits), clock)
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


async def test_invalid_messages_inside_the_rate_are_refused_then_closed_1008(
    sessions: Sessions, database_url: str
) -> None:
    async with server_with(database_url, flood_close_after=20) as server:
        async with connect(server.url) as ws:
            for _ in range(60):  # inside the burst of 100: only their being invalid counts
                await ws.send('{"type": "hello", "name": 5}')
            frames = await frames_until_closed(ws)
            assert ws.close_code == 1008
        codes = [frame["code"] for frame in frames]
        assert 15 <= len(codes) < 60 and set(codes) == {"invalid_message"}
        assert "name" in frames[0]["message"]


async def test_a_sustained_flood_ends_in_1008_though_some_messages_get_through(
    sessions: Sessions, database_url: str
) -> None:
    """30 times the rate: a token now and then is earned, which used to reset the count of
    refusals in a row, so such a flood was never closed."""
    clock = FakeClock()
    async with (
        server_with(
            database_url, clock, rate_per_s=10, rate_burst=10, flood_close_after=100
        ) as server,
        connect(server.url) as ws,
    ):
        codes = set()
        with pytest.raises(ConnectionClosed):
            async with asyncio.timeout(5):
                while True:  # 30 frames (each answered) every tenth of a second
                    for _ in range(30):
                        await ws.send('{"type": "leave"}')
                    for _ in range(30):
                        codes.add(json.loads(await ws.recv())["code"])
                    clock.advance(0.1)
        assert codes == {"not_identified", "rate_limited"}
        assert ws.close_code == 1008


async def test_connections_per_address_are_capped(sessions: Sessions, database_url: str) -> None:
    """Past the cap a connection is refused at the handshake (HTTP 429), before the WebSocket
    opens: a client reconnecting in a loop costs the server one response each time, not a
    handshake, an error frame and a closing handshake."""
    async with server_with(database_url, connections_per_address=3) as server:
        held = [await connect(server.url) for _ in range(3)]
        try:
            with pytest.raises(InvalidStatus) as refused:
                await connect(server.url)
            assert refused.value.response.status_code == 429
            assert b"too_many_connections" in refused.value.response.body
            await held[0].close()
            await asyncio.sleep(0.05)  # the server sees it closed
            async with connect(server.url) as again:  # a freed place can be taken
                await again.send('{"type": "hello", "name": "Ann"}')
                assert (await reply(again))["type"] == "welcome"
        finally:
            for ws in held:
                await ws.close()


async def test_new_identities_per_address_are_limited_returning_ones_are_not(
    sessions: Sessions, database_url: str
) -> None:
    async with server_with(database_url, new_players_per_address_per_min=3) as server:
        clients = [await server.client(f"P{n}") for n in range(3)]
        extra = await RaceClient.connect(server.url)
        with pytest.raises(RequestRefused) as refused:
            await extra.hello(name="P4")
        assert refused.value.code == "too_many_players"
        welcome = await extra.hello(token=clients[0].token)
        assert welcome.player_id == clients[0].player_id


async def test_a_frame_over_the_limit_in_bytes_is_too_large(server: Server) -> None:
    ann = await server.client("Ann")
    frame = json.dumps({"type": "hello", "name": "é" * 9000}, ensure_ascii=False)
    assert len(frame) < 16384 < len(frame.encode())
    await ann.ws.send(frame)
    error = await first_error(ann)
    assert error["code"] == "too_large"
    assert (await ann.hello(token=ann.token)).player_id == ann.player_id


async def first_error(client: RaceClient, timeout: float = 10.0) -> Any:
    async with asyncio.timeout(timeout):
        async for message in client.events():
            if message.type == "error":
                return message.model_dump()
    raise AssertionError("no error came")


async def test_a_binary_frame_is_refused_and_the_connection_stays(server: Server) -> None:
    async with connect(server.url) as ws:
        await ws.send(b'{"type": "hello", "name": "Ann"}')
        error = await reply(ws)
        assert error["type"] == "error" and error["code"] == "invalid_message"
        assert "text" in error["message"]
        await ws.send('{"type": "hello", "name": "Ann"}')
        assert (await reply(ws))["type"] == "welcome"


async def test_a_connection_that_never_says_hello_is_closed(
    sessions: Sessions, database_url: str
) -> None:
    clock = FakeClock()
    async with server_with(database_url, clock, hello_deadline_s=0.3) as server:
        ann = await server.client("Ann")  # saying hello in time keeps it open past that
        async with connect(server.url) as ws:
            # Moved on until a sweep sees it past its deadline (it may be registered after a
            # first move of the clock).
            frames = asyncio.create_task(frames_until_closed(ws, timeout=5))
            while not frames.done():
                clock.advance(0.6)
                await asyncio.wait([frames], timeout=0.5)
            await frames
            assert ws.close_code == 1008
        # The sweep that closed it saw Ann's connection, opened before it, as past the deadline.
        assert (await ann.hello(token=ann.token)).player_id == ann.player_id


async def test_an_idle_connection_outside_a_race_is_closed_a_racer_is_not(
    sessions: Sessions, database_url: str
) -> None:
    clock = FakeClock()
    async with server_with(database_url, clock, idle_timeout_s=0.5) as server:
        idle = await server.client("Ida")
        ann, bob = await server.client("Ann"), await server.client("Bob")
        room = await ann.create_room("octagon", seats=2)
        await bob.join(room.code)
        await ann.ready()
        await bob.ready()
        clock.advance(1.2)
        with pytest.raises(ConnectionClosed):
            async with asyncio.timeout(5):
                await idle.ws.wait_closed()
                await idle.ws.recv()
        assert idle.ws.close_code == 1000
        # The sweep that closed Ida's connection saw Ann's as silent as hers.
        assert (await ann.hello(token=ann.token)).player_id == ann.player_id


async def test_an_empty_lobby_expires_and_its_row_goes(
    sessions: Sessions, database_url: str
) -> None:
    clock = FakeClock()
    async with server_with(database_url, clock, lobby_empty_s=0.3) as server:
        ann = await server.client("Ann")
        room = await ann.create_room("octagon", seats=2)
        await ann.close()
        # A sweep sees the lobby empty (once the server has seen Ann go), a later one sees it
        # empty for longer than lobby_empty_s: the clock is moved on until its row is gone.
        for _ in range(200):
            clock.advance(0.2)
            async with sessions() as session:
                if await session.scalar(select(func.count()).select_from(RaceRow)) == 0:
                    break
            await asyncio.sleep(0.02)  # the next sweep, and the deletion (the loop's time)
        bob = await server.client("Bob")
        with pytest.raises(RequestRefused) as gone:
            await bob.join(room.code)
        assert gone.value.code == "unknown_room"
        async with sessions() as session:
            assert await session.scalar(select(func.count()).select_from(RaceRow)) == 0


async def test_a_lobby_never_started_expires_and_its_members_are_told(
    sessions: Sessions, database_url: str
) -> None:
    clock = FakeClock()
    async with server_with(database_url, clock, lobby_max_s=0.5) as server:
        ann = await server.client("Ann")
        room = await ann.create_room("octagon", seats=2)
        clock.advance(0.6)
        error = await first_error(ann)
        assert error["code"] == "room_closed"
        bob = await server.client("Bob")
        with pytest.raises(RequestRefused) as gone:
            await bob.join(room.code)
        assert gone.value.code == "unknown_room"
        assert (await ann.create_room("octagon")).code != room.code  # Ann is in no room now


async def test_rooms_one_player_may_open_are_capped(sessions: Sessions, database_url: str) -> None:
    async with server_with(database_url, rooms_per_player_per_hour=2) as server:
        ann = await server.client("Ann")
        for _ in range(2):
            await ann.create_room("octagon")
            await ann.leave()
        with pytest.raises(RequestRefused) as capped:
            await ann.create_room("octagon")
        assert capped.value.code == "too_many_rooms"
        bob = await server.client("Bob")  # the cap is per player
        await bob.create_room("octagon")


async def test_repeating_a_request_that_changes_nothing_broadcasts_nothing(server: Server) -> None:
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


@pytest.mark.parametrize("race_id", ["a\x00b", "\x00", "../races", "", "x" * 64 + "é"])
async def test_a_race_record_request_for_an_id_that_cannot_be_one_is_not_found(
    server: Server, race_id: str
) -> None:
    """Any text up to 64 characters passes the request's model; a NUL in it made PostgreSQL
    refuse the query, and the connection closed with 1011 (found by tests/server/test_fuzz.py)."""
    ann = await server.client("Ann")
    with pytest.raises(RequestRefused) as refused:
        await ann.race_record(race_id[:64])
    assert refused.value.code == "not_found"
    assert (await ann.hello(token=ann.token)).player_id == ann.player_id


async def test_an_id_that_is_no_text_is_refused_and_not_echoed(server: Server) -> None:
    """A lone surrogate, escaped, is valid JSON but no text UTF-8 can carry: echoing it made
    building the error fail, and the connection closed with 1011 (found by test_fuzz.py)."""
    async with connect(server.url) as ws:
        await ws.send('{"type": "hello", "name": "Ann", "id": "\\ud800"}')
        error = await reply(ws)
        assert (error["type"], error["code"], error["id"]) == ("error", "invalid_message", None)
        await ws.send('{"type": "fly", "id": "a\\udfff"}')
        assert (await reply(ws))["id"] is None
        await ws.send('{"type": "hello", "name": "Ann", "id": "h"}')
        assert (await reply(ws))["type"] == "welcome"


async def test_json_nested_too_deep_is_bad_json_and_the_connection_stays(server: Server) -> None:
    """8,000 levels fit in a frame (16,000 bytes); json.loads raised RecursionError, which
    failed the connection's handler (closed 1011, a traceback logged per frame)."""
    async with connect(server.url) as ws:
        await ws.send("[" * 8000 + "]" * 8000)
        error = await reply(ws)
        assert (error["type"], error["code"]) == ("error", "bad_json")
        assert "deep" in error["message"]
        await ws.send('{"type": "hello", "name": "Ann"}')
        assert (await reply(ws))["type"] == "welcome"
