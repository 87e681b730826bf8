"""Two machines, each running ``patience-race serve --workers 2``, on one PostgreSQL and one Redis:
races whose racers are on different machines end alike for all, and both machines give the
same leaderboards.

The machines are network namespaces on a LAN made by the test (``tests.server.netns``);
PostgreSQL and Redis stay in the root namespace, reached through a forwarder on the LAN, and
the racers (in the root namespace too) connect to both machines' addresses. Needs root, ``ip``,
PATIENCE_RACE_TEST_POSTGRES_URL and PATIENCE_RACE_TEST_REDIS_URL; skipped, saying which is
missing, otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis.asyncio as redis
from sqlalchemy import func, make_url, select

from clients.sdk import RaceClient
from server.storage.engine import make_engine, make_sessionmaker
from server.storage.models import MoveRow, RaceRow
from tests.server.cluster.test_workers import SERVING, TAKEOVER_S, Workers, drain, read_until
from tests.server.conftest import (
    POSTGRES_URL_VARIABLE,
    create_database,
    drop_database,
    drop_redis_keys,
)
from tests.server.netns import Host, Lan, NoNetwork, forwarding, lan
from tests.server.test_crash import Racer
from wire.protocol import RaceFinished, YourView

PORT = 8765
"""Every machine's public port (each namespace has its own ports)."""
WORKER_PORT = 8800
"""Worker N of a machine also listens on WORKER_PORT + N: its ``reconnect_to``."""
RACES = (
    ("octagon", 11),
    ("hidden-cards", 12),
    ("puss-in-the-corner", 13),
    ("cornerstones", 14),
    ("octagon", 15),
    ("hidden-cards", 16),
)
"""Rule set and deal of each room; the creators of even rooms are on machine A, of odd ones
on machine B, and the racers who join from the other machine follow ``reconnect_to`` in the
first two rooms, and stay (each request hops between machines through Redis) in the others."""


@asynccontextmanager
async def serving_host(
    host: Host, database_url: str, redis_url: str, prefix: str
) -> AsyncIterator[Workers]:
    """``serve --workers 2`` on that machine, listening on all its addresses and advertising
    its LAN address in ``reconnect_to``."""
    env = dict(
        os.environ,
        PATIENCE_RACE_ADVERTISE_HOST=host.address,
        PATIENCE_RACE_WORKER_PORT=str(WORKER_PORT),
        PATIENCE_RACE_REDIS_PREFIX=prefix,
        PATIENCE_RACE_COUNTDOWN_S="0.2",
        PATIENCE_RACE_HTTP_RATE_BURST="1000",
        PATIENCE_RACE_NEW_PLAYERS_PER_ADDRESS_PER_MIN="1000",
        PATIENCE_RACE_WINNABLE_POOL_TARGET="0",
        PATIENCE_RACE_VERDICT_BUDGET_S="0",
    )
    process = await asyncio.create_subprocess_exec(
        *host.command(
            sys.executable,
            "-m",
            "server.commands",
            "serve",
            "--workers",
            "2",
            "--host",
            "0.0.0.0",
            "--port",
            str(PORT),
            "--redis-url",
            redis_url,
            "--database-url",
            database_url,
        ),
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    workers = Workers(process, f"ws://{host.address}:{PORT}/ws", prefix)
    draining = None
    try:
        await read_until(process, workers, SERVING)
        draining = asyncio.create_task(drain(process, workers))
        yield workers
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(15):
                    await process.wait()
            except TimeoutError:
                process.kill()
                await process.wait()
        if draining is not None:
            draining.cancel()


async def open_race(a: Workers, b: Workers, rule_set: str, deal: int, follow: bool) -> list[Racer]:
    """Ann on machine ``a`` opens the room, Bob on machine ``b`` joins it (following its
    ``reconnect_to`` once the race is on, if ``follow``)."""
    ann, bob = await RaceClient.connect(a.url), await RaceClient.connect(b.url)
    await ann.hello(name="Ann")
    await bob.hello(name="Bob")
    room = await ann.create_room(rule_set, seats=2, deal="number", number=deal)
    joined = await bob.join(room.code)
    held_at = urlsplit(joined.reconnect_to or "")
    assert held_at.hostname == urlsplit(a.url).hostname, "the room's machine, by its address"
    assert held_at.port in (WORKER_PORT, WORKER_PORT + 1)
    for client in (ann, bob):
        await client.ready()
    racers = [
        Racer(client, (await client.next_event(YourView)).view.legal_moves) for client in (ann, bob)
    ]
    if follow:
        bob.url = joined.reconnect_to or ""
        await bob.reconnect()
        racers[1].legal = (await bob.next_event(YourView)).view.legal_moves
    return racers


async def http_json(url: str) -> Any:
    def get() -> Any:
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.load(response)

    return await asyncio.to_thread(get)


async def deal_boards(machines: list[Workers], rule_set: str, deal: int) -> list[Any]:
    """That deal's leaderboard, as each machine's HTTP API gives it."""
    return [
        await http_json(
            f"http://{urlsplit(m.url).netloc}/api/leaderboards/{rule_set}?board=deal&deal={deal}"
        )
        for m in machines
    ]


def through(url: str, host: str, port: int) -> str:
    """``url`` with its host and port replaced (its user, password and path kept)."""
    parts = urlsplit(url)
    credentials = parts.netloc.rpartition("@")[0]
    return parts._replace(
        netloc=f"{credentials}@{host}:{port}" if credentials else f"{host}:{port}"
    ).geturl()


@dataclass
class Machines:
    a: Workers
    b: Workers
    network: Lan
    database_url: str
    """The database, as the test (in the root namespace) reaches it."""
    redis_url: str


@asynccontextmanager
async def two_machines(redis_url: str, tmp_path: Path) -> AsyncIterator[Machines]:
    """Two machines serving on a fresh database and one Redis prefix; everything made (the
    LAN, the processes, the database, the Redis keys) is gone at the end, even on failure."""
    if not os.environ.get(POSTGRES_URL_VARIABLE):
        pytest.skip(f"two machines share one PostgreSQL: set {POSTGRES_URL_VARIABLE}")
    database_url = await create_database("postgresql", tmp_path)
    prefix = f"test-{secrets.token_hex(4)}:"
    try:
        async with AsyncExitStack() as stack:
            try:
                network = stack.enter_context(lan(2))
            except NoNetwork as why:
                pytest.skip(f"cannot simulate two machines here: {why}")
            database, cache = make_url(database_url), urlsplit(redis_url)
            database_port = await stack.enter_async_context(
                forwarding(network.gateway, (database.host or "127.0.0.1", database.port or 5432))
            )
            redis_port = await stack.enter_async_context(
                forwarding(network.gateway, (cache.hostname or "127.0.0.1", cache.port or 6379))
            )
            on_lan = (
                database.set(host=network.gateway, port=database_port).render_as_string(
                    hide_password=False
                ),
                through(redis_url, network.gateway, redis_port),
            )
            # Both machines start at once, as after a deploy: both migrate the one database.
            a, b = await asyncio.gather(
                *(
                    stack.enter_async_context(serving_host(host, *on_lan, prefix))
                    for host in network.hosts
                )
            )
            yield Machines(a, b, network, database_url, redis_url)
    finally:
        await drop_database(database_url)
        await drop_redis_keys(redis_url, prefix)


async def stored_and_ended(database_url: str) -> tuple[int | None, int | None]:
    """How many moves the database holds, and how many races it has seen end."""
    engine = make_engine(database_url)
    try:
        async with make_sessionmaker(engine)() as session:
            stored = await session.scalar(select(func.count()).select_from(MoveRow))
            ended = await session.scalar(
                select(func.count()).select_from(RaceRow).where(RaceRow.ended_at.is_not(None))
            )
    finally:
        await engine.dispose()
    return stored, ended


async def finish_alike(races: list[list[Racer]]) -> list[str]:
    """Every racer resigns; both of each race get the same ranking. The races' ids."""
    for race in races:
        for racer in race:
            await racer.finish()
    ids = []
    for race in races:
        ann, bob = [await racer.client.next_event(RaceFinished, timeout=30) for racer in race]
        assert len(ann.ranking) == 2 and ann.ranking == bob.ranking
        assert ann.race_id == bob.race_id
        ids.append(ann.race_id)
    return ids


async def test_races_across_two_machines_end_alike_and_their_leaderboards_agree(
    redis_url: str, tmp_path: Path
) -> None:
    async with two_machines(redis_url, tmp_path) as machines:
        a, b = machines.a, machines.b
        races = [
            await open_race(
                *((a, b) if index % 2 == 0 else (b, a)), rule_set, deal, follow=index < 2
            )
            for index, (rule_set, deal) in enumerate(RACES)
        ]
        await asyncio.gather(
            *(racer.play(4 + seat) for race in races for seat, racer in enumerate(race))
        )
        for race_id in await finish_alike(races):
            records = [
                await http_json(f"http://{urlsplit(m.url).netloc}/api/races/{race_id}")
                for m in (a, b)
            ]
            assert records[0] == records[1]

        for rule_set, deal in RACES:
            async with asyncio.timeout(10):  # until both machines see the stored results
                while True:
                    boards = await deal_boards([a, b], rule_set, deal)
                    if all(len(board["entries"]) == 2 for board in boards):
                        break
                    await asyncio.sleep(0.1)
            assert boards[0] == boards[1]
        for race in races:
            for racer in race:
                await racer.client.close()
        stored, ended = await stored_and_ended(machines.database_url)
    assert stored == sum(racer.acked for race in races for racer in race)
    assert ended == len(RACES)


async def holders(machines: Machines, codes: list[str]) -> list[str | None]:
    """The worker holding each room, by the directory in Redis."""
    connection = redis.from_url(machines.redis_url, decode_responses=True)
    try:
        return [await connection.get(f"{machines.a.prefix}room:{code}") for code in codes]
    finally:
        await connection.aclose()


async def test_a_machine_lost_mid_race_loses_no_acknowledged_move(
    redis_url: str, tmp_path: Path
) -> None:
    async with two_machines(redis_url, tmp_path) as machines:
        a, b = machines.a, machines.b
        races = [
            await open_race(*((a, b) if index % 2 == 0 else (b, a)), rule_set, deal, follow=False)
            for index, (rule_set, deal) in enumerate(RACES[:4])
        ]
        await asyncio.gather(
            *(racer.play(3 + seat) for race in races for seat, racer in enumerate(race))
        )
        codes = [race[0].client.room_code or "" for race in races]
        lost = {str(pid) for pid in a.pids.values()}
        assert {
            held.split("-")[-2] for held in await holders(machines, codes) if held is not None
        } & lost, "machine A holds rooms"

        # Machine A loses power: every process in its namespace dies at once, supervisor too.
        pids = subprocess.run(
            ["ip", "netns", "pids", machines.network.hosts[0].namespace],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for pid in pids:
            os.kill(int(pid), signal.SIGKILL)
        async with asyncio.timeout(TAKEOVER_S):  # B takes A's rooms once A's heartbeats expire
            while any(
                held is None or held.split("-")[-2] in lost
                for held in await holders(machines, codes)
            ):
                await asyncio.sleep(0.2)

        for race in races:  # every racer, wherever it was, comes back by machine B's address
            for racer in race:
                acked = racer.acked
                racer.client.url = b.url
                await racer.client.reconnect()
                view = (await racer.client.next_event(YourView)).view
                assert view.moves == acked, "every acknowledged move survived"
                racer.legal = view.legal_moves
        await asyncio.gather(*(racer.play(2) for race in races for racer in race))
        await finish_alike(races)
        for race in races:
            for racer in race:
                await racer.client.close()
        stored, ended = await stored_and_ended(machines.database_url)
    assert stored == sum(racer.acked for race in races for racer in race)
    assert ended == len(races)
