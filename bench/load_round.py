"""One round of bench/load.py: a server started fresh, its bots set up, a window measured."""

from __future__ import annotations

import asyncio
import math
import sys
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING

from bench.load_bots import Fleet, FleetPlan
from bench.load_results import RoundResult
from bench.load_servers import (
    EchoSpec,
    ServerProcess,
    ServerSpec,
    machine_busy_seconds,
    start_server,
)

if TYPE_CHECKING:
    from bench.load import Config

SETTLE_S = 2.0
"""Idle mode: pause between the last connection set up and the memory reading."""
WARM_UP_CONNECTIONS = 8
"""Idle mode: connections set up (and kept) before the baseline memory reading."""


async def run_round(
    mode: str,
    spec: ServerSpec | EchoSpec,
    number: int,
    config: Config,
    workdir: Path,
    racers: int,
    hop: str | None = None,
    profile: Path | None = None,
) -> RoundResult:
    """``racers`` bots of ``mode`` (closed, open, idle) against ours or an echo server
    (``spec``); ``hop``: how the bots pick workers (bench/load_bots.py)."""
    label = spec.label
    database_file = workdir / f"{mode}-{number}.sqlite3"
    server = await start_server(
        spec,
        config.server_env(),
        config.database_url or f"sqlite:///{database_file}",
        config.redis_url,
        config.server_logs / f"{mode}-{number}-{label.replace(' ', '-')}.log"
        if config.server_logs
        else None,
    )
    plan = FleetPlan(
        "open" if mode in ("capacity", "hop") else mode,
        config.rule_sets,
        config.pace_s,
        config.connect_concurrency,
        config.echo_move,
        hop or (spec.seating if isinstance(spec, ServerSpec) else None),
    )
    fleet = Fleet(server, plan)
    try:
        if mode == "idle":
            result = await measure_memory(fleet, number, config, racers)
        else:
            result = await measure_load(fleet, number, config, racers, profile)
        result.error_kinds = fleet.stats.errors.copy()
        result.server_errors, result.server_warnings = server.log.errors, server.log.warnings
        if server.log.warnings:
            print(
                f"    the {label} server logged {server.log.warnings} warnings; the first:\n"
                f"    | {server.log.first_warning}",
                file=sys.stderr,
            )
        if server.log.errors:
            print(
                f"    the {label} server logged {server.log.errors} errors; the first:",
                *(f"    | {line}" for line in server.log.first_error_in_short()),
                sep="\n",
                file=sys.stderr,
            )
        return result
    finally:
        await fleet.cancel()
        await server.stop()
        fleet.abort()
        for path in workdir.glob(f"{mode}-{number}.sqlite3*"):
            path.unlink()


async def measure_load(
    fleet: Fleet, number: int, config: Config, count: int, profile: Path | None
) -> RoundResult:
    server, stats = fleet.server, fleet.stats
    fleet.launch(count)
    await fleet.all_set_up(count, server.label)
    await asyncio.sleep(config.warmup_s)
    profiler = start_profiler(config, server, profile)
    threads = server.thread_cpu_seconds()
    stored, commits = await server.moves_and_commits()
    cpu, generator_cpu, started = server.cpu_seconds(), time.process_time(), time.perf_counter()
    machine, rss = machine_busy_seconds(), server.rss_bytes()
    stats.recording = True
    await asyncio.sleep(config.window_s)
    stats.recording = False
    result = RoundResult(
        number,
        server.label,
        window_s=time.perf_counter() - started,
        acks=stats.acks,
        latencies_ms=[latency * 1000 for latency in stats.latencies],
        hop_latencies_ms=[latency * 1000 for latency in stats.hop_latencies],
        server_cpu_s=server.cpu_seconds() - cpu,
        generator_cpu_s=time.process_time() - generator_cpu,
        errors=sum(stats.errors.values()),
        late=stats.late,
        games=stats.games,
        rss_before=rss,
        rss_after=server.rss_bytes(),
        failed=stats.failed,
    )
    stored_after, commits_after = await server.moves_and_commits()
    result.moves_stored, result.commits = stored_after - stored, commits_after - commits
    result.other_cpu_s = max(
        0.0, machine_busy_seconds() - machine - result.server_cpu_s - result.generator_cpu_s
    )
    if profiler is not None:
        busy = {
            tid: seconds - threads.get(tid, 0.0)
            for tid, seconds in server.thread_cpu_seconds().items()
        }
        print(
            "    CPU of the server's threads over the window: "
            + ", ".join(
                f"{'main' if tid == server.pid else f'thread {tid}'} "
                f"{seconds / result.window_s:.0%}"
                for tid, seconds in busy.items()
            ),
            file=sys.stderr,
        )
        await profiler
    return result


async def measure_memory(fleet: Fleet, number: int, config: Config, count: int) -> RoundResult:
    server, stats = fleet.server, fleet.stats
    fleet.launch(WARM_UP_CONNECTIONS)
    await fleet.all_set_up(WARM_UP_CONNECTIONS, f"{server.label} warm-up")
    await asyncio.sleep(SETTLE_S)
    rss_before, cpu = server.rss_bytes(), server.cpu_seconds()
    fleet.launch(count)
    setup_s = await fleet.all_set_up(WARM_UP_CONNECTIONS + count, server.label)
    setup_cpu = server.cpu_seconds() - cpu
    await asyncio.sleep(SETTLE_S)
    return RoundResult(
        number,
        server.label,
        connections=stats.set_up - WARM_UP_CONNECTIONS,
        rss_before=rss_before,
        rss_after=server.rss_bytes(),
        setup_s=setup_s,
        setup_cpu_s=setup_cpu,
        errors=sum(stats.errors.values()),
    )


def start_profiler(
    config: Config, server: ServerProcess, profile: Path | None
) -> Awaitable[object] | None:
    """py-spy on our server (and its workers: ``--subprocesses``) through the window."""
    if profile is None or server.kind != "ours":
        return None
    spy = Path(sys.executable).with_name("py-spy")
    output_format = {".svg": "flamegraph", ".json": "speedscope"}.get(profile.suffix, "raw")
    command = [
        str(spy),
        "record",
        "--pid",
        str(server.pid),
        "--rate",
        "100",
        "--duration",
        str(math.ceil(config.window_s)),
        "--format",
        output_format,
        "--output",
        str(profile),
    ]
    if len(server.pids) > 1:
        command.append("--subprocesses")
    print(f"    profiling {server.label} with py-spy into {profile}", file=sys.stderr)
    return asyncio.create_task(_run_quietly(command))


async def _run_quietly(command: list[str]) -> int:
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    return await process.wait()
