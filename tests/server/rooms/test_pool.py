"""The pool of deals proved winnable (server.rooms.pool, issue 12): filled in the background by a
solver process, shown on /healthz, each deal taken by one room, its seed secret until the race
ends; a room falls back to an unproved secret deal when none is ready, and says so.

Every test runs on SQLite and, when PATIENCE_RACE_TEST_POSTGRES_URL is set, on PostgreSQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_asyncio
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from clients.sdk import RaceClient
from engine.registry import RULE_SET_NAMES, find_rule_set
from engine.solver import Budget, Result, core_name, solve
from engine.solver.compiled import RULE_SETS as COMPILED_RULE_SETS
from server.settings import Settings, pooled_rule_sets
from server.storage.models import DailyDealRow, WinnableDealRow
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
    running = await start_server(
        make_settings(
            database_url,
            winnable_pool_target=TARGET,
            winnable_pool_rule_sets=(RULE_SET,),
            winnable_pool_budget_s=0.5,
            winnable_pool_wait_s=0.6,
        )
    )
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
    room = await client.request(
        CreateRoom(
            type="create_room",
            rule_set=rule_set,
            seats=2,
            deal=DealChoice(kind="secret", winnable=True),
        )
    )
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
    pooled: Server, sessions: Sessions
) -> None:
    health = await pool_ready(pooled, TARGET)
    assert health["winnable_pool"]["target"] == TARGET and health["winnable_pool"]["filled_here"]
    async with sessions.begin() as session:
        rows = (await session.scalars(select(WinnableDealRow))).all()
    assert len(rows) >= TARGET and all(row.used_at is None for row in rows)
    for row in rows:  # every one is won, as the engine's own search tells again
        game = find_rule_set(RULE_SET)(row.seed)
        assert solve(game, Budget(nodes=20_000)).result is Result.WON


async def test_a_winnable_room_takes_a_pooled_deal_once_and_reveals_it_only_at_the_end(
    pooled: Server, sessions: Sessions
) -> None:
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
    before_end = ann.received[
        : next(index for index, frame in enumerate(ann.received) if '"race_finished"' in frame)
    ]
    assert not any(str(seeds[0]) in frame for frame in before_end)
    async with sessions.begin() as session:
        used = {row.seed: row.used_at for row in await session.scalars(select(WinnableDealRow))}
    assert all(used[seed] is not None for seed in seeds)
    race_id = finished.race_id
    record = await ann.race_record(race_id)
    assert record["winnable"] is True and record["solver"]["result"] == "won"


async def test_without_a_ready_deal_the_room_falls_back_to_an_unproved_one_and_says_so(
    sessions: Sessions, database_url: str
) -> None:
    empty = await start_server(
        make_settings(database_url, winnable_pool_wait_s=0.6, winnable_pool_rule_sets=(RULE_SET,))
    )
    try:  # (no filler: the pool stays empty)
        ann = await empty.client("Ann")
        loop = asyncio.get_running_loop()
        began = loop.time()
        room = await winnable_room(ann, "octagon")  # not pooled here: at once
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
    pooled: Server, sessions: Sessions
) -> None:
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
    sessions: Sessions, database_url: str
) -> None:
    empty = await start_server(make_settings(database_url, winnable_pool_rule_sets=(RULE_SET,)))
    try:  # (no filler: the pool stays empty)
        ann = await empty.client("Ann")
        assert (await ann.daily(RULE_SET)).winnable is False  # the pool is empty: no wait
        cy = await empty.client("Cy")
        assert (await cy.daily("octagon")).winnable is None  # not pooled here
    finally:
        await stop_server(empty)


def test_every_rule_set_is_pooled_where_the_compiled_core_searches_four_corners() -> None:
    """By default the pool is filled for all seven rule sets where the compiled core searches
    Four Corners, and for all but Four Corners where the Python search would (it wins almost
    none of its deals in the pool's budget)."""
    assert pooled_rule_sets(frozenset()) == tuple(
        name for name in RULE_SET_NAMES if name != "four-corners"
    )
    assert pooled_rule_sets(frozenset({"four-corners", "octagon"})) == RULE_SET_NAMES
    assert Settings().winnable_pool_rule_sets == pooled_rule_sets(COMPILED_RULE_SETS)
    assert ("four-corners" in Settings().winnable_pool_rule_sets) is (
        "four-corners" in COMPILED_RULE_SETS
    )


FOUR_CORNERS_WON = 27 if core_name() == "compiled" else 195
"""A Four Corners deal the solver wins at once, with choices along the way: within a few
hundred positions for the compiled core, a few thousand for the Python search."""


async def test_four_corners_gets_winnable_rooms_and_a_winnable_daily_deal_when_pooled(
    sessions: Sessions, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four Corners pooled (as by default with the compiled core): the filler keeps the deals
    it wins, and a winnable room and the daily deal take them. The filler's random draws are
    made to draw a deal won at once, so that the test waits for no search of the many it
    cannot win."""
    monkeypatch.setattr(
        "server.rooms.pool.secrets", SimpleNamespace(randbits=lambda bits: FOUR_CORNERS_WON)
    )
    running = await start_server(
        make_settings(
            database_url,
            winnable_pool_target=1,
            winnable_pool_rule_sets=("four-corners",),
            winnable_pool_budget_s=2.0,
            winnable_pool_wait_s=30.0,
        )
    )
    try:
        ann, bob = await running.client("Ann"), await running.client("Bob")
        room = await winnable_room(ann, "four-corners")  # waits for the filler's first win
        assert room.winnable is True
        finished = await solo_race(ann)
        assert finished.seed == str(FOUR_CORNERS_WON)
        record = await ann.race_record(finished.race_id)
        assert record["solver"]["result"] == "won"
        async with sessions.begin() as session:  # used: the filler keeps it again, unused
            await session.execute(update(WinnableDealRow).values(used_at=None))
        daily = await bob.daily("four-corners")
        assert daily.winnable is True
    finally:
        await stop_server(running)
