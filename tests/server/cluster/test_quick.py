"""The quick race in one process (``server.cluster.quick`` behind ``LocalBus``): a real server
with a fake clock, real clients (the SDK). Players queue, are matched, hear ``matched`` then the
room a join gets, and race after the countdown; leaving the queue, closing the connection while
queued, every refusal, ``GET /api/quick``, and the practice bot after ``bot_after_s``."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from clients.sdk import RaceClient, RequestRefused
from server.cluster.practice import PRACTICE_NAME
from server.core.matching import GATHER_S
from server.storage.models import EntryRow, RaceRow
from tests.fakeclock import FakeClock
from tests.server.test_server import Server, make_settings, start_server, stop_server
from wire.protocol import Countdown, ErrorCode, Hello, QueueStatus, RaceStarted, RoomState, YourView

COUNTDOWN_S = 0.3


@pytest_asyncio.fixture
async def clock() -> FakeClock:
    return FakeClock()


async def quick_server(database_url: str, clock: FakeClock, **settings: Any) -> Server:
    return await start_server(
        make_settings(database_url, quick_countdown_s=COUNTDOWN_S, **settings), clock
    )


@pytest_asyncio.fixture
async def server(sessions: object, database_url: str, clock: FakeClock) -> AsyncIterator[Server]:
    running = await quick_server(database_url, clock)
    try:
        yield running
    finally:
        await stop_server(running)


async def waiting(server: Server, rule_set: str = "octagon") -> dict[str, int]:
    status, body = await server.http_get("/api/quick")
    assert status == 200
    counts: dict[str, int] = body["waiting"][rule_set]
    return counts


async def refused(request: Any) -> ErrorCode:
    with pytest.raises(RequestRefused) as refusal:
        await request
    return ErrorCode(refusal.value.code)


async def test_three_players_queued_together_race_in_one_room(
    server: Server, clock: FakeClock
) -> None:
    players = [await server.client(name) for name in ("Ann", "Bob", "Cy")]
    queued = [await player.quick_race("octagon") for player in players]
    assert [q.waiting for q in queued] == [1, 2, 3]
    assert {(q.rule_set, q.rated, q.window) for q in queued} == {("octagon", True, 100)}
    assert await waiting(server) == {"rated": 3, "unrated": 0}
    clock.advance(GATHER_S)
    found = await asyncio.gather(*(player.matched(timeout=10) for player in players))
    codes = {matched.code for matched, _ in found}
    assert len(codes) == 1
    for (matched, room), asked in zip(found, queued, strict=True):
        assert room.id == asked.id, "the room answers the quick_race"
        assert (matched.racers, matched.rated, matched.practice) == (3, True, False)
        assert room.code in codes and room.quick == "rated" and room.deal_kind == "secret"
        assert room.seats_max == 3
    for player in players:
        await player.next_event(Countdown)
    clock.advance(COUNTDOWN_S)
    for player in players:
        await player.next_event(RaceStarted)
        assert (await player.next_event(YourView)).view.rule_set == "octagon"
    assert await waiting(server) == {"rated": 0, "unrated": 0}


async def test_those_waiting_hear_the_queue_every_wave(server: Server, clock: FakeClock) -> None:
    ann = await server.client("Ann")
    await ann.quick_race("octagon", rated=False)
    clock.advance(7)
    status = await ann.next_event(QueueStatus)
    assert (status.rated, status.waiting, status.window, status.waited_s) == (False, 1, None, 7)


async def test_leave_queue_takes_the_player_out_and_only_once(server: Server) -> None:
    ann = await server.client("Ann")
    await ann.quick_race("octagon")
    assert await waiting(server) == {"rated": 1, "unrated": 0}
    await ann.leave_queue()
    assert await waiting(server) == {"rated": 0, "unrated": 0}
    assert await refused(ann.leave_queue()) is ErrorCode.NOT_QUEUED


async def test_a_connection_closed_while_queued_leaves_the_queue(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    ann, bob = await server.client("Ann"), await server.client("Bob")
    await ann.quick_race("octagon")
    await bob.quick_race("octagon")
    assert await waiting(server) == {"rated": 2, "unrated": 0}
    await bob.close()  # (without waiting on matched(): the SDK ends the wait quietly)
    async with asyncio.timeout(10):
        while await waiting(server) != {"rated": 1, "unrated": 0}:
            await asyncio.sleep(0.05)
    del bob
    gc.collect()  # a future whose exception nobody saw says so as it is collected
    assert "never retrieved" not in caplog.text


async def test_what_the_queue_refuses(server: Server) -> None:
    watcher = await RaceClient.connect(server.url)
    await watcher.hello()
    assert await refused(watcher.quick_race("octagon")) is ErrorCode.ANONYMOUS
    ann = await server.client("Ann")
    assert await refused(ann.quick_race("no-such-game")) is ErrorCode.UNKNOWN_RULE_SET
    await ann.quick_race("octagon")
    assert await refused(ann.quick_race("all-fours")) is ErrorCode.ALREADY_QUEUED
    assert await refused(ann.create_room("octagon")) is ErrorCode.ALREADY_QUEUED
    assert await refused(ann.request(Hello(type="hello", name="Zed"))) is ErrorCode.ALREADY_QUEUED
    again = await RaceClient.connect(server.url)
    await again.hello(token=ann.token)
    assert await refused(again.quick_race("octagon")) is ErrorCode.ALREADY_QUEUED
    bob = await server.client("Bob")
    await bob.create_room("octagon")
    assert await refused(bob.quick_race("octagon")) is ErrorCode.IN_ANOTHER_ROOM


async def test_a_bot_waits_in_the_unrated_queue_only(server: Server) -> None:
    bot = await RaceClient.connect(server.url)
    await bot.hello(name="Robo", bot=True)
    assert await refused(bot.quick_race("octagon")) is ErrorCode.BOTS_NOT_RATED
    assert (await bot.quick_race("octagon", rated=False)).rated is False


async def test_a_full_queue_refuses(sessions: object, database_url: str, clock: FakeClock) -> None:
    server = await quick_server(database_url, clock, quick_queue_max=1)
    try:
        ann, bob = await server.client("Ann"), await server.client("Bob")
        await ann.quick_race("octagon")
        assert await refused(bob.quick_race("all-fours")) is ErrorCode.QUEUE_FULL
    finally:
        await stop_server(server)


async def test_only_those_matched_may_sit_in_a_quick_room(server: Server, clock: FakeClock) -> None:
    ann, bob, zed = [await server.client(name) for name in ("Ann", "Bob", "Zed")]
    await ann.quick_race("octagon", rated=False)
    await bob.quick_race("octagon", rated=False)
    clock.advance(GATHER_S)
    (matched, room), _ = await asyncio.gather(ann.matched(timeout=10), bob.matched(timeout=10))
    assert room.quick == "unrated" and not matched.rated
    assert await refused(zed.join(room.code)) is ErrorCode.NOT_INVITED
    assert (await zed.spectate(room.code)).code == room.code
    assert await refused(ann.start()) is ErrorCode.NOT_HOST


async def test_nobody_found_in_bot_after_s_races_the_practice_bot_unrated(
    server: Server, clock: FakeClock, sessions: async_sessionmaker[AsyncSession]
) -> None:
    ann = await server.client("Ann")
    await ann.quick_race("octagon", bot_after_s=30)
    clock.advance(29)
    await ann.next_event(QueueStatus)  # a wave, and no bot yet
    clock.advance(1)
    matched, room = await ann.matched(timeout=10)
    assert (matched.practice, matched.rated, matched.racers) == (True, False, 2)
    assert room.quick == "unrated"
    await ann.next_event(Countdown)  # once the bot has joined
    clock.advance(COUNTDOWN_S)
    await ann.next_event(RaceStarted)  # (its start was stored before it was said)
    async with sessions() as session:
        race_id = await session.scalar(select(RaceRow.id).where(RaceRow.code == room.code))
        entries = (await session.scalars(select(EntryRow).where(EntryRow.race_id == race_id))).all()
    assert [entry.rated_as for entry in entries] == [None, None], "an unrated race"
    seats = {(seat.name, seat.bot) for seat in (await ann.next_event(RoomState)).seats}
    assert seats == {("Ann", False), (PRACTICE_NAME, True)}, "the practice bot is a bot"


async def test_one_practice_bot_at_a_time_for_each_address(
    server: Server, clock: FakeClock
) -> None:
    """Two players from one address (the tests' clients all come from 127.0.0.1) both ask
    for the practice bot, in two games so that they are not matched with each other: one
    races a bot, the other waits on in the queue (a bot is the process's, shared by
    everyone: one address does not hold them all)."""
    ann, bob = await server.client("Ann"), await server.client("Bob")
    await ann.quick_race("octagon", bot_after_s=5)
    await bob.quick_race("all-fours", bot_after_s=5)
    clock.advance(5)
    matched, _ = await ann.matched(timeout=10)
    assert matched.practice
    clock.advance(2)
    status = await bob.next_event(QueueStatus)
    while status.waited_s < 7:  # (the waves before)
        status = await bob.next_event(QueueStatus)
    assert (status.rule_set, status.waiting) == ("all-fours", 1), "Bob waits on"
    assert await waiting(server, "all-fours") == {"rated": 1, "unrated": 0}
    await ann.close()
    await bob.close()
