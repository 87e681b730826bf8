"""The custom-client proof: a Node racer written from docs/protocol.md alone plays a whole race."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.server.test_server import Server, make_settings, start_server, stop_server
from wire.protocol import RaceFinished, RoomState, YourView

RACER = Path(__file__).resolve().parents[2] / "clients" / "examples" / "node-racer"

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@pytest_asyncio.fixture
async def server(
    sessions: async_sessionmaker[AsyncSession], database_url: str
) -> AsyncIterator[Server]:
    if not (RACER / "node_modules" / "ws").exists():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=RACER,
            check=True,
            capture_output=True,
            timeout=300,
        )
    running = await start_server(make_settings(database_url))
    try:
        yield running
    finally:
        await stop_server(running)


async def test_the_node_racer_plays_a_whole_race(server: Server) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room("octagon", deal="number", number=11)
    process = await asyncio.create_subprocess_exec(
        "node",
        str(RACER / "racer.mjs"),
        server.url,
        room.code,
        "Nodie",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    while len((await ann.next_event(RoomState, timeout=30)).seats) < 2:
        pass
    await ann.ready()
    await ann.next_event(YourView)
    await ann.resign()
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    assert lines[0] == f"Nodie: joined {room.code}, ready"
    assert not any("missed" in line for line in lines), "room events arrive without gaps"
    assert sum(line.startswith("Nodie: ") for line in lines) > 10, "it made moves"
    summary = json.loads(lines[-1])
    finished = await ann.next_event(RaceFinished)
    assert summary["race_id"] == finished.race_id and summary["seed"] == "11"
    assert [entry["name"] for entry in summary["ranking"]] == ["Nodie", "Ann"]
    assert summary["ranking"][0]["status"] in {"won", "lost"}


async def test_the_node_racer_waits_for_a_quick_race_and_races_in_the_room_it_is_matched_into(
    server: Server,
) -> None:
    """``--quick RULE_SET``: no code; the queue matches it with Ann (the unrated queue, where a
    program racing by itself belongs), and the room starts by itself once both are in."""
    process = await asyncio.create_subprocess_exec(
        "node",
        str(RACER / "racer.mjs"),
        server.url,
        "--quick",
        "octagon",
        "Nodie",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    ann = await server.client("Ann")
    await ann.quick_race("octagon", rated=False)
    await ann.next_event(YourView, timeout=30)
    await ann.resign()
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    assert lines[0] == "Nodie: queued for octagon"
    matched = next(line for line in lines if "matched" in line)
    assert matched.startswith("Nodie: matched into ") and "1 other racer" in matched
    summary = json.loads(lines[-1])
    finished = await ann.next_event(RaceFinished)
    assert summary["race_id"] == finished.race_id
    assert {entry["name"] for entry in summary["ranking"]} == {"Nodie", "Ann"}
