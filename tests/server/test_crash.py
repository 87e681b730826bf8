"""``kill -9`` of a real server process in the middle of many races, then a restart: every race
resumes from the stored moves, racers reconnect and carry on, and no acknowledged move or
announced result is missing."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from clients.sdk import RaceClient
from server.db import EntryRow, MoveRow, RaceRow
from server.protocol import RaceFinished, YourView

Sessions = async_sessionmaker[AsyncSession]
SERVING = re.compile(r"serving on (ws://[\d.]+:\d+/ws)")
OUTAGE_S = 2.0


@dataclass
class ServerProcess:
    process: asyncio.subprocess.Process
    url: str


async def start_process(database_url: str) -> ServerProcess:
    env = dict(os.environ, PATIENCE_RACE_COUNTDOWN_S="0.2", PATIENCE_RACE_PORT="0")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "clients.cli", "serve", "--database-url", database_url, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    assert process.stderr is not None
    async with asyncio.timeout(60):
        match = None
        while match is None:
            line = (await process.stderr.readline()).decode()
            assert line, "the server exited before serving"
            match = SERVING.search(line)
    asyncio.create_task(_drain(process))
    return ServerProcess(process, match.group(1))


async def _drain(process: asyncio.subprocess.Process) -> None:
    assert process.stderr is not None
    while await process.stderr.readline():
        pass


@dataclass
class Racer:
    client: RaceClient
    legal: list[str]
    acked: int = 0
    """Moves the server acknowledged, resignation included."""
    playing: bool = True

    async def play(self, moves: int) -> None:
        for _ in range(moves):
            if self.playing:
                await self._acknowledged(self.legal[0])

    async def finish(self) -> None:
        if self.playing:
            await self._acknowledged("resign")

    async def _acknowledged(self, move: str) -> None:
        ack = await self.client.move(move)
        self.legal, self.acked = ack.legal_moves, self.acked + 1
        self.playing = ack.status == "in_progress"


async def open_race(url: str, rule_set: str, deal: int) -> list[Racer]:
    clients = []
    for name in ("Ann", "Bob"):
        client = await RaceClient.connect(url)
        await client.hello(name=name)
        clients.append(client)
    room = await clients[0].create_room(rule_set, deal="number", number=deal)
    await clients[1].join(room.code)
    for client in clients:
        await client.ready()
    return [Racer(client, (await client.next_event(YourView)).view.legal_moves)
            for client in clients]


async def test_kill_9_then_restart_resumes_every_race_and_loses_nothing(
        sessions: Sessions, database_url: str) -> None:
    first = await start_process(database_url)
    races = [await open_race(first.url, rule_set, deal) for rule_set, deal in
             (("octagon", 1), ("hidden-cards", 2), ("puss-in-the-corner", 3), ("all-fours", 4))]
    done = await open_race(first.url, "octagon", 5)
    for racer in done:
        await racer.finish()
    announced = await done[0].client.next_event(RaceFinished)
    await asyncio.gather(*(racer.play(3 + index) for race in races
                           for index, racer in enumerate(race)))

    first.process.send_signal(signal.SIGKILL)
    await first.process.wait()
    for race in races:
        for racer in race:
            await racer.client.close()
    await asyncio.sleep(OUTAGE_S)
    before_crash = {racer.client.player_id: racer.acked for race in races for racer in race}

    second = await start_process(database_url)
    try:
        for race in races:
            for racer in race:
                racer.client.url = second.url
                resynced = await racer.client.reconnect()
                assert resynced.full
                view = (await racer.client.next_event(YourView)).view
                assert view.moves == racer.acked, "every acknowledged move survived"
                racer.legal = view.legal_moves
        await asyncio.gather(*(racer.play(2) for race in races for racer in race))
        for race in races:
            for racer in race:
                await racer.finish()
            finished = await race[0].client.next_event(RaceFinished, timeout=30)
            assert len(finished.ranking) == 2
    finally:
        second.process.send_signal(signal.SIGTERM)
        await second.process.wait()

    async with sessions() as session:
        ann = races[0][0].client.player_id
        times = list(await session.scalars(
            select(MoveRow.at_ms).where(MoveRow.player_id == ann).order_by(MoveRow.index)))
        stored = await session.scalar(select(func.count()).select_from(MoveRow))
        unranked = await session.scalar(select(func.count()).select_from(EntryRow)
                                        .where(EntryRow.rank.is_(None)))
        ended = await session.scalar(select(func.count()).select_from(RaceRow)
                                     .where(RaceRow.ended_at.is_not(None)))
        kept = await session.scalar(select(EntryRow.rank).where(
            EntryRow.race_id == announced.race_id, EntryRow.player_id == done[0].client.player_id))
    acknowledged = sum(racer.acked for race in [*races, done] for racer in race)
    assert stored == acknowledged, "every acknowledged move (and resignation) is stored once"
    resumed_at = before_crash[ann]
    assert times[resumed_at] - times[resumed_at - 1] < OUTAGE_S * 1000, (
        "the race clock did not run while the server was down")
    assert unranked == 0 and ended == len(races) + 1
    assert kept == next(e.rank for e in announced.ranking
                        if e.player_id == done[0].client.player_id)
