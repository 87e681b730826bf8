"""The practice bot against a real server: it joins, plays legal moves to its end, and reports."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys

import pytest
from sqlalchemy import select, update

from clients.bot import come_back, run_bot, silent
from clients.sdk import RaceClient
from engine.moves import Move
from engine.registry import find_rule_set
from server.storage.models import PlayerRow
from tests.server.cluster.test_bus import two_workers
from tests.server.test_server import Server, Sessions, stop_server
from wire.protocol import RaceFinished, RoomState, YourView

TIME_LIMIT_S = 30
"""The shortest time limit a room may have."""


async def start_bot(url: str, code: str, *options: str) -> asyncio.subprocess.Process:
    """``patience-race bot CODE --server URL OPTIONS``, as a person runs it."""
    command = [sys.executable, "-m", "clients.cli", "bot", code, "--server", url, *options]
    return await asyncio.create_subprocess_exec(
        *command, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


async def until_seated(host: RaceClient, room: RoomState, seats: int) -> None:
    while len(room.seats) < seats:
        room = await host.next_event(RoomState)


async def test_a_bot_races_a_person_to_the_end(server: Server) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room("octagon", deal="number", number=5)
    said: list[str] = []
    bot = asyncio.create_task(
        run_bot(server.url, room.code, "Robo", "greedy", pace=0, seed=1, say=said.append)
    )
    await until_seated(ann, room, 2)
    await ann.ready()
    await ann.next_event(YourView)
    await ann.resign()
    result = await asyncio.wait_for(bot, 60)
    assert result.status in {"won", "lost"} and result.moves > 10
    assert [entry.name for entry in result.ranking] == ["Robo", "Ann"]
    finished = await ann.next_event(RaceFinished)
    assert finished.ranking == result.ranking
    assert said == [
        f"Robo is in room {room.code} (The Octagon): greedy, as fast as the server "
        "answers once the race starts"
    ], "no line per move unless verbose"


async def test_the_bot_says_it_is_a_bot_and_is_marked_as_one(
    server: Server, sessions: Sessions
) -> None:
    """Its hello says ``bot``: its seat and its line of the ranking are marked, and its
    account is a bot's (issue 27)."""
    ann = await server.client("Ann")
    room = await ann.create_room("octagon", deal="number", number=5)
    bot = asyncio.create_task(run_bot(server.url, room.code, "Robo", "greedy", pace=0, seed=1))
    while len(room.seats) < 2:
        room = await ann.next_event(RoomState)
    assert [(seat.name, seat.bot) for seat in room.seats] == [("Ann", False), ("Robo", True)]
    await ann.ready()
    await ann.next_event(YourView)
    await ann.resign()
    result = await asyncio.wait_for(bot, 60)
    assert {entry.name: entry.bot for entry in result.ranking} == {"Robo": True, "Ann": False}
    async with sessions.begin() as session:
        robo = await session.scalar(select(PlayerRow).where(PlayerRow.name == "Robo"))
    assert robo is not None and robo.bot


async def test_the_bot_command_joins_by_code_and_with_verbose_tells_every_move(
    server: Server,
) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room("hidden-cards", deal="number", number=7)
    process = await start_bot(
        server.url,
        room.code,
        "--strategy",
        "random",
        "--pace",
        "0.01",
        "--name",
        "Randy",
        "--seed",
        "3",
        "--verbose",
    )
    await until_seated(ann, room, 2)
    await ann.ready()
    await ann.next_event(YourView)
    await ann.resign()
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    assert lines[0] == (
        f"Randy is in room {room.code} (Hidden Cards): random, a move every "
        "0.01 s once the race starts"
    )
    moves = [line for line in lines if re.fullmatch(r"  \d+\. .+ \(\d+/52 home\)", line)]
    first = find_rule_set("hidden-cards")(7)
    first.play(Move.parse("5D heap:1 -> heap:5 bottom"))
    assert moves[0] == f"  1. 5D heap:1 -> heap:5 bottom ({first.foundation_count()}/52 home)"
    end = re.fullmatch(r"Randy: (won|lost) after (\d+) moves, (\d+)/52 home", lines[-3])
    assert end is not None, lines[-3]
    assert len(moves) == int(end.group(2)) and lines[1:-3] == moves
    dealt_home = find_rule_set("hidden-cards")(7).foundation_count()
    assert lines[-2].startswith("  1. Randy: ")
    assert lines[-1] == f"  2. Ann: resigned, {dealt_home} home"


async def test_the_bot_says_how_the_race_ended_when_the_time_limit_ends_it_during_its_move(
    server: Server,
) -> None:
    """The bot's first move comes after the time limit has ended the race: the server refuses
    it (not_racing), and the bot tells how the race ended as it does at any other end."""
    ann = await server.client("Ann")
    room = await ann.create_room("hidden-cards", deal="number", number=7, time_limit_s=TIME_LIMIT_S)
    process = await start_bot(
        server.url, room.code, "--pace", str(TIME_LIMIT_S + 2), "--name", "Robo"
    )
    await until_seated(ann, room, 2)
    await ann.ready()
    await ann.next_event(YourView)
    out, err = await asyncio.wait_for(process.communicate(), TIME_LIMIT_S + 60)
    assert (process.returncode, err.decode()) == (0, "")
    lines = out.decode().splitlines()
    dealt_home = find_rule_set("hidden-cards")(7).foundation_count()
    assert lines[:2] == [
        f"Robo is in room {room.code} (Hidden Cards): greedy, a move every 32 s once the race "
        "starts",
        f"Robo: timed out after 0 moves, {dealt_home}/52 home",
    ]
    ranked = sorted(line.split(". ", 1)[1] for line in lines[2:])
    assert ranked == [f"Ann: timed out, {dealt_home} home", f"Robo: timed out, {dealt_home} home"]


async def test_the_bot_command_says_why_it_cannot_join(server: Server) -> None:
    process = await start_bot(server.url, "NOSUCHROOM")
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 1
    assert err.decode() == "patience-race bot: there is no room 'NOSUCHROOM'\n"


async def test_the_bot_command_says_when_there_is_no_server_to_join() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        address = f"ws://127.0.0.1:{unused.getsockname()[1]}/ws"
        process = await start_bot(address, "ABCD1234")
        out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 1
    said = err.decode()
    assert said.startswith(f"patience-race bot: no connection to {address}: "), said
    assert "Traceback" not in said


async def test_the_bot_command_says_when_the_server_goes_away(server: Server) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room("octagon")
    process = await start_bot(server.url, room.code, "--reconnect-for", "1")
    await until_seated(ann, room, 2)
    await stop_server(server)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 1
    said = err.decode()
    assert said.startswith(f"patience-race bot: no connection to {server.url}: "), said
    assert "Traceback" not in said


async def test_the_bot_command_says_which_name_it_cannot_use(server: Server) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room("octagon")
    process = await start_bot(server.url, room.code, "--name", "Ro\u202ebo")
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 1
    said = err.decode()
    assert said.startswith("patience-race bot: choose another name: "), said
    assert "bidirectional" in said and "Traceback" not in said


async def test_the_bot_command_prints_a_stored_name_without_its_control_characters(
    server: Server, sessions: Sessions
) -> None:
    """A name stored before names were checked may hold an escape sequence or a bidirectional
    override: printed as written, it would clear the screen or turn the line around."""
    hostile = "Ann\x1b[2J\u202e"
    first = await server.client("Ann")
    await first.close()
    async with sessions.begin() as session:
        await session.execute(
            update(PlayerRow).where(PlayerRow.id == first.player_id).values(name=hostile)
        )
    ann = await RaceClient.connect(server.url)
    await ann.hello(token=first.token)
    room = await ann.create_room("octagon", deal="number", number=5)
    process = await start_bot(server.url, room.code, "--pace", "0")
    await until_seated(ann, room, 2)
    await ann.ready()
    await ann.next_event(YourView)
    await ann.resign()
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    printed = out.decode()
    assert "\x1b" not in printed and "\u202e" not in printed
    assert "  2. Ann\\x1b[2J\\u202e: resigned, 8 home" in printed.splitlines()


@pytest.mark.parametrize("stays", [False, True], ids=["its-worker-stops", "closed-with-1012"])
async def test_the_bot_comes_back_when_the_worker_holding_its_room_goes(
    sessions: Sessions,
    database_url: str,
    redis_url: str,
    stays: bool,
    request: pytest.FixtureRequest,
) -> None:
    """The room is on the first worker, the bot reaches the second. Following ``reconnect_to``
    it moves to the first and loses its connection when that stops; staying (``hopping``) its
    connection is closed with 1012. Either way it comes back by the second, its server's
    address, where the room is rebuilt, and races on to the end."""
    if stays:
        request.getfixturevalue("hopping")
    async with two_workers(database_url, redis_url) as (first, second):
        ann = await first.client("Ann")
        room = await ann.create_room("octagon", deal="number", number=5)
        said: list[str] = []
        bot = asyncio.create_task(
            run_bot(
                second.url,
                room.code,
                "Robo",
                "greedy",
                pace=0.05,
                seed=1,
                say=said.append,
                verbose=True,
            )
        )
        await until_seated(ann, room, 2)
        await ann.ready()
        await ann.next_event(YourView)
        async with asyncio.timeout(10):
            while not any(line.startswith("  3. ") for line in said):
                await asyncio.sleep(0.02)
        await stop_server(first)
        ann.url = second.url
        await come_back(ann, silent)
        await ann.resign()
        result = await asyncio.wait_for(bot, 60)
        assert said.count("  reconnected") == 1
        assert result.status in {"won", "lost"}
        assert [entry.name for entry in result.ranking] == ["Robo", "Ann"]
