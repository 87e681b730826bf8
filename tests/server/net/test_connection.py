"""``Gateway``: one WebSocket connection, frame by frame; what it refuses, and how.

Real sockets on localhost port 0, as websockets' own tests have them, served by a gateway of
its own on a real database (``writer``: ``hello`` makes players), with a clock moved by hand
(a connection's rate and its allowance of errors come back only as the test advances it). Its
bus is a stand-in that keeps the room requests handed to it: what a room does with them is
``tests/server/rooms/test_host.py``'s.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
import pytest_asyncio
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import broadcast, serve
from websockets.exceptions import ConnectionClosed, ConnectionClosedError

from server.core.errors import Refusal
from server.core.said import as_frame
from server.net.connection import FLOOD_CLOSE_CODE, Gateway
from server.rooms.room import Client, Elsewhere, RoomRequest
from server.storage.writer import Writer
from tests.fakeclock import FakeClock
from tests.server.test_server import Sessions, make_settings
from wire.protocol import ErrorCode, Ok


@dataclass
class KeptRequests:
    """The gateway's bus: it keeps each room request, enters the connection in a room held
    elsewhere and says ``ok``; or, given a ``refusal``, raises it."""

    requests: list[RoomRequest] = field(default_factory=list)
    gone: list[Client] = field(default_factory=list)
    """The connections closed."""
    refusal: Refusal | None = None

    async def request(self, client: Client, message: RoomRequest) -> None:
        self.requests.append(message)
        if self.refusal is not None:
            raise self.refusal
        client.room = Elsewhere("ROOM", "another-worker")
        broadcast([client.ws], as_frame(Ok(id=message.id)))

    def left(self, client: Client) -> None:
        self.gone.append(client)

    def seeking(self, client: Client) -> bool:
        return False


@dataclass
class Serving:
    gateway: Gateway
    bus: KeptRequests
    clock: FakeClock
    url: str

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[ClientConnection]:
        async with connect(self.url) as ws:
            yield ws

    async def all_closed(self) -> None:
        """Until the gateway has let go of every connection (its handlers have ended)."""
        async with asyncio.timeout(5):
            while self.gateway.clients:
                await asyncio.sleep(0.01)


@asynccontextmanager
async def serving(
    sessions: Sessions, database_url: str, writer: Writer, **limits: Any
) -> AsyncIterator[Serving]:
    """A gateway with these settings, listening on a port of its own."""
    settings = make_settings(database_url, **limits)
    clock = FakeClock()
    bus = KeptRequests()
    gateway = Gateway(settings, sessions, writer, bus, clock)
    async with serve(gateway.handle, "127.0.0.1", 0) as server:
        (socket, *_) = server.sockets
        host, port = socket.getsockname()[:2]
        yield Serving(gateway, bus, clock, f"ws://{host}:{port}")


@pytest_asyncio.fixture
async def gateway(sessions: Sessions, database_url: str, writer: Writer) -> AsyncIterator[Serving]:
    async with serving(sessions, database_url, writer) as running:
        yield running


async def ask(ws: ClientConnection, **fields: Any) -> dict[str, Any]:
    """Send a request; the frame that answers it."""
    await ws.send(json.dumps(fields))
    return await answer(ws)


async def answer(ws: ClientConnection) -> dict[str, Any]:
    frame: dict[str, Any] = json.loads(await ws.recv())
    return frame


async def test_hello_with_a_name_makes_a_player_and_its_token_names_them_again(
    gateway: Serving,
) -> None:
    async with gateway.connection() as ws:
        welcome = await ask(ws, type="hello", id="h1", name="  Ann ")
    assert welcome["type"] == "welcome" and welcome["id"] == "h1"
    assert welcome["name"] == "Ann" and welcome["token"] and not welcome["anonymous"]
    async with gateway.connection() as ws:
        again = await ask(ws, type="hello", token=welcome["token"])
    assert again["player_id"] == welcome["player_id"] and again["token"] is None


async def test_a_hello_with_neither_name_nor_token_may_watch_but_not_race(
    gateway: Serving,
) -> None:
    async with gateway.connection() as ws:
        welcome = await ask(ws, type="hello")
        assert welcome["type"] == "welcome" and welcome["anonymous"] and welcome["player_id"] == ""
        refused = await ask(ws, type="create_room", id="c1", rule_set="octagon")
        assert (refused["type"], refused["id"], refused["code"]) == ("error", "c1", "anonymous")
        assert await ask(ws, type="spectate", id="s1", code="ROOM") == {"type": "ok", "id": "s1"}
    assert [request.type for request in gateway.bus.requests] == ["spectate"]


async def test_a_room_request_before_hello_is_refused_and_reaches_no_room(
    gateway: Serving,
) -> None:
    async with gateway.connection() as ws:
        refused = await ask(ws, type="join", id="j1", code="ROOM")
        assert (refused["id"], refused["code"]) == ("j1", "not_identified") and refused["message"]
        assert (await ask(ws, type="hello", name="Ann"))["type"] == "welcome"
    assert gateway.bus.requests == []


async def test_a_bad_token_is_refused_and_the_connection_lives(gateway: Serving) -> None:
    async with gateway.connection() as ws:
        refused = await ask(ws, type="hello", id="h1", token="no-such-token")
        assert (refused["type"], refused["id"], refused["code"]) == ("error", "h1", "bad_token")
        assert (await ask(ws, type="hello", name="Ann"))["type"] == "welcome"


@pytest.mark.parametrize(
    ("frame", "echoed", "code"),
    [
        ("{not json", None, "bad_json"),
        (b"{}", None, "invalid_message"),
        ("[" * 8000 + "]" * 8000, None, "bad_json"),  # valid JSON, too deep: was a 1011
        ('{"type": "join", "id": "j1", "code": ' + "[" * 5000 + "]" * 5000 + "}", None, "bad_json"),
        ('{"type": "resume", "code": "ABCD", "last_seq": ' + "9" * 4301 + "}", None, "bad_json"),
        ('{"type": "fly", "id": "f1"}', "f1", "unknown_type"),
        ("[1, 2]", None, "unknown_type"),
        (
            '{"type": "create_room", "id": "c1", "rule_set": "octagon", "seats": "many"}',
            "c1",
            "invalid_message",
        ),
        (
            '{"type": "move", "id": "m1", "move": "turn", "player_id": "someone"}',
            "m1",
            "invalid_message",
        ),
        ('{"type": "hello", "name": "' + "x" * 20_000 + '"}', None, "too_large"),
    ],
)
async def test_a_frame_not_understood_is_a_structured_error_and_the_connection_lives(
    gateway: Serving, frame: str | bytes, echoed: str | None, code: str
) -> None:
    async with gateway.connection() as ws:
        await ws.send(frame)
        refused = await answer(ws)
        assert (refused["type"], refused["id"], refused["code"]) == ("error", echoed, code)
        assert refused["message"]
        assert (await ask(ws, type="hello", name="Ann"))["type"] == "welcome"
    assert gateway.bus.requests == []


async def test_a_room_request_goes_to_the_bus_and_its_refusal_comes_back_as_an_error(
    gateway: Serving,
) -> None:
    async with gateway.connection() as ws:
        await ask(ws, type="hello", name="Ann")
        gateway.bus.refusal = Refusal(ErrorCode.ROOM_FULL, "no seat left")
        refused = await ask(ws, type="join", id="j1", code="ROOM")
        assert refused == {
            "type": "error",
            "id": "j1",
            "code": "room_full",
            "message": "no seat left",
        }
        gateway.bus.refusal = None
        assert await ask(ws, type="join", id="j2", code="ROOM") == {"type": "ok", "id": "j2"}
    assert [(r.type, r.id) for r in gateway.bus.requests] == [("join", "j1"), ("join", "j2")]


async def test_a_connection_in_a_room_that_closes_is_taken_out_of_it(gateway: Serving) -> None:
    async with gateway.connection() as ws:
        welcome = await ask(ws, type="hello", name="Ann")
        await ask(ws, type="join", code="ROOM")
        (client,) = gateway.gateway.clients.values()
    await gateway.all_closed()
    assert gateway.bus.gone == [client] and client.player_id == welcome["player_id"]


async def test_boards_and_race_records_are_read_within_the_addresss_allowance(
    sessions: Sessions, database_url: str, writer: Writer
) -> None:
    """Answered by the gateway itself, not a room; counted per address, with HTTP's reads."""
    async with serving(
        sessions, database_url, writer, http_rate_per_s=1, http_rate_burst=2
    ) as running:
        async with running.connection() as ws:
            await ask(ws, type="hello")
            board = await ask(ws, type="leaderboard", id="b1", rule_set="octagon")
            assert (board["type"], board["id"]) == ("leaderboard", "b1")
            missing = await ask(ws, type="race_record", id="r1", race_id="no-such-race")
            assert (missing["id"], missing["code"]) == ("r1", "not_found")
            slowed = await ask(ws, type="leaderboard", id="b2", rule_set="octagon")
            assert (slowed["id"], slowed["code"]) == ("b2", "rate_limited")
            assert running.gateway.read_wait("127.0.0.1") > 0, "HTTP waits too"
            running.clock.advance(1)
            assert (await ask(ws, type="leaderboard", rule_set="octagon"))["type"] == "leaderboard"
        assert running.bus.requests == []


async def test_a_connection_past_its_rate_is_slowed_then_closed_past_its_allowance_of_errors(
    sessions: Sessions, database_url: str, writer: Writer
) -> None:
    async with serving(
        sessions, database_url, writer, rate_per_s=1, rate_burst=2, flood_close_after=2
    ) as running:
        async with running.connection() as ws:
            for _ in range(2):  # the burst
                assert (await ask(ws, type="hello", id="h"))["type"] == "welcome"
            slowed = await ask(ws, type="hello", id="h3")
            assert (slowed["id"], slowed["code"]) == ("h3", "rate_limited")
            running.clock.advance(1)  # one message more, and the one error forgiven
            assert (await ask(ws, type="hello"))["type"] == "welcome"
            for _ in range(3):
                await ws.send('{"type": "hello"}')
            codes = []
            with pytest.raises(ConnectionClosedError):
                async for frame in ws:
                    codes.append(json.loads(frame)["code"])
            assert codes == ["rate_limited", "rate_limited"]
            assert ws.close_code == FLOOD_CLOSE_CODE
        async with running.connection() as ws:  # another connection has its own budget
            assert (await ask(ws, type="hello"))["type"] == "welcome"


async def test_a_closing_gateway_tells_a_new_connection_and_closes_it(gateway: Serving) -> None:
    gateway.gateway.closing = True
    async with gateway.connection() as ws:
        notice = await answer(ws)
        assert notice["type"] == "shutdown"
        with pytest.raises(ConnectionClosed):
            await ws.recv()
        assert ws.close_code == 1001  # going away
