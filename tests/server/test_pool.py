"""The pool of deals proved winnable (server.pool, issue 12): filled in the background by a
solver process, shown on /healthz, each deal taken by one room, its seed secret until the race
ends; a room falls back to an unproved secret deal when none is ready, and says so.

Every test runs on SQLite and, when PATIENCE_RACE_TEST_POSTGRES_URL is set, on PostgreSQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest_asyncio
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from clients.sdk import RaceClient
from engine.registry import find_rule_set
from engine.solver import Budget, Result, solve
from server.db import DailyDealRow, WinnableDealRow
from tests.server.test_server import Server, make_settings, start_server, stop_server
from wire.commitment import commitment
from wire.protocol import CreateRoom, DealChoice, RaceFinished, RaceStarted, RoomState

Sessions = async_sessionmaker[AsyncSession]
RULE_SET = "all-fours"
"""Nearly half its deals are won, each decided in milliseconds (docs/winnability.md)."""
TARGET = 2


@pytest_asyncio.fixture
async def pooled(sessions: Sessions, database_url: str) -> AsyncIterator[Server]:
    """The server, filling a pool of TARGET All Fours deals, its rooms waiting 0.6 s at most."""
    running = await start_server(make_settings(
        database_url, winnable_pool_target=TARGET, winnable_pool_rule_sets=(RULE_SET,),
        winnable_pool_budget_s=0.5, winnable_pool_wait_s=0.6))
    try:
        yield running
    finally:
        await stop_server(running)


async def pool_ready(server: Server, count: int) -> dict[str, Any]:
    """/healthz once the pool holds ``count`` deals of RULE_SET."""
    for _ in range(300):
        status, health = await server.http_get("/healthz")
        assert status == 200
        ready = health["winnable_pool"]["ready"]  # (null until first counted)
        if ready is not None and ready[RULE_SET] >= count:
            return health  # type: ignore[no-any-return]
        await asyncio.sleep(0.1)
    raise AssertionError("the pool was never filled")


async def winnable_room(client: RaceClient, rule_set: str = RULE_SET) -> RoomState:
    room = await client.request(CreateRoom(type="create_room", rule_set=rule_set, seats=2,
                                           deal=DealChoice(kind="secret", winnable=True)))
    assert isinstance(room, RoomState)
    client.room_code = room.code
    return room


async def solo_race(client: RaceClient) -> RaceFinished:
    """Start the room alone and resign: the race's end, with its seed revealed."""
    await client.start()
    started = await client.next_event(RaceStarted)
    assert started.deal_number is None  # secret until the end
    await client.resign()
    finished = await client.next_event(RaceFinished)
    await client.leave()
    return finished


async def test_the_pool_is_filled_with_proved_deals_and_healthz_says_how_full(
        pooled: Server, sessions: Sessions) -> None:
    health = await pool_ready(pooled, TARGET)
    assert health["winnable_pool"]["target"] == TARGET and health["winnable_pool"]["filled_here"]
    async with sessions.begin() as session:
        rows = (await session.scalars(select(WinnableDealRow))).all()
    assert len(rows) >= TARGET and all(row.used_at is None for row in rows)
    for row in rows:  # every one is won, as the engine's own search tells again
        game = find_rule_set(RULE_SET)(row.seed)
        assert solve(game, Budget(nodes=20_000)).result is Result.WON


async def test_a_winnable_room_takes_a_pooled_deal_once_and_reveals_it_only_at_the_end(
        pooled: Server, sessions: Sessions) -> None:
    await pool_ready(pooled, TARGET)
    ann = await RaceClient.connect(pooled.url, record=True)
    await ann.hello(name="Ann")
    seeds = []
    for _ in range(2):
        room = await winnable_room(ann)
        assert room.winnable is True
        finished = await solo_race(ann)
        assert finished.seed is not None
        seeds.append(int(finished.seed))
    assert seeds[0] != seeds[1], "each pooled deal is used once"
    assert ann.received is not None
    before_end = ann.received[:next(index for index, frame in enumerate(ann.received)
                                    if '"race_finished"' in frame)]
    assert not any(str(seeds[0]) in frame for frame in before_end)
    async with sessions.begin() as session:
        used = {row.seed: row.used_at for row in await session.scalars(select(WinnableDealRow))}
    assert all(used[seed] is not None for seed in seeds)
    race_id = finished.race_id
    record = await ann.race_record(race_id)
    assert record["winnable"] is True and record["solver"]["result"] == "won"


async def test_without_a_ready_deal_the_room_falls_back_to_an_unproved_one_and_says_so(
        sessions: Sessions, database_url: str) -> None:
    empty = await start_server(make_settings(database_url, winnable_pool_wait_s=0.6))
    try:  # (no filler: the pool stays empty)
        ann = await empty.client("Ann")
        loop = asyncio.get_running_loop()
        began = loop.time()
        room = await winnable_room(ann, "four-corners")  # never pooled: at once
        assert room.winnable is False and loop.time() - began < 0.5
        await ann.leave()
        began = loop.time()
        room = await winnable_room(ann)  # pooled, but none is ready: after the wait
        assert room.winnable is False and loop.time() - began >= 0.5
        finished = await solo_race(ann)
        assert finished.seed is not None  # an ordinary secret deal, revealed at the end
    finally:
        await stop_server(empty)


async def test_the_daily_deal_is_drawn_from_the_pool_once_for_everyone(
        pooled: Server, sessions: Sessions) -> None:
    await pool_ready(pooled, TARGET)
    ann, bob = await pooled.client("Ann"), await pooled.client("Bob")
    rooms = [await client.daily(RULE_SET) for client in (ann, bob)]
    assert [room.winnable for room in rooms] == [True, True]
    async with sessions.begin() as session:
        daily = await session.get_one(DailyDealRow, (RULE_SET, datetime.now(UTC).date()))
        taken = await session.get_one(WinnableDealRow, (RULE_SET, daily.seed))
    assert daily.winnable is True and taken.used_at is not None
    started = await ann.next_event(RaceStarted)
    assert started.deal_number is None and started.commitment == commitment(daily.seed)


async def test_without_a_ready_deal_the_daily_deal_is_a_random_one_and_says_so(
        server: Server) -> None:
    ann = await server.client("Ann")
    assert (await ann.daily(RULE_SET)).winnable is False  # the pool is empty: no wait
    cy = await server.client("Cy")
    assert (await cy.daily("four-corners")).winnable is None  # never pooled
