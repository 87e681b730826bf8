"""The quick race's queue across two workers, in Redis (``server.cluster.redis_quick``): seekers
of both workers end in one room; one worker matches at a time and, dead, is replaced once its
lease runs out; a dead worker's seekers are dropped; the counts are every worker's; the practice
bot races a seeker of another worker than the matcher's; without Redis the queue is
``unavailable``.

Needs PATIENCE_RACE_TEST_REDIS_URL (skipped without it, as ``test_redis_bus.py``).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import pytest
import pytest_asyncio
import redis.asyncio as redis

from clients.sdk import RaceClient, RequestRefused
from server.cluster.practice import PRACTICE_NAME
from server.core.matching import GATHER_S
from server.core.race import Race
from tests.fakeclock import FakeClock
from tests.ports import free_port
from tests.server.cluster.test_redis_bus import Worker, worker
from tests.server.conftest import drop_redis_keys
from tests.server.test_server import Sessions, make_settings


@pytest_asyncio.fixture
async def clock() -> FakeClock:
    return FakeClock()


@pytest_asyncio.fixture
async def workers(
    sessions: Sessions, database_url: str, redis_url: str, clock: FakeClock
) -> AsyncIterator[tuple[Worker, Worker]]:
    """Two workers, "first" and "second", on one fake clock; the first holds the lease."""
    prefix = f"test-quick-{secrets.token_hex(4)}:"
    settings = make_settings(database_url, redis_url=redis_url, redis_prefix=prefix)
    try:
        async with AsyncExitStack() as stack:
            first = await stack.enter_async_context(
                worker(settings, sessions, "first", clock=clock)
            )
            async with asyncio.timeout(10):  # (it takes the lease at its first wave)
                while await first.bus.redis.get(first.bus.queue.lease) != "first":
                    await asyncio.sleep(0.1)
            second = await stack.enter_async_context(
                worker(settings, sessions, "second", clock=clock)
            )
            yield first, second
    finally:
        await drop_redis_keys(redis_url, prefix)


async def seeker(
    on: Worker, name: str, rule_set: str = "octagon", bot_after_s: int | None = None
) -> RaceClient:
    client = await RaceClient.connect(on.url)
    await client.hello(name=name)
    await client.quick_race(rule_set, bot_after_s=bot_after_s)
    return client


def race_of(code: str, *workers: Worker) -> Race:
    (race,) = [w.host.rooms[code].race for w in workers if code in w.host.rooms]
    return race


async def test_seekers_of_both_workers_race_in_one_room(
    workers: tuple[Worker, Worker], clock: FakeClock
) -> None:
    first, second = workers
    players = [
        await seeker(first, "Ann"),
        await seeker(second, "Bob"),
        await seeker(second, "Cy"),
    ]
    assert (await second.bus.waiting())["octagon"] == {"rated": 3, "unrated": 0}
    clock.advance(GATHER_S)
    found = await asyncio.gather(*(player.matched(timeout=10) for player in players))
    (code,) = {room.code for _, room in found}
    assert {matched.racers for matched, _ in found} == {3}
    race = race_of(code, first, second)
    assert sorted(racer.name for racer in race.racers.values()) == ["Ann", "Bob", "Cy"]
    holder = first if code in first.host.rooms else second
    assert {player.connected_to for player in players} == {holder.url}, "reconnect_to followed"
    assert (await first.bus.waiting())["octagon"] == {"rated": 0, "unrated": 0}
    for player in players:
        await player.close()


async def test_a_dead_matcher_is_replaced_once_its_lease_runs_out(
    workers: tuple[Worker, Worker], clock: FakeClock
) -> None:
    first, second = workers
    assert await first.bus.redis.get(first.bus.queue.lease) == "first"
    for task in first.bus._tasks:  # the first worker dies: no wave, no heartbeat
        task.cancel()
    ann, bob = await seeker(second, "Ann"), await seeker(second, "Bob")
    clock.advance(GATHER_S)
    (_, room), _ = await asyncio.gather(ann.matched(timeout=20), bob.matched(timeout=20))
    assert room.code in second.host.rooms, "the second worker matched, and holds the room"
    assert await second.bus.redis.get(second.bus.queue.lease) == "second"
    for player in (ann, bob):
        await player.close()


async def test_the_matcher_drops_the_seekers_of_a_dead_worker(
    workers: tuple[Worker, Worker], clock: FakeClock
) -> None:
    first, _ = workers
    queue = first.bus.queue
    gone = {
        "rule_set": "octagon",
        "name": "Ghost",
        "rating": 1500,
        "rated": True,
        "since": clock.now,
        "bot_after_s": None,
        "worker": "dead-worker",
        "conn": "c0",
        "id": None,
    }
    await first.bus.redis.hset(queue.seekers, "ghost", json.dumps(gone))
    ann = await seeker(first, "Ann")
    assert (await first.bus.waiting())["octagon"]["rated"] == 2
    await queue.wave()
    assert (await first.bus.waiting())["octagon"]["rated"] == 1
    assert await first.bus.redis.hexists(queue.seekers, ann.player_id or "")
    await ann.close()


async def test_seekers_waiting_when_redis_forgets_everything_are_queued_again(
    workers: tuple[Worker, Worker], redis_url: str, clock: FakeClock
) -> None:
    """Redis restarted (it keeps nothing on disk): the queue's hash is gone with every other
    key. Each worker, finding its heartbeat gone, writes its own seekers in again, as they
    asked (their wait kept), and they are matched: nobody waits for ever in a queue that no
    longer holds them."""
    first, second = workers
    ann, bob = await seeker(first, "Ann"), await seeker(second, "Bob")
    await drop_redis_keys(redis_url, first.bus.prefix)
    assert (await first.bus.waiting())["octagon"]["rated"] == 0
    async with asyncio.timeout(20):  # (the next heartbeat, within a second or two)
        while (await first.bus.waiting())["octagon"]["rated"] < 2:
            await asyncio.sleep(0.1)
    clock.advance(GATHER_S)
    (_, room), (_, other) = await asyncio.gather(ann.matched(timeout=20), bob.matched(timeout=20))
    assert room.code == other.code
    for player in (ann, bob):
        await player.close()


async def test_the_matcher_runs_the_practice_bot_for_a_seeker_of_another_worker(
    workers: tuple[Worker, Worker], clock: FakeClock
) -> None:
    first, second = workers
    first.bus.practice.url = first.url  # (the service sets it once it serves)
    ann = await seeker(second, "Ann", bot_after_s=5)
    clock.advance(5)
    matched, room = await ann.matched(timeout=10)
    assert matched.practice and room.code in first.host.rooms
    async with asyncio.timeout(10):
        while len(first.host.rooms[room.code].race.racers) < 2:
            await asyncio.sleep(0.05)
    assert sorted(r.name for r in race_of(room.code, first).racers.values()) == [
        "Ann",
        PRACTICE_NAME,
    ]
    await ann.close()


async def test_the_queue_is_unavailable_while_redis_cannot_be_reached(
    workers: tuple[Worker, Worker],
) -> None:
    first, _ = workers
    ann = await RaceClient.connect(first.url)
    await ann.hello(name="Ann")
    first.bus.queue.redis = redis.from_url(f"redis://127.0.0.1:{free_port()}/0")
    with pytest.raises(RequestRefused) as refused:
        await ann.quick_race("octagon")
    assert refused.value.code == "unavailable"
    await ann.close()
