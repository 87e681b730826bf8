"""Capacity of the race server, measured against two bare ``websockets`` echo servers.

    python bench/load.py [--modes closed open idle] [--rounds 8] [--idle-rounds 8] [--quick]
    python bench/load.py --modes closed --ours before,checkout=/tmp/before --ours after
    python bench/load.py --modes capacity --ours one --ours two,workers=2 --redis-url URL
    python bench/load.py --modes hop --ours two,workers=2 --redis-url URL

The server under test runs as its own process (``patience-race serve`` on 127.0.0.1, a fresh
SQLite file each round, or ``--database-url``), and so do the two baselines, both
bench/echo_server.py with the same websockets settings: the plain ``echo``, which sends each
frame back to its sender, and the ``room echo`` (``--room 4``), which also relays each frame to
the other members of the sender's room of 4 with ``websockets.broadcast``, as our server sends
a move's progress to the other racers. Round by round, each server is started fresh, driven by
this generator, measured, and stopped; the order rotates from round to round. Modes:

- ``closed``: ``--rooms`` rooms of 4 bots; each bot sends its next move as soon as its
  acknowledgement comes back.
- ``open``: ``--open-racers`` bots at a human pace: one move every ``--pace`` seconds each,
  jittered uniformly between half and one and a half of it.
- ``idle``: ``--idle-connections`` bots that say hello, sit in rooms of 4 whose race has
  started, and then stay idle: server memory per connection.
- ``capacity`` and ``hop`` (bench/load_capacity.py): the most racers each of our servers holds
  at p99 < 25 ms in the open loop; the cost of a request crossing Redis between workers (no
  echo server in these).

``--ours LABEL[,checkout=DIR][,workers=N][,seating=local|mixed][,SETTING=VALUE...]``
(repeatable; ``seating``: bots on the workers' own addresses, bench/load_bots.py) names the servers
measured, each started in every round beside the echo servers, the order rotating: another
commit's tree (``git archive COMMIT | tar -x -C DIR``), several workers (with ``--redis-url``,
a fresh key prefix each start), or settings such as ``EVENT_LOOP=uvloop`` or
``JSON_LIBRARY=orjson`` (``PATIENCE_RACE_`` omitted). Default: one, ``ours``, this tree.

The bots (bench/load_bots.py) are real racers on our server, who play greedy legal moves game
after game; on the echo servers they send move-sized frames and count their own echo as the
acknowledgement (on the room echo they also receive, and skip, the other members' frames).

Figures: acknowledgements per second, acknowledgement latency (send to ack, per move)
p50/p90/p99/max, server CPU per acknowledgement (utime+stime of the server process and its
workers, from /proc/PID/stat, over the measured window), the generator's own CPU (it shares the
machine) and, for ``idle``, server memory per connection (RSS from /proc/PID/status before
connecting and after, divided by the connections). Ratios of each of ours to each echo server
(ours/echo, ours/room echo) are taken per round, and their median is reported: absolute
figures drift, ratios much less. Markdown tables go to stdout, progress to stderr. Everything
stays on 127.0.0.1 and every loop ends by itself: rounds, windows and setup waits are bounded
in count and time.

``--profile FILE`` runs py-spy (``pip install py-spy``) on each of our servers through the
first window of the first mode run (FILE-LABEL.txt when there are several; summarise a raw
profile with bench/profile_summary.py); ``--server-logs DIR`` keeps everything the servers print.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.load_bots import SEATS  # noqa: E402
from bench.load_capacity import run_capacity, run_hop  # noqa: E402
from bench.load_results import (  # noqa: E402
    Round,
    code_version,
    describe,
    header,
    load_table,
    memory_table,
    targets,
)
from bench.load_round import WARM_UP_CONNECTIONS, run_round  # noqa: E402
from bench.load_servers import BASELINES, EchoSpec, ServerSpec  # noqa: E402
from engine.players import GreedyPlayer  # noqa: E402
from engine.registry import RULE_SET_NAMES, find_rule_set  # noqa: E402

MODES = ("closed", "open", "idle", "capacity", "hop")
ONE_ADDRESS_MANY_CLIENTS = {
    "PATIENCE_RACE_CONNECTIONS_PER_ADDRESS": "1000000",
    "PATIENCE_RACE_NEW_PLAYERS_PER_ADDRESS_PER_MIN": "1000000",
    "PATIENCE_RACE_ROOMS_PER_PLAYER_PER_HOUR": "1000000",
}
"""Every bot connects from 127.0.0.1: the limits per address and per player are lifted."""
CAPACITY_STEPS = (500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 5000, 6000)


@dataclass(frozen=True)
class Config:
    modes: tuple[str, ...]
    rounds: int
    idle_rounds: int
    warmup_s: float
    window_s: float
    rooms: int
    open_racers: int
    pace_s: float
    idle_connections: int
    rule_sets: tuple[str, ...]
    database_url: str | None
    rate_per_s: float
    rate_burst: float
    countdown_s: float
    commit_window_ms: float | None
    """Our server's ``commit_window_ms``; None leaves its default."""
    connect_concurrency: int
    profile: Path | None
    server_logs: Path | None
    echo_move: str
    """The move text of the echo frames: a move request of median size."""
    servers: tuple[ServerSpec, ...] = (ServerSpec(),)
    """Our servers measured (``--ours``), each beside the echo servers in every round."""
    redis_url: str | None = None
    capacity_steps: tuple[int, ...] = CAPACITY_STEPS
    p99_target_ms: float = 25.0
    hop_racers: int = 1000

    def rounds_of(self, mode: str) -> int:
        return self.idle_rounds if mode == "idle" else self.rounds

    def racers(self, mode: str) -> int:
        return {
            "closed": self.rooms * SEATS,
            "open": self.open_racers,
            "idle": self.idle_connections,
            "capacity": max(self.capacity_steps),
            "hop": self.hop_racers,
        }[mode]

    def server_env(self) -> dict[str, str]:
        """Our server's environment: the rate limit raised so that bots are never refused,
        the countdown shortened so that new rooms start at once, and no solver work in the
        background (the winnable pool, the search after each race) to share the CPU with."""
        env = {
            key: value for key, value in os.environ.items() if not key.startswith("PATIENCE_RACE_")
        }
        env.update(
            PATIENCE_RACE_RATE_PER_S=f"{self.rate_per_s:g}",
            PATIENCE_RACE_RATE_BURST=f"{self.rate_burst:g}",
            PATIENCE_RACE_COUNTDOWN_S=f"{self.countdown_s:g}",
            PATIENCE_RACE_WINNABLE_POOL_TARGET="0",
            PATIENCE_RACE_VERDICT_BUDGET_S="0",
            **ONE_ADDRESS_MANY_CLIENTS,
        )
        if self.commit_window_ms is not None:
            env["PATIENCE_RACE_COMMIT_WINDOW_MS"] = f"{self.commit_window_ms:g}"
        return env

    def profile_of(self, mode: str, number: int, label: str) -> Path | None:
        """Where to write the profile of this round of ``label`` (the first of the first mode)."""
        if self.profile is None or mode != self.modes[0] or number != 1:
            return None
        if len(self.servers) == 1:
            return self.profile
        return self.profile.with_name(f"{self.profile.stem}-{label}{self.profile.suffix}")


async def run_mode(mode: str, config: Config, workdir: Path) -> list[Round]:
    """The mode's rounds: in each, every one of our servers and the echo servers, the order
    rotating from round to round."""
    rounds = []
    servers: list[ServerSpec | EchoSpec] = [*config.servers, *BASELINES]
    for number in range(1, config.rounds_of(mode) + 1):
        shift = (number - 1) % len(servers)
        results = {}
        for spec in servers[shift:] + servers[:shift]:
            print(
                f"[{mode} {number}/{config.rounds_of(mode)}] {spec.label}: "
                f"{config.racers(mode)} bots",
                file=sys.stderr,
            )
            results[spec.label] = await run_round(
                mode,
                spec,
                number,
                config,
                workdir,
                config.racers(mode),
                profile=config.profile_of(mode, number, spec.label),
            )
            print(f"    {describe(mode, results[spec.label])}", file=sys.stderr)
        rounds.append({spec.label: results[spec.label] for spec in servers})
    return rounds


def typical_move(rule_sets: Sequence[str], games_each: int = 5) -> str:
    """The text of a move request of median size, from greedy games of the rule sets."""
    rng = random.Random(1)
    texts: list[str] = []
    for name in rule_sets:
        for _ in range(games_each):
            game, player = find_rule_set(name)(rng.getrandbits(64)), GreedyPlayer(rng)
            while not game.outcome().is_over and len(game.history) < 2000:
                move = player.choose_in(game)
                texts.append(str(move))
                game.play(move)
    texts.sort(key=len)
    return texts[len(texts) // 2]


def raise_file_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = needed + 256 if hard == resource.RLIM_INFINITY else min(hard, needed + 256)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < needed + 64:
        raise SystemExit(f"too few file descriptors for {needed} connections (ulimit -n)")


async def run(config: Config) -> str:
    load_before = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    started, version_at_start = time.perf_counter(), code_version()
    results: dict[str, list[Round]] = {}
    tables: list[str] = []
    with tempfile.TemporaryDirectory(prefix="patience-load-") as workdir:
        for mode in config.modes:
            if mode == "capacity":
                tables += await run_capacity(config, Path(workdir))
            elif mode == "hop":
                tables += await run_hop(config, Path(workdir))
            else:
                results[mode] = await run_mode(mode, config, Path(workdir))
                tables += (
                    memory_table(results[mode], config)
                    if mode == "idle"
                    else load_table(mode, results[mode], config)
                )
    lines = [*header(config, load_before, version_at_start), *tables]
    if results:
        lines += targets(results)
    load_after = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    lines.append(
        f"Load average after the run: {load_after}; the run took "
        f"{(time.perf_counter() - started) / 60:.1f} min."
    )
    return "\n".join(lines)


def build_config(args: argparse.Namespace) -> Config:
    quick = args.quick
    rule_sets = tuple(args.rule_set or RULE_SET_NAMES)
    servers = tuple(ServerSpec.parse(text) for text in args.ours) or (ServerSpec(),)
    if len({spec.label for spec in servers}) < len(servers):
        raise SystemExit("each --ours needs a label of its own")
    return Config(
        modes=tuple(args.modes),
        rounds=args.rounds or (1 if quick else 8),
        idle_rounds=args.idle_rounds or (1 if quick else 8),
        warmup_s=args.warmup if args.warmup is not None else (1.0 if quick else 2.0),
        window_s=args.window or (3.0 if quick else 8.0),
        rooms=args.rooms or (10 if quick else 50),
        open_racers=args.open_racers or (200 if quick else 2000),
        pace_s=args.pace,
        idle_connections=args.idle_connections or (400 if quick else 10_000),
        rule_sets=rule_sets,
        database_url=args.database_url,
        rate_per_s=args.rate_per_s,
        rate_burst=args.rate_burst,
        countdown_s=args.countdown,
        commit_window_ms=args.commit_window_ms,
        connect_concurrency=args.connect_concurrency,
        profile=Path(args.profile) if args.profile else None,
        server_logs=Path(args.server_logs) if args.server_logs else None,
        echo_move=typical_move(rule_sets),
        servers=servers,
        redis_url=args.redis_url,
        capacity_steps=tuple(args.capacity_steps or ((200, 400) if quick else CAPACITY_STEPS)),
        p99_target_ms=args.p99_target_ms,
        hop_racers=args.hop_racers or (200 if quick else 1000),
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--modes", nargs="+", choices=MODES, default=["closed", "open", "idle"])
    parser.add_argument(
        "--ours",
        action="append",
        default=[],
        metavar="LABEL[,checkout=DIR][,workers=N][,seating=S][,SETTING=VALUE]",
        help="one of our servers to measure (repeatable; default: this tree)",
    )
    parser.add_argument("--redis-url", help="Redis for servers of several workers")
    parser.add_argument(
        "--rounds",
        type=int,
        help="rounds of closed, open and hop; passes of capacity (default 8; quick 1)",
    )
    parser.add_argument(
        "--idle-rounds",
        type=int,
        help="rounds of idle (default 8; quick 1): "
        "each takes a minute or more at 10,000 connections",
    )
    parser.add_argument("--warmup", type=float, help="seconds before measuring (default 2)")
    parser.add_argument("--window", type=float, help="measured seconds (default 8; quick 3)")
    parser.add_argument("--rooms", type=int, help="closed loop: rooms of 4 (default 50)")
    parser.add_argument("--open-racers", type=int, help="open loop: bots (default 2000)")
    parser.add_argument(
        "--pace",
        type=float,
        default=1.0,
        help="open loop: mean seconds between a bot's moves (default 1)",
    )
    parser.add_argument("--idle-connections", type=int, help="idle: connections (default 10000)")
    parser.add_argument(
        "--capacity-steps",
        type=int,
        nargs="+",
        help=f"capacity: racer counts (default {CAPACITY_STEPS})",
    )
    parser.add_argument(
        "--p99-target-ms",
        type=float,
        default=25.0,
        help="capacity: the p99 a count is held at (default 25)",
    )
    parser.add_argument("--hop-racers", type=int, help="hop: racers (default 1000)")
    parser.add_argument(
        "--rule-set",
        action="append",
        choices=RULE_SET_NAMES,
        help="rule sets of the rooms, in turn (default: all); repeatable",
    )
    parser.add_argument(
        "--database-url",
        help="our server's database (default: a fresh "
        "SQLite file per round); PostgreSQL is not emptied between rounds",
    )
    parser.add_argument(
        "--rate-per-s",
        type=float,
        default=1e6,
        help="our server's rate limit for the run (default 1e6)",
    )
    parser.add_argument(
        "--rate-burst",
        type=float,
        default=1e6,
        help="our server's rate burst for the run (default 1e6)",
    )
    parser.add_argument(
        "--countdown",
        type=float,
        default=0.0,
        help="our server's countdown before a race, seconds (default 0)",
    )
    parser.add_argument(
        "--commit-window-ms",
        type=float,
        help="our server's commit window, ms (default: the server's default; 0 commits at once)",
    )
    parser.add_argument(
        "--connect-concurrency",
        type=int,
        default=16,
        help="connections being set up at once (default 16)",
    )
    parser.add_argument(
        "--profile",
        metavar="FILE",
        help="py-spy our servers during the first "
        "window of the first mode: .svg flame graph, .json speedscope, else "
        "raw stacks",
    )
    parser.add_argument(
        "--server-logs",
        metavar="DIR",
        help="write everything each server prints to DIR/MODE-ROUND-SERVER.log",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 1 round, small loads, short windows"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    config = build_config(build_parser().parse_args(argv))
    if config.profile is not None and not Path(sys.executable).with_name("py-spy").exists():
        raise SystemExit("--profile needs py-spy in the venv: .venv/bin/pip install py-spy")
    raise_file_limit(max(config.racers(mode) for mode in config.modes) + WARM_UP_CONNECTIONS)
    if config.server_logs is not None:
        config.server_logs.mkdir(parents=True, exist_ok=True)
    print(asyncio.run(run(config)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
