"""``RedisBus``: the room directory and the hop between two workers, each of its own.

A worker here is what the bus joins together and nothing more: a ``RoomHost``, its ``RedisBus``
and a ``Gateway`` on a port of its own (localhost, port 0), on one database and one Redis, with
a key prefix of the test's own, deleted at its end. ``test_bus.py`` plays whole races across
two whole servers; these tests look at the bus itself: who holds a room, where a request goes,
what comes back.

Needs PATIENCE_RACE_TEST_REDIS_URL (CI sets ``redis://127.0.0.1:6379/0``); without it every
test here that uses Redis is skipped at collection (``redis_url``), before anything is built.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest_asyncio
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import serve

from server.cluster.redis_bus import RedisBus
from server.net.connection import Gateway
from server.rooms.host import RoomHost
from server.rooms.room import Elsewhere, RemoteMember
from server.settings import Settings
from tests.server.conftest import drop_redis_keys, writing_to
from tests.server.net.test_connection import answer, ask
from tests.server.test_server import Sessions, make_settings


@dataclass
class Worker:
    host: RoomHost
    bus: RedisBus
    gateway: Gateway
    url: str

    @asynccontextmanager
    async def racer(self, name: str) -> AsyncIterator[ClientConnection]:
        """A connection to this worker, said hello to with that name."""
        async with connect(self.url) as ws:
            await ask(ws, type="hello", name=name)
            yield ws


async def reply(ws: ClientConnection, **fields: Any) -> dict[str, Any]:
    """Send a request; its reply, past the room events that come before it."""
    request_id = fields.setdefault("id", secrets.token_hex(4))
    await ws.send(json.dumps(fields))
    while (frame := await answer(ws)).get("id") != request_id:
        assert frame["type"] == "room" and frame["id"] is None
    return frame


@asynccontextmanager
async def worker(
    settings: Settings,
    sessions: Sessions,
    name: str,
    joins: bool = True,
    clock: Callable[[], float] = time.time,
) -> AsyncIterator[Worker]:
    """A worker on the bus (``settings.redis_url``), as ``server.service`` puts one together,
    serving WebSockets; with ``joins`` false, one that has not joined the bus (started);
    ``clock``: its service's (a ``tests.fakeclock.FakeClock`` to pass deadlines by hand)."""
    assert settings.redis_url is not None
    async with writing_to(settings.database_url) as writer:
        host = RoomHost(settings, sessions, writer, clock)
        bus = RedisBus(settings.redis_url, settings.redis_prefix, host, sessions, name)
        gateway = Gateway(settings, sessions, writer, bus, clock)
        bus.connections = gateway.clients
        if joins:
            await bus.start()
        try:
            async with serve(gateway.handle, "127.0.0.1", 0) as server:
                (listening, *_) = server.sockets
                address, port = listening.getsockname()[:2]
                host.address = bus.address = f"ws://{address}:{port}"
                yield Worker(host, bus, gateway, host.address)
        finally:
            host.delivery.stop_timers()
            host.solver.close()
            await bus.stop()


@pytest_asyncio.fixture
async def workers(
    sessions: Sessions, database_url: str, redis_url: str
) -> AsyncIterator[tuple[Worker, Worker]]:
    """Two workers, "first" and "second", on the emptied database."""
    prefix = f"test-{secrets.token_hex(4)}:"
    settings = make_settings(database_url, redis_url=redis_url, redis_prefix=prefix)
    try:
        async with AsyncExitStack() as stack:
            first = await stack.enter_async_context(worker(settings, sessions, "first"))
            second = await stack.enter_async_context(worker(settings, sessions, "second"))
            yield first, second
    finally:
        await drop_redis_keys(redis_url, prefix)


async def test_a_room_code_is_claimed_by_one_worker_until_it_lets_go(
    workers: tuple[Worker, Worker],
) -> None:
    first, second = workers
    assert await first.bus.directory.claim("ABCD")
    assert not await second.bus.directory.claim("ABCD")
    assert await second.bus.directory.holder("ABCD") == "first"
    first.bus.directory.release("ABCD")  # (by the outbox, in order with what went before)
    await first.bus.outbox.flush()
    assert await second.bus.directory.claim("ABCD")
    assert await first.bus.directory.holder("ABCD") == "second"


async def test_a_request_for_a_room_of_another_worker_is_carried_there_and_answered_back(
    workers: tuple[Worker, Worker],
) -> None:
    first, second = workers
    async with first.racer("Ann") as ann, second.racer("Bob") as bob:
        opened = await ask(ann, type="create_room", rule_set="octagon", seats=2)
        code = opened["code"]
        assert await second.bus.directory.holder(code) == "first"

        joined = await reply(bob, type="join", code=code)
        assert [seat["name"] for seat in joined["seats"]] == ["Ann", "Bob"]
        assert joined["reconnect_to"] == first.url, "the worker that holds the room"
        seen = await answer(ann)
        assert seen["type"] == "room" and [s["name"] for s in seen["seats"]] == ["Ann", "Bob"]

        (bob_there,) = [m for m in first.host.rooms[code].members if m.name == "Bob"]
        assert isinstance(bob_there, RemoteMember) and bob_there.worker == "second"
        (bob_here,) = [c for c in second.gateway.clients.values() if c.name == "Bob"]
        assert bob_here.room == Elsewhere(code, "first") and code not in second.host.rooms

        assert (await reply(bob, type="ready", ready=True))["type"] == "ok"
        readied = await answer(ann)
        assert [seat["ready"] for seat in readied["seats"]] == [False, True]


async def test_a_connection_in_a_room_of_another_worker_enters_no_other_room(
    workers: tuple[Worker, Worker],
) -> None:
    first, second = workers
    async with first.racer("Ann") as ann, first.racer("Cy") as cy, second.racer("Bob") as bob:
        code = (await ask(ann, type="create_room", rule_set="octagon", seats=2))["code"]
        other = (await ask(cy, type="create_room", rule_set="octagon"))["code"]
        await reply(bob, type="join", code=code)
        for request in (
            {"type": "create_room", "id": "x", "rule_set": "octagon"},
            {"type": "join", "id": "x", "code": other},
        ):
            refused = await ask(bob, **request)
            assert (refused["type"], refused["code"]) == ("error", "in_another_room")


async def test_a_connection_closed_on_its_worker_is_gone_from_the_room_elsewhere(
    workers: tuple[Worker, Worker],
) -> None:
    first, second = workers
    async with first.racer("Ann") as ann:
        code = (await ask(ann, type="create_room", rule_set="octagon", seats=2))["code"]
        async with second.racer("Bob") as bob:
            await ask(bob, type="spectate", code=code)
            assert len(first.host.rooms[code].members) == 2
        async with asyncio.timeout(5):  # Bob's worker tells Ann's
            while len(first.host.rooms[code].members) > 1:
                await asyncio.sleep(0.01)


async def test_while_redis_cannot_be_reached_room_requests_are_refused_unavailable(
    sessions: Sessions, database_url: str
) -> None:
    """Redis is away (nothing listens where it is said to be): the worker says so, and the
    connection lives on, to try again in a moment."""
    settings = make_settings(
        database_url, redis_url=f"redis://127.0.0.1:{closed_port()}/0", redis_prefix="away:"
    )
    async with worker(settings, sessions, "alone", joins=False) as alone:
        async with alone.racer("Ann") as ann:
            for request in (
                {"type": "join", "id": "x", "code": "ABCD2345"},
                {"type": "create_room", "id": "x", "rule_set": "octagon"},
            ):
                refused = await ask(ann, **request)
                assert (refused["type"], refused["code"]) == ("error", "unavailable")
            assert alone.bus.down_since is not None, "/healthz says so"
            assert (await ask(ann, type="hello", name="Ann"))["type"] == "welcome"
        assert alone.host.rooms == {}


def closed_port() -> int:
    """A port on localhost nothing listens on: one just let go of."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        port: int = listener.getsockname()[1]
    return port
