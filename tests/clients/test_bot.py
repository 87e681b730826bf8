"""The practice bot against a real server: it joins, plays legal moves to its end, and reports."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from clients.bot import run_bot
from server.protocol import RaceFinished, YourView
from tests.server.test_server import Server


async def test_a_bot_races_a_person_to_the_end(server: Server) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room("octagon", deal="number", number=5)
    bot = asyncio.create_task(run_bot(server.url, room.code, "Robo", "greedy", pace=0, seed=1))
    await asyncio.sleep(0.3)
    await ann.ready()
    await ann.next_event(YourView)
    await ann.resign()
    result = await asyncio.wait_for(bot, 60)
    assert result.status in {"won", "lost"} and result.moves > 10
    assert result.ranking is not None
    assert [entry.name for entry in result.ranking] == ["Robo", "Ann"]
    finished = await ann.next_event(RaceFinished)
    assert finished.ranking == result.ranking


async def test_the_bot_command_joins_by_code(server: Server) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room("hidden-cards", deal="number", number=7)
    command = [sys.executable, "-m", "clients.cli", "bot", room.code, "--strategy", "random",
               "--pace", "0.01", "--name", "Randy", "--server", server.url, "--seed", "3"]
    process = await asyncio.create_subprocess_exec(*command, stdout=subprocess.PIPE,
                                                   stderr=subprocess.PIPE)
    for _ in range(100):
        state = await ann.next_event(type(room))
        if len(state.seats) == 2:
            break
    await ann.ready()
    await ann.next_event(YourView)
    await ann.resign()
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    text = out.decode()
    assert text.startswith("Randy: ") and "1. Randy" in text and "2. Ann: resigned" in text
