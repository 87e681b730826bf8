"""What clients hammering the HTTP API cost racers, and what the replay cache saves.

    python bench/http_bench.py [--checkout LABEL=PATH[:ENV=VALUE,...]]... [--rounds 3]

Each ``--checkout`` is a server to measure: ``patience-race serve`` run from that source tree
(``git archive BASE | tar -x -C /tmp/base`` makes one of an older commit) on a fresh SQLite file,
with the given extra settings. Without any, two servers of this tree: ``cache`` (the HTTP rate
limit lifted, to see the cache alone) and ``after`` (everything as shipped). Rounds alternate
between the servers; figures are medians over the rounds. The figures in docs/performance.md:

    git archive 0c362d8 | (mkdir /tmp/base && tar -x -C /tmp/base)
    python bench/http_bench.py --checkout before=/tmp/base \
        --checkout cache=.:PATIENCE_RACE_HTTP_RATE_PER_S=1e6,PATIENCE_RACE_HTTP_RATE_BURST=1e6 \
        --checkout after=.

Each round, on a fresh server:

1. ``--races`` finished races with a long game (cornerstones-arnold, greedy play, ~240 moves):
   one racer plays the whole game, alone in a room with a chosen deal.
2. ``GET /api/races/ID/replay?player=P`` of each: the first request, then ``--repeats`` more,
   one at a time; client-side wall time.
3. An honest racer plays (one move every ``--pace`` seconds, solo rooms, game after game) for
   ``--window`` seconds alone, then for as long while ``--hammers`` clients ask for one of those
   replays as fast as their answers come back. Each hammering client connects from its own
   loopback address (127.0.0.2, 127.0.0.3, ...: Linux routes all of 127/8 to this machine), so
   the rate limit sees them as the different clients they would be. The hammers run in their
   own process, so that reading their answers does not slow the racer's client.

Figures: replay request ms (first, cached) and their ratio; the racer's acknowledgement p50 and
p95 alone and under the hammering, the ratio p95 hammered / p95 alone (absolute figures drift
from machine to machine, ratios against the same racer alone much less); the hammers' answers a
second and how many were 429. Markdown tables to stdout, progress to stderr. Never a timing
assertion: this is run by hand (docs/performance.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.load_servers import serve_module  # noqa: E402
from clients.sdk import RaceClient  # noqa: E402
from engine.players import GreedyPlayer, play_out  # noqa: E402
from engine.registry import find_rule_set  # noqa: E402
from wire.protocol import RaceFinished, YourView  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
RULE_SET = "cornerstones-arnold"
SERVING = re.compile(r"serving on ws://([\d.]+):(\d+)/")
START_TIMEOUT_S = 60.0
REQUEST_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Target:
    label: str
    checkout: Path
    env: dict[str, str]


@dataclass
class Round:
    first_ms: list[float] = field(default_factory=list)
    cached_ms: list[float] = field(default_factory=list)
    alone_ms: list[float] = field(default_factory=list)
    hammered_ms: list[float] = field(default_factory=list)
    hammer_answers: dict[str, int] = field(default_factory=dict)
    hammer_seconds: float = 0.0


def parse_target(text: str) -> Target:
    label, _, rest = text.partition("=")
    path, _, settings = rest.partition(":")
    env = dict(item.split("=", 1) for item in settings.split(",") if item)
    return Target(label, Path(path or ".").resolve(), env)


def median_deals(count: int) -> list[tuple[int, list[str]]]:
    """``count`` deals whose greedy game is of about the median length of the first 60 deals'
    (about 240 moves, a replay of 31-46 ms when the issue was reported), with their moves."""
    games = []
    for seed in range(60):
        game = play_out(find_rule_set(RULE_SET)(seed), GreedyPlayer(random.Random(seed)))
        games.append((len(game.history), seed, [str(move) for move in game.history]))
    games.sort()
    middle = len(games) // 2 - count // 2
    return [(seed, moves) for _, seed, moves in games[middle : middle + count]]


# -- the server -----------------------------------------------------------------------------


class ServerProcess:
    def __init__(self, target: Target, directory: Path) -> None:
        self.target, self.directory = target, directory
        self.process: subprocess.Popen[str] | None = None
        self.url = self.http = ""

    def start(self) -> None:
        env = {
            key: value for key, value in os.environ.items() if not key.startswith("PATIENCE_RACE_")
        }
        env.update(
            PYTHONPATH=str(self.target.checkout),
            PATIENCE_RACE_COUNTDOWN_S="0",
            PATIENCE_RACE_RATE_PER_S="1000",
            PATIENCE_RACE_RATE_BURST="1000",
            PATIENCE_RACE_ROOMS_PER_PLAYER_PER_HOUR="1000000",
            PATIENCE_RACE_WINNABLE_POOL_TARGET="0",
            PATIENCE_RACE_VERDICT_BUDGET_S="0",
            **self.target.env,
        )
        database = f"sqlite:///{self.directory / 'bench.sqlite3'}"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                serve_module(self.target.checkout),
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--database-url",
                database,
            ],
            cwd=self.target.checkout,
            env=env,
            text=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        assert self.process.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            match = SERVING.search(line)
            if match:
                host, port = match.groups()
                self.url, self.http = f"ws://{host}:{port}/ws", f"http://{host}:{port}"
                # Keep reading its output so that the server never blocks on a full pipe.
                asyncio.get_running_loop().run_in_executor(None, self.process.stdout.read)
                return
        self.stop()
        raise RuntimeError(f"the {self.target.label} server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# -- clients --------------------------------------------------------------------------------


def http_get(http: str, path: str, source: str | None = None) -> tuple[int, int]:
    """One GET on its own connection: the status and the body's length."""
    host, port = http.removeprefix("http://").split(":")
    with socket.create_connection(
        (host, int(port)),
        timeout=REQUEST_TIMEOUT_S,
        source_address=None if source is None else (source, 0),
    ) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        data = bytearray()
        while chunk := s.recv(1 << 20):
            data += chunk
    head, _, body = bytes(data).partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), len(body)


async def solo_game(client: RaceClient, seed: int) -> YourView:
    await client.create_room(RULE_SET, seats=2, deal="number", number=seed)
    await client.start()
    return await client.next_event(YourView)


async def finished_race(url: str, seed: int, moves: list[str]) -> tuple[str, str]:
    """A race that one racer played to its end: its id and the racer's id."""
    client = await RaceClient.connect(url)
    try:
        await client.hello(name="Setup")
        await solo_game(client, seed)
        status = "in_progress"
        for move in moves:
            status = (await client.move(move)).status
        if status == "in_progress":
            await client.resign()
        finished = await client.next_event(RaceFinished, timeout=REQUEST_TIMEOUT_S)
        assert client.player_id is not None
        return finished.race_id, client.player_id
    finally:
        await client.close()


async def honest_racer(
    url: str,
    deals: list[tuple[int, list[str]]],
    pace_s: float,
    phases: list[tuple[str, float]],
    phase_started: asyncio.Queue[str],
) -> dict[str, list[float]]:
    """Play solo games at a steady pace through each phase (name, seconds); the
    acknowledgement times (ms) of each phase. Tells ``phase_started`` as each begins."""
    client = await RaceClient.connect(url)
    latencies: dict[str, list[float]] = {name: [] for name, _ in phases}
    try:
        await client.hello(name="Honest")
        game = 0
        moves: list[str] = []
        for name, seconds in phases:
            phase_started.put_nowait(name)
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                if not moves:
                    if game:
                        await client.resign()
                        await client.next_event(RaceFinished, timeout=REQUEST_TIMEOUT_S)
                        await client.leave()
                    seed, moves = deals[game % len(deals)]
                    moves = list(moves[:-1])  # leave the last one: a resignation ends it
                    await solo_game(client, seed)
                    game += 1
                sent = time.perf_counter()
                await client.move(moves.pop(0))
                latencies[name].append((time.perf_counter() - sent) * 1000)
                await asyncio.sleep(pace_s)
    finally:
        await client.close()
    return latencies


def hammer_main(http: str, path: str, sources: list[str], seconds: float) -> None:
    """The hammering clients, one thread each (run as its own process): GET ``path`` again and
    again for ``seconds``; prints the count of each status as JSON."""
    import threading
    from collections import Counter

    counts: Counter[str] = Counter()
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def hammer(source: str) -> None:
        while time.monotonic() < end:
            try:
                status, _ = http_get(http, path, source)
            except OSError as error:
                status = type(error).__name__  # type: ignore[assignment]
            with lock:
                counts[str(status)] += 1

    threads = [threading.Thread(target=hammer, args=(source,)) for source in sources]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps(dict(counts)))


def hammer_sources(count: int) -> list[str]:
    sources = [f"127.0.0.{2 + number}" for number in range(count)]
    try:
        with socket.socket() as probe:
            probe.bind((sources[0], 0))
    except OSError:
        print("127.0.0.2 cannot be bound here: every hammer comes from 127.0.0.1", file=sys.stderr)
        return ["127.0.0.1"] * count
    return sources


# -- a round --------------------------------------------------------------------------------


async def run_round(
    target: Target, args: argparse.Namespace, deals: list[tuple[int, list[str]]]
) -> Round:
    result = Round()
    with tempfile.TemporaryDirectory() as directory:
        server = ServerProcess(target, Path(directory))
        server.start()
        try:
            races = [
                await finished_race(server.url, seed, moves) for seed, moves in deals[: args.races]
            ]
            paths = [f"/api/races/{race}/replay?player={player}" for race, player in races]
            # Each race's requests from an address of their own, within one burst of the rate
            # limit (11 of 20): the figures are of answers, not of refusals.
            sources = hammer_sources(args.hammers + len(paths))[args.hammers :]
            for path, source in zip(paths, sources, strict=True):
                for attempt in range(1 + args.repeats):
                    started = time.perf_counter()
                    status, _ = await asyncio.to_thread(http_get, server.http, path, source)
                    took = (time.perf_counter() - started) * 1000
                    assert status == 200, (target.label, status)
                    (result.cached_ms if attempt else result.first_ms).append(took)
            await asyncio.sleep(args.settle)

            phases = [("alone", args.window), ("hammered", args.window)]
            started_phases: asyncio.Queue[str] = asyncio.Queue()
            racer = asyncio.create_task(
                honest_racer(server.url, deals, args.pace, phases, started_phases)
            )
            while await started_phases.get() != "hammered":
                pass
            hammers = await asyncio.create_subprocess_exec(
                sys.executable,
                __file__,
                "--hammer",
                server.http,
                paths[0],
                ",".join(hammer_sources(args.hammers)),
                str(args.window),
                stdout=asyncio.subprocess.PIPE,
            )
            output, _ = await hammers.communicate()
            latencies = await racer
            result.alone_ms, result.hammered_ms = latencies["alone"], latencies["hammered"]
            result.hammer_answers = json.loads(output)
            result.hammer_seconds = args.window
        finally:
            server.stop()
    return result


# -- report -----------------------------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report(
    targets: list[Target],
    results: dict[str, list[Round]],
    args: argparse.Namespace,
    deals: list[tuple[int, list[str]]],
) -> None:
    lengths = "/".join(str(len(moves)) for _, moves in deals[: args.races])
    print(
        f"\n{args.rounds} rounds; {args.races} finished {RULE_SET} races of "
        f"{lengths} moves; racer: one move every {args.pace * 1000:g} ms; "
        f"{args.hammers} hammering clients, {args.window:g} s windows; medians over rounds.\n"
    )
    print("| server | settings | replay first (ms) | replay cached (ms) | cached / first |")
    print("| --- | --- | ---: | ---: | ---: |")
    for target in targets:
        rounds = results[target.label]
        first = median([median(r.first_ms) for r in rounds])
        cached = median([median(r.cached_ms) for r in rounds])
        settings = ", ".join(f"{k}={v}" for k, v in target.env.items()) or "defaults"
        print(
            f"| {target.label} | {settings} | {first:.1f} | {cached:.1f} | {cached / first:.2f} |"
        )
    print(
        "\n| server | ack p50 alone | ack p95 alone | ack p50 hammered | ack p95 hammered "
        "| p95 hammered / alone | hammer answers/s | of them 429 |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for target in targets:
        rounds = results[target.label]
        p50a = median([percentile(r.alone_ms, 0.5) for r in rounds])
        p95a = median([percentile(r.alone_ms, 0.95) for r in rounds])
        p50h = median([percentile(r.hammered_ms, 0.5) for r in rounds])
        p95h = median([percentile(r.hammered_ms, 0.95) for r in rounds])
        ratio = median(
            [percentile(r.hammered_ms, 0.95) / percentile(r.alone_ms, 0.95) for r in rounds]
        )
        rate = median([sum(r.hammer_answers.values()) / r.hammer_seconds for r in rounds])
        refused = median(
            [
                r.hammer_answers.get("429", 0) / max(1, sum(r.hammer_answers.values()))
                for r in rounds
            ]
        )
        print(
            f"| {target.label} | {p50a:.1f} | {p95a:.1f} | {p50h:.1f} | {p95h:.1f} | "
            f"{ratio:.2f} | {rate:.0f} | {refused:.0%} |"
        )


async def main_async(args: argparse.Namespace) -> None:
    targets = [parse_target(text) for text in args.checkout] or [
        Target(
            "cache",
            HERE,
            {
                "PATIENCE_RACE_HTTP_RATE_PER_S": "1000000",
                "PATIENCE_RACE_HTTP_RATE_BURST": "1000000",
            },
        ),
        Target("after", HERE, {}),
    ]
    deals = median_deals(max(args.races, 4))
    results: dict[str, list[Round]] = {target.label: [] for target in targets}
    for number in range(args.rounds):
        order = targets if number % 2 == 0 else list(reversed(targets))
        for target in order:
            print(f"round {number + 1}: {target.label}", file=sys.stderr)
            results[target.label].append(await run_round(target, args, deals))
    report(targets, results, args, deals)


def main() -> None:
    if sys.argv[1:2] == ["--hammer"]:
        http, path, sources, seconds = sys.argv[2:6]
        hammer_main(http, path, sources.split(","), float(seconds))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--checkout",
        action="append",
        default=[],
        metavar="LABEL=PATH[:ENV=VALUE,...]",
        help="a server to measure (repeat); default: this tree, twice",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--races", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--hammers", type=int, default=8)
    parser.add_argument("--window", type=float, default=15.0)
    parser.add_argument("--pace", type=float, default=0.05)
    parser.add_argument(
        "--settle",
        type=float,
        default=1.0,
        help="pause between the replay timings and the racer's windows",
    )
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
