"""``patience-race serve --workers 2`` as real processes, with Redis: races whose racers are on
different workers, and ``kill -9`` of a worker in the middle of them.

Needs PATIENCE_RACE_TEST_REDIS_URL (CI sets it); without it these tests are skipped, all but
the first, which checks that more than one worker without Redis is refused.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import redis.asyncio as redis
from sqlalchemy import func, select

from clients.sdk import RaceClient
from server.settings import Settings
from server.storage.models import MoveRow, RaceRow
from tests.server.conftest import drop_redis_keys
from tests.server.test_crash import Racer, come_back, play_on_and_finish
from tests.server.test_server import Sessions
from wire.protocol import YourView

SERVING = re.compile(r"serving on (ws://[\d.]+:\d+/ws) with (\d+) workers")
WORKER = re.compile(r"worker (\d+) \(pid (\d+)\) ready, its own address (ws://[\d.]+:\d+/ws)")
TAKEOVER_S = 20.0


@dataclass
class Workers:
    process: asyncio.subprocess.Process
    url: str
    prefix: str
    own: dict[int, str] = field(default_factory=dict)
    """Each worker's own address, by its number."""
    pids: dict[int, int] = field(default_factory=dict)


async def read_until(
    process: asyncio.subprocess.Process, workers: Workers | None, pattern: re.Pattern[str]
) -> re.Match[str]:
    assert process.stderr is not None
    async with asyncio.timeout(60):
        while True:
            line = (await process.stderr.readline()).decode()
            assert line, "the server exited before serving"
            worker = WORKER.search(line)
            if worker is not None and workers is not None:
                workers.own[int(worker.group(1))] = worker.group(3)
                workers.pids[int(worker.group(1))] = int(worker.group(2))
            match = pattern.search(line)
            if match is not None:
                return match


@asynccontextmanager
async def serving_workers(database_url: str, redis_url: str) -> AsyncIterator[Workers]:
    prefix = f"test-{secrets.token_hex(4)}:"
    env = dict(
        os.environ,
        PATIENCE_RACE_COUNTDOWN_S="0.2",
        PATIENCE_RACE_PORT="0",
        PATIENCE_RACE_WINNABLE_POOL_TARGET="0",
        PATIENCE_RACE_VERDICT_BUDGET_S="0",
        PATIENCE_RACE_REDIS_PREFIX=prefix,
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server.commands",
        "serve",
        "--workers",
        "2",
        "--redis-url",
        redis_url,
        "--database-url",
        database_url,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    workers = Workers(process, "", prefix)
    workers.url = (await read_until(process, workers, SERVING)).group(1)
    draining = asyncio.create_task(drain(process, workers))
    try:
        yield workers
    finally:
        process.send_signal(signal.SIGTERM)
        await process.wait()
        draining.cancel()
        await drop_redis_keys(redis_url, prefix)


async def drain(process: asyncio.subprocess.Process, workers: Workers) -> None:
    """Keep reading what the server prints (noting workers started again)."""
    assert process.stderr is not None
    while line := (await process.stderr.readline()).decode():
        worker = WORKER.search(line)
        if worker is not None:
            workers.own[int(worker.group(1))] = worker.group(3)
            workers.pids[int(worker.group(1))] = int(worker.group(2))


def test_each_worker_listens_on_a_port_of_its_own_after_the_public_one() -> None:
    """By default the ports after the public port (README, docs/deploy.md), never random ones
    unless the public port is (0, as in the tests); ``worker_port`` sets the first."""
    assert [Settings(port=8765).worker_own_port(index) for index in range(3)] == [8766, 8767, 8768]
    assert Settings(port=8765, worker_port=8800).worker_own_port(1) == 8801
    assert Settings(port=8765, worker_port=0).worker_own_port(1) == 0
    assert Settings(port=0).worker_own_port(1) == 0


def test_more_than_one_worker_without_redis_is_refused() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PATIENCE_RACE_REDIS_URL"}
    done = subprocess.run(
        [sys.executable, "-m", "server.commands", "serve", "--workers", "2"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--redis-url" in done.stderr


async def open_race(urls: tuple[str, str], rule_set: str, deal: int) -> list[Racer]:
    return [Racer(client, legal) for client, legal in await seat_two(urls, rule_set, deal)]


async def seat_two(
    urls: tuple[str, str], rule_set: str, deal: int
) -> list[tuple[RaceClient, list[str]]]:
    """Ann on the first address opens the room, Bob on the second joins it (and stays there,
    ignoring ``reconnect_to``, so his requests take the hop); both ready, the race starts.
    Each racer's client and first legal moves."""
    clients = []
    for name, url in zip(("Ann", "Bob"), urls, strict=True):
        client = await RaceClient.connect(url, follow_reconnect_to=False)
        await client.hello(name=name)
        clients.append(client)
    room = await clients[0].create_room(rule_set, seats=2, deal="number", number=deal)
    await clients[1].join(room.code)
    for client in clients:
        await client.ready()
    return [(client, (await client.next_event(YourView)).view.legal_moves) for client in clients]


async def holder(workers: Workers, redis_url: str, code: str) -> str | None:
    connection = redis.from_url(redis_url, decode_responses=True)
    try:
        return await connection.get(f"{workers.prefix}room:{code}")
    finally:
        await connection.aclose()


async def test_a_race_across_workers_and_kill_9_of_one_loses_no_acknowledged_move(
    sessions: Sessions, database_url: str, redis_url: str
) -> None:
    async with serving_workers(database_url, redis_url) as workers:
        first, second = workers.own[0], workers.own[1]
        races = [
            await open_race(urls, rule_set, deal)
            for urls, rule_set, deal in (
                ((first, second), "octagon", 1),
                ((second, first), "hidden-cards", 2),
                ((first, second), "puss-in-the-corner", 3),
                ((second, first), "cornerstones", 4),
            )
        ]
        await asyncio.gather(
            *(racer.play(3 + index) for race in races for index, racer in enumerate(race))
        )
        codes = [race[0].client.room_code for race in races]
        assert all(code is not None for code in codes)
        killed = await holder(workers, redis_url, codes[0] or "")
        assert killed is not None and killed.split("-")[-2] == str(workers.pids[0])

        os.kill(workers.pids[0], signal.SIGKILL)
        async with asyncio.timeout(TAKEOVER_S):  # the live worker takes over worker 0's rooms
            while any(
                held in (killed, None)
                for held in [await holder(workers, redis_url, code or "") for code in codes]
            ):
                await asyncio.sleep(0.1)
        acked_before = {racer.client.player_id: racer.acked for race in races for racer in race}

        # every racer, on whichever worker, comes back by the public URL
        await come_back(races, workers.url)
        await play_on_and_finish(races)

    async with sessions() as session:
        stored = await session.scalar(select(func.count()).select_from(MoveRow))
        ended = await session.scalar(
            select(func.count()).select_from(RaceRow).where(RaceRow.ended_at.is_not(None))
        )
    assert stored == sum(racer.acked for race in races for racer in race)
    assert ended == len(races)
    assert all(acked_before[r.client.player_id] <= r.acked for race in races for r in race)


async def test_a_worker_that_stalls_past_its_heartbeat_lets_go_of_the_rooms_taken_over(
    sessions: Sessions, database_url: str, redis_url: str
) -> None:
    """SIGSTOP a worker for longer than its heartbeat lives (a frozen machine, not a dead one):
    the other takes its rooms over; woken, the stalled one finds its heartbeat had expired,
    lets go of those rooms and closes its connections in them (1012), so that one worker
    alone acts for each room; the racers resume where the room is now, and nothing is lost."""
    async with serving_workers(database_url, redis_url) as workers:
        first, second = workers.own[0], workers.own[1]
        race = await open_race((first, first), "octagon", 7)
        await asyncio.gather(*(racer.play(2) for racer in race))
        code = race[0].client.room_code or ""
        stalled = await holder(workers, redis_url, code)

        os.kill(workers.pids[0], signal.SIGSTOP)
        try:
            async with asyncio.timeout(TAKEOVER_S):
                while await holder(workers, redis_url, code) in (stalled, None):
                    await asyncio.sleep(0.1)
        finally:
            os.kill(workers.pids[0], signal.SIGCONT)
        async with asyncio.timeout(TAKEOVER_S):  # woken, it closes its racers' connections
            for racer in race:
                await racer.client.ws.wait_closed()
        assert {racer.client.ws.close_code for racer in race} == {1012}

        await come_back([race], second)
        await play_on_and_finish([race])

    async with sessions() as session:
        stored = await session.scalar(select(func.count()).select_from(MoveRow))
    assert stored == sum(racer.acked for racer in race)
