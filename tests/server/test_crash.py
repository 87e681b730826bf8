"""``kill -9`` of a real server process in the middle of many races, then a restart: every race
resumes from the stored moves, racers reconnect and carry on, and no acknowledged move or
announced result is missing."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from websockets.exceptions import ConnectionClosed

from clients.sdk import RaceClient
from server.storage.models import EntryRow, MoveRow, RaceRow
from wire.protocol import RaceFinished, RaceStarted, Resynced, YourView

Sessions = async_sessionmaker[AsyncSession]
SERVING = re.compile(r"serving on (ws://[\d.]+:\d+/ws)")
OUTAGE_S = 2.0


@dataclass
class ServerProcess:
    process: asyncio.subprocess.Process
    url: str


async def start_process(database_url: str) -> ServerProcess:
    env = dict(
        os.environ,
        PATIENCE_RACE_COUNTDOWN_S="0.2",
        PATIENCE_RACE_PORT="0",
        PATIENCE_RACE_WINNABLE_POOL_TARGET="0",
        PATIENCE_RACE_VERDICT_BUDGET_S="0",
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server.commands",
        "serve",
        "--database-url",
        database_url,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
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


async def come_back(races: list[list[Racer]], url: str) -> list[Resynced]:
    """Every racer reconnects to ``url`` and resumes, with every move it had acknowledged."""
    resumed = []
    for race in races:
        for racer in race:
            racer.client.url = url
            resumed.append(await racer.client.reconnect())
            view = (await racer.client.next_event(YourView)).view
            assert view.moves == racer.acked, "every acknowledged move survived"
            racer.legal = view.legal_moves
    return resumed


async def play_on_and_finish(races: list[list[Racer]]) -> None:
    """Two more moves each, then everyone resigns, and every race ends with both ranked."""
    await asyncio.gather(*(racer.play(2) for race in races for racer in race))
    for race in races:
        for racer in race:
            await racer.finish()
        finished = await race[0].client.next_event(RaceFinished, timeout=30)
        assert len(finished.ranking) == 2


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
    return [
        Racer(client, (await client.next_event(YourView)).view.legal_moves) for client in clients
    ]


async def test_kill_9_then_restart_resumes_every_race_and_loses_nothing(
    sessions: Sessions, database_url: str
) -> None:
    first = await start_process(database_url)
    races = [
        await open_race(first.url, rule_set, deal)
        for rule_set, deal in (
            ("octagon", 1),
            ("hidden-cards", 2),
            ("puss-in-the-corner", 3),
            ("all-fours", 4),
        )
    ]
    done = await open_race(first.url, "octagon", 5)
    for racer in done:
        await racer.finish()
    announced = await done[0].client.next_event(RaceFinished)
    await asyncio.gather(
        *(racer.play(3 + index) for race in races for index, racer in enumerate(race))
    )

    first.process.send_signal(signal.SIGKILL)
    await first.process.wait()
    for race in races:
        for racer in race:
            await racer.client.close()
    await asyncio.sleep(OUTAGE_S)
    before_crash = {racer.client.player_id: racer.acked for race in races for racer in race}

    second = await start_process(database_url)
    try:
        resumed = await come_back(races, second.url)
        assert all(resynced.full for resynced in resumed)
        await play_on_and_finish(races)
    finally:
        second.process.send_signal(signal.SIGTERM)
        await second.process.wait()

    async with sessions() as session:
        ann = races[0][0].client.player_id
        times = list(
            await session.scalars(
                select(MoveRow.at_ms).where(MoveRow.player_id == ann).order_by(MoveRow.index)
            )
        )
        stored = await session.scalar(select(func.count()).select_from(MoveRow))
        unranked = await session.scalar(
            select(func.count()).select_from(EntryRow).where(EntryRow.rank.is_(None))
        )
        ended = await session.scalar(
            select(func.count()).select_from(RaceRow).where(RaceRow.ended_at.is_not(None))
        )
        kept = await session.scalar(
            select(EntryRow.rank).where(
                EntryRow.race_id == announced.race_id,
                EntryRow.player_id == done[0].client.player_id,
            )
        )
    acknowledged = sum(racer.acked for race in [*races, done] for racer in race)
    assert stored == acknowledged, "every acknowledged move (and resignation) is stored once"
    resumed_at = before_crash[ann]
    assert times[resumed_at] - times[resumed_at - 1] < OUTAGE_S * 1000, (
        "the race clock did not run while the server was down"
    )
    assert unranked == 0 and ended == len(races) + 1
    assert kept == next(
        e.rank for e in announced.ranking if e.player_id == done[0].client.player_id
    )


async def test_kill_9_with_moves_in_flight_keeps_every_acknowledged_move(
    sessions: Sessions, database_url: str
) -> None:
    """Every racer sends each move as soon as the last is acknowledged when the server is
    killed: each has at most one move in flight, which may or may not have been stored; every
    move acknowledged before the kill is there after the restart."""
    first = await start_process(database_url)
    races = [
        await open_race(first.url, rule_set, deal)
        for rule_set, deal in (
            ("four-corners", 21),
            ("cornerstones", 22),
            ("octagon", 23),
            ("all-fours", 24),
        )
    ]
    racers = [racer for race in races for racer in race]

    async def keep_playing(racer: Racer) -> None:
        with contextlib.suppress(ConnectionError, ConnectionClosed):
            while racer.playing:
                await racer._acknowledged(racer.legal[0])

    playing = [asyncio.create_task(keep_playing(racer)) for racer in racers]
    async with asyncio.timeout(30):  # a few moves each, then the kill, while the next fly
        while sum(racer.acked for racer in racers) < 3 * len(racers):
            await asyncio.sleep(0.002)
    first.process.send_signal(signal.SIGKILL)
    await first.process.wait()
    await asyncio.gather(*playing)
    acked_before_kill = {racer.client.player_id: racer.acked for racer in racers}
    assert sum(acked_before_kill.values()) > len(racers), "moves were flowing at the kill"

    # A race whose racers had all finished is over: its room is not reopened (its record is
    # at /api/races/ID), and its moves are checked in the database below.
    going_on = [race for race in races if any(racer.playing for racer in race)]
    assert going_on, "races were going on at the kill"
    second = await start_process(database_url)
    try:
        for racer in (racer for race in going_on for racer in race):
            racer.client.url = second.url
            await racer.client.reconnect()
            view = (await racer.client.next_event(YourView)).view
            assert view.moves in (racer.acked, racer.acked + 1), (
                "the acknowledged moves, and perhaps the one in flight, survived"
            )
            racer.acked, racer.legal = view.moves, view.legal_moves
            racer.playing = view.status == "in_progress"
        for racer in (racer for race in going_on for racer in race):
            await racer.finish()
        for race in going_on:
            await race[0].client.next_event(RaceFinished, timeout=30)
    finally:
        second.process.send_signal(signal.SIGTERM)
        await second.process.wait()

    async with sessions() as session:
        stored = dict(
            (
                await session.execute(
                    select(MoveRow.player_id, func.count()).group_by(MoveRow.player_id)
                )
            ).all()
        )
    for racer in racers:
        player = racer.client.player_id
        assert player is not None
        assert stored[player] == racer.acked >= acked_before_kill[player]


KILLS_AT_START = 8


async def test_kill_9_right_after_race_started_brings_the_race_back_started_with_every_seat(
    database_url: str,
) -> None:
    """A race announced as started was stored as started, with its seats, before it was
    announced: killed within milliseconds of ``race_started``, the server brings it back
    racing, and every racer resumes into it (rather than a lobby with the host alone). Each
    restart is the next try's server."""
    server = await start_process(database_url)
    try:
        for attempt in range(KILLS_AT_START):
            clients = []
            for name in ("Ann", "Bob", "Cy"):
                client = await RaceClient.connect(server.url)
                await client.hello(name=name)
                clients.append(client)
            room = await clients[0].create_room(
                "octagon", seats=3, deal="number", number=100 + attempt
            )
            for client in clients[1:]:
                await client.join(room.code)
            for client in clients:
                await client.ready()
            await clients[-1].next_event(RaceStarted)
            server.process.send_signal(signal.SIGKILL)  # at once, nothing else awaited first
            await server.process.wait()
            for client in clients:
                await client.close()

            server = await start_process(database_url)
            for client in clients:
                client.url = server.url
                resynced = await client.reconnect()  # not_in_room if its seat was lost
                room_now = next(event for event in resynced.missed if event["type"] == "room")
                assert room_now["phase"] == "racing", f"try {attempt}: came back as a lobby"
                assert len(room_now["seats"]) == len(clients), f"try {attempt}: a seat lost"
                view = (await client.next_event(YourView)).view
                assert (view.status, view.moves) == ("in_progress", 0), f"try {attempt}"
            for client in clients:
                await client.close()
    finally:
        server.process.send_signal(signal.SIGTERM)
        await server.process.wait()
