"""bench/load.py --quick drives real server processes and prints its tables. Its figures are
printed, never asserted: this only checks that a short run works end to end, against our server
and both echo servers, and that the room echo relays as it says."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

from websockets.asyncio.client import connect

from bench.echo_server import MAX_SIZE
from server.main import TRANSPORT_MAX_BYTES

ROOT = Path(__file__).resolve().parents[2]


def test_quick_closed_loop_prints_a_table_of_figures() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "load.py"),
            "--quick",
            "--modes",
            "closed",
            "--rooms",
            "4",
            "--warmup",
            "0.5",
            "--window",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for server in ("ours", "echo", "room echo"):
        row = re.search(
            rf"^\| 1 \| {server} \| ([\d,]+) \| [\d.]+ \| [\d.]+ \| [\d.]+ \| .* \| "
            r"(\d+) \| (\d+) \| (\d+) \|$",
            done.stdout,
            re.MULTILINE,
        )
        assert row, done.stdout
        assert int(row.group(1).replace(",", "")) > 0, f"{server}: no acks\n{done.stdout}"
        assert row.group(2, 4) == ("0", "0"), f"{server}: errors\n{done.stderr[-2000:]}"
    for echo in ("echo", "room echo"):
        assert re.search(
            rf"^\| server CPU per ack / {echo} \| [\d.]+ \| [\d.]+ \|$", done.stdout, re.MULTILINE
        ), done.stdout
    assert "closed loop, moves/s >= 0.5 x echo messages/s" in done.stdout


def test_the_room_echo_relays_to_the_other_members_of_its_room_only() -> None:
    asyncio.run(_relays_within_rooms_of_two())


async def _relays_within_rooms_of_two() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "bench" / "echo_server.py"),
        "--room",
        "2",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdout is not None
    try:
        async with asyncio.timeout(30):
            line = (await process.stdout.readline()).decode()
            url = re.search(r"serving on (ws://\S+)", line)
            assert url, line
            # In the order they arrive: a and b share the first room, c is alone in the second.
            # A relay goes out before the sender's echo, so that whatever c was sent before its
            # own echo would come first.
            a = await connect(url.group(1))
            b = await connect(url.group(1))
            c = await connect(url.group(1))
            await a.send("from a")
            assert await a.recv() == "from a"
            assert await b.recv() == "from a"
            await c.send("from c")
            assert await c.recv() == "from c"
            await b.send("from b")
            assert await b.recv() == "from b"
            assert await a.recv() == "from b"
            await c.send("from c again")
            assert await c.recv() == "from c again"
            for ws in (a, b, c):
                await ws.close()
    finally:
        process.terminate()
        await process.wait()


def test_the_echo_server_has_the_race_servers_frame_limit() -> None:
    assert MAX_SIZE == TRANSPORT_MAX_BYTES
