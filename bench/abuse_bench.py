"""What invalid messages cost: one refusal, and an honest racer's acknowledgements under a flood.

    python bench/abuse_bench.py [--checkout LABEL=PATH]... [--window 10] [--attackers 8]

1. The cost of refusing one invalid message (``{"type": "hello", "name": 5}``), in-process:
   validation plus the error text, as the server built it before (reading the client messages'
   JSON Schema for the list of types, on every error) and as it does now (``server.gateway``).
2. For each ``--checkout`` (default: this tree as ``after``; ``git archive BASE | tar -x -C
   /tmp/base`` makes an older one), ``patience-race serve`` from that tree on a fresh SQLite
   file: an honest racer plays alone (a room of one, ``start``, one move every ``--pace`` s)
   for ``--window`` seconds, then as long again while ``--attackers`` connections (in their own
   process) each send ``--per-s`` invalid hellos a second, reconnecting when closed.

Figures: microseconds per refusal (median of repeats); the racer's acknowledgement p50/p95 in
ms alone and under attack, its requests left unanswered for 10 s (a stalled server), and the
attackers' frames sent and connections closed. Markdown to
stdout, progress to stderr. Run by hand; never a timing assertion.

Measured on 2026-11-24 (``--checkout before=<3bec052> --checkout after=. --window 8``): one
refusal 5318 µs before, 2.7 µs after; the racer alone p50/p95 2.6/8.0 ms (before) and
2.9/3.7 ms (after); under attack the server before answered none of its moves within the
8 s window (0 acknowledgements), after 152 at p50/p95 2.8/3.9 ms, each attacker closed (1008)
after about 6 s of invalid hellos and reconnecting.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import timeit
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic import ValidationError  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402

from clients.sdk import RaceClient, RequestRefused  # noqa: E402
from server.gateway import invalid_text, is_known_type  # noqa: E402
from server.protocol import CLIENT_MESSAGE, YourView  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
SERVING = re.compile(r"serving on ws://([\d.]+):(\d+)/")
INVALID = {"type": "hello", "name": 5}
RULE_SET = "cornerstones-arnold"


def refuse_before(data: Any) -> str:
    try:
        CLIENT_MESSAGE.validate_python(data)
    except ValidationError as invalid:
        kinds = CLIENT_MESSAGE.json_schema()["discriminator"]["mapping"]
        if not isinstance(data, dict) or data.get("type") not in kinds:
            return "unknown_type"
        return "; ".join(
            f"{'.'.join(str(p) for p in error['loc'][1:]) or 'message'}: {error['msg']}"
            for error in invalid.errors()[:3])
    return ""


def refuse_after(data: Any) -> str:
    try:
        CLIENT_MESSAGE.validate_python(data)
    except ValidationError as invalid:
        return invalid_text(invalid) if is_known_type(data) else "unknown_type"
    return ""


def cost_us(refuse: Any, number: int) -> float:
    runs = timeit.repeat(lambda: refuse(INVALID), number=number, repeat=5)
    return statistics.median(runs) / number * 1e6


def start_server(checkout: Path, directory: Path) -> tuple[subprocess.Popen[str], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PATIENCE_RACE_")}
    env.update(PYTHONPATH=str(checkout), PATIENCE_RACE_COUNTDOWN_S="0")
    process = subprocess.Popen(
        [sys.executable, "-m", "clients.cli", "serve", "--host", "127.0.0.1", "--port", "0",
         "--database-url", f"sqlite:///{directory / 'bench.sqlite3'}"], cwd=checkout, env=env,
        text=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert process.stdout is not None
    for line in process.stdout:
        match = SERVING.search(line)
        if match:
            keep_reading(process)
            return process, f"ws://{match.group(1)}:{match.group(2)}/ws"
    raise RuntimeError("the server did not start")


def keep_reading(process: subprocess.Popen[str]) -> None:
    """Read the server's output from now on, or it blocks once the pipe is full."""
    assert process.stdout is not None
    threading.Thread(target=process.stdout.read, daemon=True).start()


async def racer(url: str, seconds: float, pace: float) -> tuple[list[float], int]:
    """Acknowledgement times (ms) of one honest racer, game after game, alone in a room, and
    how many of its requests got no answer within 10 s (a stalled server)."""
    acks: list[float] = []
    stalled = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        client = await RaceClient.connect(url)
        try:
            await client.hello(name="Honest")
            while time.monotonic() < end:
                acks += await one_game(client, end, pace)
        except TimeoutError:
            stalled += 1
        finally:
            await client.close()
    return acks, stalled


async def one_game(client: RaceClient, end: float, pace: float) -> list[float]:
    acks: list[float] = []
    await client.create_room(RULE_SET, seats=2)
    await client.start()
    moves = (await client.next_event(YourView)).view.legal_moves
    while time.monotonic() < end:
        choice = next((m for m in moves if m != "resign"), None)
        if choice is None:
            break
        began = time.perf_counter()
        try:
            ack = await client.move(choice)
        except RequestRefused:
            break
        acks.append((time.perf_counter() - began) * 1000)
        if ack.status != "in_progress":
            break
        moves = ack.legal_moves
        await asyncio.sleep(pace)
    with contextlib.suppress(RequestRefused):
        await client.leave()
    return acks


async def attacker(url: str, seconds: float, per_s: float, counts: dict[str, int]) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            async with connect(url) as ws:
                reading = asyncio.create_task(drain(ws))
                while time.monotonic() < end:
                    await ws.send('{"type": "hello", "name": 5}')
                    counts["sent"] += 1
                    await asyncio.sleep(1 / per_s)
                reading.cancel()
        except ConnectionClosed:
            counts["closed"] += 1
        except OSError:
            await asyncio.sleep(0.1)


async def drain(ws: Any) -> None:
    with contextlib.suppress(ConnectionClosed):
        async for _ in ws:
            pass


def attack_process(url: str, seconds: float, attackers: int, per_s: float,
                   result: Any) -> None:
    async def run() -> dict[str, int]:
        counts = {"sent": 0, "closed": 0}
        await asyncio.gather(*(attacker(url, seconds, per_s, counts) for _ in range(attackers)))
        return counts
    result.update(asyncio.run(run()))


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(label: str, checkout: Path, args: argparse.Namespace) -> list[str]:
    with tempfile.TemporaryDirectory() as directory:
        process, url = start_server(checkout, Path(directory))
        try:
            print(f"{label}: racer alone", file=sys.stderr)
            alone, _ = await racer(url, args.window, args.pace)
            print(f"{label}: racer under attack", file=sys.stderr)
            manager = multiprocessing.Manager()
            result = manager.dict()
            attack = multiprocessing.Process(target=attack_process, args=(
                url, args.window + 1, args.attackers, args.per_s, result))
            attack.start()
            await asyncio.sleep(1)
            attacked, stalled = await racer(url, args.window, args.pace)
            await asyncio.to_thread(attack.join)
            counts = dict(result)
        finally:
            process.terminate()
            process.wait()
    return [f"| {label} | {len(alone)} | {pct(alone, 0.5):.1f} | {pct(alone, 0.95):.1f} | "
            f"{len(attacked)} | {pct(attacked, 0.5):.1f} | {pct(attacked, 0.95):.1f} | "
            f"{stalled} | {counts.get('sent', 0)} | {counts.get('closed', 0)} |"]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", action="append", default=[],
                        help="LABEL=PATH of a source tree to serve from")
    parser.add_argument("--window", type=float, default=10.0)
    parser.add_argument("--pace", type=float, default=0.05)
    parser.add_argument("--attackers", type=int, default=8)
    parser.add_argument("--per-s", type=float, default=45.0)
    args = parser.parse_args()
    print("## The cost of refusing one invalid message\n")
    before, after = cost_us(refuse_before, 200), cost_us(refuse_after, 20000)
    print("| path | µs per invalid message |\n| --- | --- |")
    print(f"| before (schema read per error) | {before:.1f} |")
    print(f"| after (server.gateway) | {after:.1f} |\n")
    targets = [tuple(item.split("=", 1)) for item in args.checkout] or [("after", str(HERE))]
    print(f"## An honest racer's acknowledgements, alone and while {args.attackers} connections "
          f"send {args.per_s:g} invalid hellos a second\n")
    print("| server | acks alone | p50 ms | p95 ms | acks attacked | p50 ms | p95 ms | "
          "requests unanswered in 10 s | invalid sent | attackers closed |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, path in targets:
        for line in await measure(label, Path(path).resolve(), args):
            print(line, flush=True)


if __name__ == "__main__":
    asyncio.run(main())
