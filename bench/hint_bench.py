"""An honest player's hints, alone and under the solver floods (issue 23, item 5).

    python bench/hint_bench.py [--attack NAME]... [--hints 6] [--pause 5]

``patience-race serve`` from this tree on a fresh SQLite file, with the solver's default
settings (hints 1.5 s, a 10 s search of each race's deal after it) but no winnable pool, whose
filling would keep a core busy whatever the attack. The honest player connects from 127.0.0.2,
another address than the attackers' 127.0.0.1 (Linux routes all of 127/8 to this machine),
practises alone on Hidden Cards deal 2 (the solver decides it at once: the time measured is
the waiting, not the search) and asks for ``--hints`` hints, ``--pause`` s apart (within its
12 a minute), making the hinted move after each. First alone, then under each attack of
``tests.server.attacks`` (default: hint-flood, verdict-flood, solver-flood) running in a child
process, which starts 3 s before the first hint so that its searches are under way.

Figures: per attack, the honest hints answered and their latency (p50 and max, ms) alone and
attacked, how many were refused (``unavailable`` or other), and what the attacker sent and got
back. Markdown to stdout, progress to stderr. Run by hand; never a timing assertion.

Measured on 2026-11-27 (issue 23, item 5), on the shared 2-core VM with other sessions' tests
running: alone, the honest hints took 21-43 ms (p50; max 35-79); every one of 6 hints was
answered under each flood, none refused: under the hint flood p50 1,081 ms (max 1,465: the
flood's search under way, at most 1.5 s, is waited for), under the verdict flood 34 ms (max
43: the verdicts search in processes of their own, at a lower priority), under both 1,070 ms
(max 1,131). Before (one process for both), the first hint under the solver flood was
``unavailable`` (tests/server/test_hints.py).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.abuse_bench import serve  # noqa: E402
from clients.sdk import RaceClient, RequestRefused  # noqa: E402
from tests.server.attacks import ATTACKS, Target, ready, run_attack  # noqa: E402
from wire.protocol import YourView  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
SERVING = re.compile(r"serving on ws://([\d.]+):(\d+)/")
HONEST_ADDRESS = "127.0.0.2"
RULE_SET, DEAL = "hidden-cards", 2
HEAD_START_S = 3.0
DEFAULT_ATTACKS = ("hint-flood", "verdict-flood", "solver-flood")


def start_server(directory: Path) -> tuple[subprocess.Popen[str], str]:
    return serve(HERE, ["--database-url", f"sqlite:///{directory / 'bench.sqlite3'}"],
                 {"PATIENCE_RACE_WINNABLE_POOL_TARGET": "0"})


async def honest_hints(url: str, count: int, pause: float) -> tuple[list[float], list[str]]:
    """A new practice game from ``HONEST_ADDRESS``: ``count`` hints, each one's latency (ms),
    and the codes of those refused."""
    client = await RaceClient.connect(url, local_addr=(HONEST_ADDRESS, 0))
    try:
        await client.hello(name="Honest")
        await client.create_room(RULE_SET, deal="number", number=DEAL)
        await client.start()
        await client.next_event(YourView, timeout=30)
        times: list[float] = []
        refused: list[str] = []
        for _ in range(count):
            began = time.perf_counter()
            try:
                given = await client.hint()
            except RequestRefused as refusal:
                refused.append(refusal.code)
            else:
                times.append((time.perf_counter() - began) * 1000)
                if given.move is not None:
                    await client.move(given.move)
            await asyncio.sleep(pause)
        return times, refused
    finally:
        await client.close()


def summary(times: list[float], refused: list[str]) -> str:
    if not times:
        return f"0 | - | - | {', '.join(refused) or 0}"
    return (f"{len(times)} | {sorted(times)[len(times) // 2]:.0f} | {max(times):.0f} | "
            f"{', '.join(refused) or 0}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attack", action="append", choices=list(ATTACKS),
                        help=f"only these attacks (default: {', '.join(DEFAULT_ATTACKS)})")
    parser.add_argument("--hints", type=int, default=6, help="honest hints per round")
    parser.add_argument("--pause", type=float, default=5.0,
                        help="seconds between them (5: a player's 12 a minute)")
    args = parser.parse_args()
    rows = []
    loop = asyncio.get_running_loop()
    with (tempfile.TemporaryDirectory() as directory,
          ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool):
        pool.submit(ready).result()
        process, url = start_server(Path(directory))
        http = url.replace("ws://", "http://").removesuffix("/ws")
        try:
            for name in args.attack or DEFAULT_ATTACKS:
                print(f"{name}: alone", file=sys.stderr)
                alone = await honest_hints(url, args.hints, args.pause)
                print(f"{name}: attacked", file=sys.stderr)
                seconds = HEAD_START_S + args.hints * (args.pause + 2)
                attacking = loop.run_in_executor(pool, run_attack, name,
                                                 Target(url, http, "", ()), seconds)
                await asyncio.sleep(HEAD_START_S)
                attacked = await honest_hints(url, args.hints, args.pause)
                counts = await attacking
                rows.append(f"| {name} | {summary(*alone)} | {summary(*attacked)} | "
                            f"{', '.join(f'{k} {v}' for k, v in sorted(counts.items()))} |")
                print(rows[-1], file=sys.stderr)
        finally:
            process.terminate()
            process.wait()
    print(f"## An honest player's hints (ms), alone and under each attack ({args.hints} hints, "
          f"{args.pause:g} s apart)\n")
    print("| attack | answered alone | p50 | max | refused | answered attacked | p50 | max | "
          "refused | attacker's result |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(row)


if __name__ == "__main__":
    asyncio.run(main())
