"""Rooms across workers (``server.cluster.redis_bus``): two services in this process, one database,
one Redis, each its own worker; a connection to one is in a room the other holds.

Needs PATIENCE_RACE_TEST_REDIS_URL (CI sets ``redis://127.0.0.1:6379/0``); without it these
tests are skipped. Each test has its own key prefix, deleted at its end.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import redis.asyncio as redis
from sqlalchemy import func, select

from clients.sdk import RaceClient, RequestRefused
from server.cluster.hops import HOP_TIMEOUT_S
from server.storage.models import MoveRow, RaceRow
from tests.server.conftest import drop_redis_keys
from tests.server.test_abuse import first_error
from tests.server.test_server import (
    Server,
    Sessions,
    make_settings,
    play_to_end,
    start_server,
    stop_server,
)
from wire.protocol import RaceFinished, RoomState, YourView


@asynccontextmanager
async def two_workers(
    database_url: str, redis_url: str, **limits: object
) -> AsyncIterator[tuple[Server, Server]]:
    prefix = f"test-{secrets.token_hex(4)}:"
    settings = make_settings(database_url, redis_url=redis_url, redis_prefix=prefix, **limits)
    first = await start_server(settings)
    second = await start_server(settings)
    try:
        yield first, second
    finally:
        await stop_server(first)
        await stop_server(second)
        await drop_redis_keys(redis_url, prefix)


async def bob_in_anns_room(
    first: Server, second: Server
) -> tuple[RaceClient, RaceClient, RoomState]:
    """Ann on the first worker opens a room for two; Bob, on the second, joins it."""
    ann, bob = await first.client("Ann"), await hopping(second, "Bob")
    room = await ann.create_room("octagon", seats=2)
    await bob.join(room.code)
    return ann, bob, room


async def test_a_race_across_two_workers_is_played_ranked_and_stored(
    sessions: Sessions, database_url: str, redis_url: str
) -> None:
    async with two_workers(database_url, redis_url) as (first, second):
        ann, bob = await first.client("Ann"), await hopping(second, "Bob")
        room = await ann.create_room("octagon", seats=2)
        joined = await bob.join(room.code)
        assert joined.code == room.code and [s.name for s in joined.seats] == ["Ann", "Bob"]
        assert joined.reconnect_to == first.url  # the worker that holds the room
        seen_by_ann = await ann.next_event(RoomState)
        assert [s.name for s in seen_by_ann.seats] == ["Ann", "Bob"]
        await ann.ready()
        await bob.ready()
        acks = await asyncio.gather(play_to_end(ann), play_to_end(bob))
        finished = [await client.next_event(RaceFinished) for client in (ann, bob)]
        assert finished[0] == finished[1]
        async with sessions() as session:
            stored = await session.scalar(select(func.count()).select_from(MoveRow))
            race = await session.get(RaceRow, finished[0].race_id)
        assert stored == sum(ack.moves for ack in acks)
        assert race is not None and race.ended_at is not None
        for server in (first, second):  # either worker's HTTP API answers for the race
            status, record = await server.http_get(f"/api/races/{finished[0].race_id}")
            assert status == 200 and record["race_id"] == finished[0].race_id


@pytest.mark.parametrize("own_progress", [True, False])
async def test_a_connection_on_another_worker_gets_its_own_progress_as_its_hello_asked(
    database_url: str, redis_url: str, own_progress: bool
) -> None:
    """What ``hello`` said of the progress of one's own moves holds across the hop."""
    async with two_workers(database_url, redis_url) as (first, second):
        ann = await first.client("Ann")
        bob = await hopping(second, "Bob", own_progress=own_progress, record=True)
        room = await ann.create_room("all-fours", seats=2, deal="number", number=7)
        await bob.join(room.code)
        await ann.ready()
        await bob.ready()
        view = (await bob.next_event(YourView)).view
        ack = await bob.move(view.legal_moves[0])
        await asyncio.sleep(0.2)
        own = [
            frame
            for frame in map(json.loads, bob.received or [])
            if frame["type"] == "progress" and frame["player_id"] == bob.player_id
        ]
        assert [frame["seq"] for frame in own] == ([ack.seq] if own_progress else [])


async def test_the_sdk_moves_to_the_rooms_worker_and_keeps_the_servers_address(
    sessions: Sessions, database_url: str, redis_url: str
) -> None:
    async with two_workers(database_url, redis_url) as (first, second):
        ann = await RaceClient.connect(first.url, record=True)
        await ann.hello(name="Ann")
        bob = await second.client("Bob")
        room = await ann.create_room("octagon", seats=2)
        joined = await bob.join(room.code)
        assert joined.reconnect_to == first.url
        assert bob.connected_to == first.url and bob.url == second.url, "moved, main kept"
        again = await bob.resume()
        assert again.reconnect_to is None and not again.full, "no hop, nothing lost"
        cy = await second.client("Cy")
        await cy.spectate(room.code)
        assert cy.connected_to == first.url, "a spectator moves too"
        await ann.ready()
        await bob.ready()
        acks = await asyncio.gather(play_to_end(ann), play_to_end(bob))
        finished = [await client.next_event(RaceFinished) for client in (ann, bob, cy)]
        assert finished[0] == finished[1] == finished[2]
        assert all(ack.status != "in_progress" for ack in acks)
        assert ann.received is not None
        rooms = [
            RoomState.model_validate_json(frame)
            for frame in ann.received
            if '"type":"room"' in frame
        ]
        assert all(seat.connected for state in rooms for seat in state.seats), (
            "Ann never saw Bob away while he moved"
        )


async def test_leaving_a_room_on_another_worker_frees_the_connection(
    sessions: Sessions, database_url: str, redis_url: str
) -> None:
    async with two_workers(database_url, redis_url) as (first, second):
        ann, bob, room = await bob_in_anns_room(first, second)
        with pytest.raises(RequestRefused) as refused:
            await bob.create_room("octagon")
        assert refused.value.code == "in_another_room"
        await bob.leave()
        own = await bob.create_room("octagon")  # on his own worker now
        assert own.code != room.code and own.reconnect_to is None


async def test_a_closed_lobby_frees_the_members_held_by_other_workers(
    sessions: Sessions, database_url: str, redis_url: str
) -> None:
    async with two_workers(database_url, redis_url, lobby_max_s=0.6) as (first, second):
        ann, bob, room = await bob_in_anns_room(first, second)
        closed = await first_error(bob)
        assert closed["code"] == "room_closed"
        assert (await bob.create_room("octagon")).code != room.code


async def test_a_connection_closed_on_one_worker_leaves_its_seat_away_on_the_other(
    sessions: Sessions, database_url: str, redis_url: str
) -> None:
    async with two_workers(database_url, redis_url) as (first, second):
        ann, bob, room = await bob_in_anns_room(first, second)
        await ann.next_event(RoomState)
        await bob.close()
        state = await ann.next_event(RoomState)
        assert {s.name: s.connected for s in state.seats} == {"Ann": True, "Bob": False}


async def test_racers_resuming_at_once_on_the_worker_taking_over_make_it_take_the_race_once(
    sessions: Sessions, database_url: str, redis_url: str
) -> None:
    """The room's worker stops; both racers resume on the other at the same moment. The first
    resume claims the room; the second, seeing the directory name this worker before the room
    is rebuilt, waits for that, rather than taking the race in the database a second time
    (its epoch would then move past the rebuilt room's, and the room's next write would be
    refused and the room let go). Both race on to the end on one holder. (The window is the
    one Redis round trip of the first claim: this test did not hit it in three runs without
    the fix; the full suite's practice-bot test did, once.)"""
    async with two_workers(database_url, redis_url) as (first, second):
        ann, bob = await first.client("Ann"), await first.client("Bob")
        room = await ann.create_room("octagon", seats=2, deal="number", number=5)
        await bob.join(room.code)
        for racer in (ann, bob):
            await racer.ready()
        for racer in (ann, bob):
            await racer.next_event(YourView)
        await stop_server(first)
        for racer in (ann, bob):
            racer.url = second.url
        await asyncio.gather(ann.reconnect(), bob.reconnect())
        for racer in (ann, bob):
            view = (await racer.next_event(YourView)).view
            await racer.move(next(move for move in view.legal_moves if move != "resign"))
            await racer.resign()
        finished = await ann.next_event(RaceFinished, timeout=30)
        assert len(finished.ranking) == 2
    async with sessions() as session:
        epochs = (await session.scalars(select(RaceRow.holder_epoch))).all()
    assert epochs == [2], "taken once: by the worker that took over, after the one that opened"


async def test_a_room_taken_over_on_a_request_still_closes_its_members_elsewhere_with_1012(
    sessions: Sessions, database_url: str, redis_url: str
) -> None:
    """Ann, back first after the room's worker stopped, makes the live worker take the room
    over on her resume; Bob, idle on the live worker, is closed with 1012 all the same."""
    async with two_workers(database_url, redis_url) as (first, second):
        ann, bob = await first.client("Ann"), await hopping(second, "Bob")
        room = await ann.create_room("octagon", seats=2)
        await bob.join(room.code)
        await stop_server(first)
        ann.url = second.url
        await ann.reconnect()
        async with asyncio.timeout(5):  # less than a hop's timeout: not waiting for a request
            async for _ in bob.events():
                pass
        assert bob.ws.close_code == 1012


async def test_a_join_in_flight_to_a_worker_that_dies_fails_as_soon_as_it_is_seen_dead(
    database_url: str, redis_url: str
) -> None:
    """Bob's join goes to the worker that holds the room, which dies before it answers (a
    worker alive as far as Redis says, that answers nothing). Once its heartbeat is gone, Bob's
    connection is closed with 1012 (reconnect and resume) within a heartbeat or two, not after
    the hop's 10 s timeout."""
    async with two_workers(database_url, redis_url) as (_, second):
        prefix = second.settings.redis_prefix
        connection = redis.from_url(redis_url)
        ghost_ears = connection.pubsub()  # it reads its channel, and answers nothing
        await ghost_ears.subscribe(f"{prefix}to:ghost")
        try:
            await connection.set(f"{prefix}worker:ghost", "ws://127.0.0.1:9/ws", ex=60)
            await connection.sadd(f"{prefix}workers", "ghost")
            await connection.set(f"{prefix}room:GHOSTROOM", "ghost")
            bob = await hopping(second, "Bob")
            joining = asyncio.create_task(bob.join("GHOSTROOM"))
            await asyncio.sleep(0.5)
            assert not joining.done(), "the join waits for the worker that holds the room"
            await connection.delete(f"{prefix}worker:ghost")  # the worker dies
            loop = asyncio.get_running_loop()
            began = loop.time()
            await asyncio.wait_for(bob.ws.wait_closed(), HOP_TIMEOUT_S / 2)
            assert bob.ws.close_code == 1012
            assert loop.time() - began < HOP_TIMEOUT_S / 2
            with pytest.raises(ConnectionError):
                await joining
        finally:
            await ghost_ears.aclose()
            await connection.aclose()


async def test_a_request_for_a_worker_nobody_listens_for_fails_at_once(
    database_url: str, redis_url: str
) -> None:
    """The room's worker is alive as far as Redis says, but nobody reads its channel (it is
    subscribing again after Redis came back, or it is gone): Redis says so as the request is
    published, and the connection is closed with 1012 (reconnect and resume) at once, not
    after the hop's 10 s."""
    async with two_workers(database_url, redis_url) as (_, second):
        prefix = second.settings.redis_prefix
        connection = redis.from_url(redis_url)
        try:
            await connection.set(f"{prefix}worker:deaf", "ws://127.0.0.1:9/ws", ex=60)
            await connection.set(f"{prefix}room:DEAFROOM", "deaf")
            bob = await hopping(second, "Bob")
            loop = asyncio.get_running_loop()
            began = loop.time()
            with pytest.raises(ConnectionError):
                await bob.join("DEAFROOM")
            await asyncio.wait_for(bob.ws.wait_closed(), HOP_TIMEOUT_S / 2)
            assert bob.ws.close_code == 1012
            assert loop.time() - began < HOP_TIMEOUT_S / 2
        finally:
            await connection.aclose()


async def test_an_unknown_room_is_unknown_on_every_worker(
    sessions: Sessions, database_url: str, redis_url: str
) -> None:
    async with two_workers(database_url, redis_url) as (_, second):
        bob = await second.client("Bob")
        with pytest.raises(RequestRefused) as refused:
            await bob.join("ZZZZZZZZ")
        assert refused.value.code == "unknown_room"


async def hopping(
    server: Server, name: str, own_progress: bool = False, record: bool = False
) -> RaceClient:
    """A client that stays on the worker it reached, so its requests take the hop."""
    client = await RaceClient.connect(server.url, follow_reconnect_to=False, record=record)
    await client.hello(name=name, own_progress=own_progress)
    return client
