"""Redis restarted under ``serve --workers 2``, many times, in the middle of races whose racers
are on both workers: a room has exactly one holder whatever Redis forgets (the database fences
it: ``server.fence``), and every acknowledged move is in the stored record.

Real processes: the server's two workers, and a private ``redis-server`` of this test's own
(killed with SIGKILL and started again on the same port, empty: it keeps nothing on disk).
Needs PATIENCE_RACE_TEST_REDIS_URL (which says Redis is there to be used; the test starts its
own) and runs on each database kind.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import socket
import subprocess
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

import pytest
from sqlalchemy import select

from clients.sdk import RaceClient, RequestRefused
from server.storage.models import MoveRow
from tests.ports import free_port
from tests.server.cluster.test_workers import Workers, seat_two, serving_workers
from tests.server.test_server import Sessions
from wire.protocol import ErrorCode, RaceFinished, YourView

RESTARTS = 4
RACING_BETWEEN_S = 3.0
"""How long the races run between one Redis restart and the next."""
DOWN_S = 1.5
"""How long Redis is away each time."""
PACE_S = 0.1


@dataclass
class PrivateRedis:
    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(100):
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1),
            ):
                return
            subprocess.run(["sleep", "0.05"], check=True)
        raise AssertionError("the private redis-server did not start")

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait()


@pytest.fixture
def private_redis(redis_url: str) -> Iterator[PrivateRedis]:
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server on the PATH to start a Redis of its own")
    redis = PrivateRedis(free_port())
    redis.start()
    try:
        yield redis
    finally:
        redis.kill()


@dataclass
class Racer:
    """A racer who moves every ``PACE_S`` and, whenever the connection fails or a request is
    refused, reconnects by the public address and resumes; ``acked`` is every move the server
    acknowledged, by its index."""

    client: RaceClient
    public_url: str
    legal: list[str]
    acked: dict[int, str] = field(default_factory=dict)
    playing: bool = True
    reconnects: int = 0

    async def race(self, stop: asyncio.Event) -> None:
        while self.playing and not stop.is_set():
            try:
                ack = await self.client.move(self.legal[0])
            except Exception:  # noqa: BLE001 - any failure: reconnect, resume, go on
                await self.come_back(stop)
                continue
            self.acked[ack.moves - 1] = ack.move
            self.legal, self.playing = ack.legal_moves, ack.status == "in_progress"
            await asyncio.sleep(PACE_S)

    async def come_back(self, stop: asyncio.Event) -> None:
        self.client.url = self.public_url
        while True:
            try:
                async with asyncio.timeout(15):
                    await self.client.reconnect()
                    view = (await self.client.next_event(YourView)).view
            except Exception:  # noqa: BLE001 - the cluster is still recovering: again
                await asyncio.sleep(0.3)
                continue
            self.reconnects += 1
            assert view.moves >= len(self.acked), "an acknowledged move was lost"
            self.legal, self.playing = view.legal_moves, view.status == "in_progress"
            return

    async def finish(self, stop: asyncio.Event) -> None:
        while self.playing:
            try:
                ack = await self.client.resign()
            except Exception:  # noqa: BLE001
                await self.come_back(stop)
                continue
            self.acked[ack.moves - 1] = ack.move
            self.playing = False


async def open_race(
    workers: Workers, urls: tuple[str, str], rule_set: str, deal: int
) -> list[Racer]:
    return [
        Racer(client, workers.url, legal) for client, legal in await seat_two(urls, rule_set, deal)
    ]


def get_json(url: str) -> tuple[int, object]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


@contextlib.asynccontextmanager
async def racing(races: list[list[Racer]]) -> AsyncIterator[asyncio.Event]:
    stop = asyncio.Event()
    tasks = [asyncio.create_task(racer.race(stop)) for race in races for racer in race]
    try:
        yield stop
    finally:
        stop.set()
        await asyncio.gather(*tasks)


async def test_redis_restarted_again_and_again_loses_no_acknowledged_move(
    sessions: Sessions, database_url: str, private_redis: PrivateRedis
) -> None:
    async with serving_workers(database_url, private_redis.url) as workers:
        first, second = workers.own[0], workers.own[1]
        races = [
            await open_race(workers, urls, rule_set, deal)
            for urls, rule_set, deal in (
                ((first, second), "four-corners", 11),
                ((second, first), "cornerstones", 12),
                ((first, second), "octagon", 13),
            )
        ]
        newcomer = await RaceClient.connect(workers.url, follow_reconnect_to=False)
        await newcomer.hello(name="Cy")
        async with racing(races):
            for restart in range(RESTARTS):
                await asyncio.sleep(RACING_BETWEEN_S)
                private_redis.kill()
                await asyncio.sleep(DOWN_S)
                health = get_json(
                    workers.url.replace("ws://", "http://").replace("/ws", "/healthz")
                )
                assert health[0] == 503 and isinstance(health[1], dict)
                assert health[1].get("redis") == "down"
                if restart == 0:  # a new room is refused, and the connection stays open
                    with pytest.raises(RequestRefused) as refused:
                        await newcomer.create_room("octagon")
                    assert refused.value.code == ErrorCode.UNAVAILABLE
                private_redis.start()
            await asyncio.sleep(RACING_BETWEEN_S)
        assert (await newcomer.create_room("octagon")).code  # the same connection, Redis back
        await newcomer.close()
        stop = asyncio.Event()
        http = workers.url.replace("ws://", "http://").replace("/ws", "")
        for race in races:
            for racer in race:
                await racer.finish(stop)
            finished = await race[-1].client.next_event(RaceFinished, timeout=30)
            status, record = get_json(f"{http}/api/races/{finished.race_id}")
            assert status == 200, record

    async with sessions() as session:
        stored = (
            await session.execute(
                select(MoveRow.race_id, MoveRow.player_id, MoveRow.index, MoveRow.text)
            )
        ).all()
    by_racer: dict[str, dict[int, str]] = {}
    for _race, player, index, text in stored:
        by_racer.setdefault(player, {})[index] = text
    for race in races:
        for racer in race:
            assert racer.client.player_id is not None
            kept = by_racer.get(racer.client.player_id, {})
            assert kept == {i: kept[i] for i in range(len(kept))}, "no gap in the stored moves"
            missing = {
                index: text for index, text in racer.acked.items() if kept.get(index) != text
            }
            assert not missing, f"acknowledged but not stored as acknowledged: {missing}"
    assert sum(racer.reconnects for race in races for racer in race) > 0
