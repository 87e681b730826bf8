"""What bench/load.py measures in a round, and the Markdown tables it prints."""

from __future__ import annotations

import functools
import hashlib
import math
import os
import platform
import statistics
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from bench.echo_server import MAX_SIZE
from bench.load_bots import SEATS, echo_frame
from bench.load_servers import BASELINES

if TYPE_CHECKING:
    from bench.load import Config

BENCH = Path(__file__).resolve().parent


def percentile(ordered: list[float], quantile: float) -> float:
    """Nearest-rank percentile of sorted values (NaN if none)."""
    if not ordered:
        return math.nan
    return ordered[min(len(ordered) - 1, max(0, math.ceil(quantile * len(ordered)) - 1))]


@dataclass
class RoundResult:
    round: int
    server: str
    window_s: float = 0.0
    acks: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    server_cpu_s: float = 0.0
    generator_cpu_s: float = 0.0
    other_cpu_s: float = 0.0
    """CPU used over the window by everything else on the machine (other processes)."""
    errors: int = 0
    """Bot errors: bots that gave up, and moves refused (each kind is shown on stderr)."""
    server_errors: int = 0
    """Lines the server logged at ERROR level."""
    server_warnings: int = 0
    """Lines the server logged at WARNING level."""
    late: int = 0
    games: int = 0
    error_kinds: Counter[str] = field(default_factory=Counter)
    connections: int = 0
    rss_before: int = 0
    rss_after: int = 0
    setup_s: float = 0.0
    setup_cpu_s: float = 0.0
    moves_stored: int = 0
    commits: int = 0
    """Ours: moves stored, and the transactions that stored them, over the window."""
    hop_latencies_ms: list[float] = field(default_factory=list)
    """Hop mode: the latencies of the moves that crossed Redis."""
    failed: int = 0
    """Bots that could not be set up, or stopped on an error."""

    @property
    def moves_per_commit(self) -> str:
        return f"{self.moves_stored / self.commits:.1f}" if self.commits else "-"

    @property
    def acks_per_s(self) -> float:
        return self.acks / self.window_s if self.window_s else 0.0

    @functools.cached_property
    def _ordered_ms(self) -> list[float]:
        return sorted(self.latencies_ms)

    def latency(self, quantile: float) -> float:
        """Nearest-rank percentile of the acknowledgement latencies, in ms (NaN if none)."""
        return percentile(self._ordered_ms, quantile)

    @property
    def latency_p99(self) -> float:
        return self.latency(0.99)

    @property
    def cpu_per_ack_us(self) -> float:
        return self.server_cpu_s / self.acks * 1e6 if self.acks else math.nan

    @property
    def kib_per_connection(self) -> float:
        if not self.connections:
            return math.nan
        return (self.rss_after - self.rss_before) / self.connections / 1024


Round = dict[str, RoundResult]
"""One round's results, by server label: each of ours, and each echo server."""
ECHOES = tuple(baseline.label for baseline in BASELINES)
"""The labels of the echo servers, in the order their ratios are shown."""


def describe(mode: str, result: RoundResult) -> str:
    if mode == "idle":
        return (
            f"{result.connections} connections, {result.kib_per_connection:.1f} KiB each, "
            f"set up in {result.setup_s:.1f} s, bot errors {result.errors}, server warnings "
            f"{result.server_warnings}, errors {result.server_errors}"
        )
    return (
        f"{result.acks_per_s:,.0f} acks/s, p50 {result.latency(0.5):.2f} ms, "
        f"p99 {result.latency(0.99):.2f} ms, server CPU "
        f"{result.server_cpu_s / result.window_s:.0%}, {result.cpu_per_ack_us:.0f} us/ack, "
        f"generator CPU {result.generator_cpu_s / result.window_s:.0%}, other processes' "
        f"CPU {result.other_cpu_s / result.window_s:.0%}, "
        f"bot errors {result.errors}, server warnings {result.server_warnings}, errors "
        f"{result.server_errors}"
    )


def number(value: float, digits: int = 0) -> str:
    return "n/a" if math.isnan(value) else f"{value:,.{digits}f}"


def ratio_row(name: str, ratios: list[float], digits: int = 2) -> str:
    cells = " | ".join(number(value, digits) for value in ratios)
    return f"| {name} | {number(median_of(ratios), digits)} | {cells} |"


def ratio_header(rounds: int, what: str) -> list[str]:
    numbers = " | ".join(f"r{index}" for index in range(1, rounds + 1))
    return [f"| {what} | median | {numbers} |", "| --- | ---: |" + " ---: |" * rounds]


def median_of(values: list[float]) -> float:
    usable = [value for value in values if not math.isnan(value)]
    return statistics.median(usable) if usable else math.nan


def ours_labels(rounds: list[Round]) -> list[str]:
    return [label for label in rounds[0] if label not in ECHOES] if rounds else []


def ratio(ours: float, echo: float) -> float:
    return ours / echo if echo and not math.isnan(echo) else math.nan


def load_table(mode: str, rounds: list[Round], config: Config) -> list[str]:
    if mode == "closed":
        title = (
            f"## Closed loop: {config.rooms} rooms of {SEATS} "
            f"({config.racers(mode)} bots), each move sent as soon as the last is acked"
        )
    else:
        title = (
            f"## Open loop: {config.open_racers} bots, one move every {config.pace_s:g} s "
            f"each (jittered 0.5-1.5x)"
        )
    lines = [
        title,
        "",
        f"Warm-up {config.warmup_s:g} s, measured window {config.window_s:g} s "
        "per server per round. CPU (100% = one core): utime+stime of the server process "
        "(and its workers) over the window, of the generator, and of everything else on "
        "the machine (other processes: a busy machine shows here). Moves per commit: the "
        "moves our server stored over the window, over the transactions it took (its "
        "/healthz counts). Late sends: moves sent more than a pace after their time (the "
        "previous ack was slow). Games ended and RSS growth: over the window.",
        "",
        "| round | server | acks/s | p50 ms | p90 ms | p99 ms | max ms | server CPU | "
        "CPU us/ack | moves per commit | generator CPU | other CPU | games ended | "
        "RSS growth MiB | late sends | bot errors | server warnings | server errors |",
        "| ---: | --- |" + " ---: |" * 16,
    ]
    for results in rounds:
        for result in results.values():
            lines.append(
                f"| {result.round} | {result.server} | {number(result.acks_per_s)} | "
                f"{number(result.latency(0.5), 2)} | {number(result.latency(0.9), 2)} | "
                f"{number(result.latency(0.99), 2)} | {number(result.latency(1.0), 1)} | "
                f"{result.server_cpu_s / result.window_s:.0%} | "
                f"{number(result.cpu_per_ack_us)} | {result.moves_per_commit} | "
                f"{result.generator_cpu_s / result.window_s:.0%} | "
                f"{result.other_cpu_s / result.window_s:.0%} | {result.games} | "
                f"{(result.rss_after - result.rss_before) / 2**20:.1f} | {result.late} | "
                f"{result.errors} | {result.server_warnings} | {result.server_errors} |"
            )
    lines += [*error_notes(rounds), ""]
    for label in ours_labels(rounds):
        lines += ratio_header(len(rounds), f"{label} / each echo")
        for echo_label in ECHOES:
            pairs = [(results[label], results[echo_label]) for results in rounds]
            lines += [
                ratio_row(
                    f"acks/s / {echo_label}",
                    [ratio(ours.acks_per_s, echo.acks_per_s) for ours, echo in pairs],
                ),
                ratio_row(
                    f"server CPU per ack / {echo_label}",
                    [ratio(ours.cpu_per_ack_us, echo.cpu_per_ack_us) for ours, echo in pairs],
                ),
                ratio_row(
                    f"p50 latency / {echo_label}",
                    [ratio(ours.latency(0.5), echo.latency(0.5)) for ours, echo in pairs],
                ),
                ratio_row(
                    f"p99 latency / {echo_label}",
                    [ratio(ours.latency(0.99), echo.latency(0.99)) for ours, echo in pairs],
                ),
                ratio_row(
                    f"generator CPU per ack / {echo_label}",
                    [
                        ratio(generator_cpu_per_ack(ours), generator_cpu_per_ack(echo))
                        for ours, echo in pairs
                    ],
                ),
            ]
        lines.append("")
    return lines


def generator_cpu_per_ack(result: RoundResult) -> float:
    return result.generator_cpu_s / result.acks if result.acks else math.nan


def error_notes(rounds: list[Round]) -> list[str]:
    """What the bots' errors were, round by round (none, usually)."""
    notes = [
        f"- round {result.round}, {result.server}: "
        + "; ".join(
            f"{count} x {what or 'no message'}" for what, count in result.error_kinds.most_common(4)
        )
        for results in rounds
        for result in results.values()
        if result.error_kinds
    ]
    return ["", "Bot errors:", *notes] if notes else []


def memory_table(rounds: list[Round], config: Config) -> list[str]:
    lines = [
        f"## Idle: {config.idle_connections} connections, memory per connection",
        "",
        f"Ours: each bot said hello, sat in a room of {SEATS} and got ready; the race "
        "started (each racer has its game) and then nobody moved. Echo servers: each bot "
        "sent one frame (on the room echo, seated by arrival in rooms of "
        f"{SEATS}). RSS read after warm-up connections and again a moment after the last "
        "connection was set up.",
        "",
        "| round | server | connections | RSS before MiB | RSS after MiB | KiB/connection | "
        "setup s | setup CPU ms/connection | bot errors | server warnings | "
        "server errors |",
        "| ---: | --- |" + " ---: |" * 9,
    ]
    for results in rounds:
        for result in results.values():
            per_connection_ms = (
                result.setup_cpu_s / result.connections * 1000 if result.connections else math.nan
            )
            lines.append(
                f"| {result.round} | {result.server} | {result.connections} | "
                f"{result.rss_before / 2**20:.1f} | {result.rss_after / 2**20:.1f} | "
                f"{number(result.kib_per_connection, 1)} | {result.setup_s:.1f} | "
                f"{number(per_connection_ms, 2)} | {result.errors} | "
                f"{result.server_warnings} | {result.server_errors} |"
            )
    lines += [*error_notes(rounds), ""]
    for label in ours_labels(rounds):
        lines += [
            *ratio_header(len(rounds), f"{label} / each echo"),
            *(
                ratio_row(
                    f"memory per connection / {echo_label}",
                    [
                        ratio(
                            results[label].kib_per_connection,
                            results[echo_label].kib_per_connection,
                        )
                        for results in rounds
                    ],
                )
                for echo_label in ECHOES
            ),
            "",
        ]
    return lines


def verdict(met: bool) -> str:
    return "MET" if met else "MISSED"


def targets(results: dict[str, list[Round]]) -> list[str]:
    """The issue's targets, set against the plain echo; each ratio is also given against the
    room echo."""
    plain, room = ECHOES
    lines = [
        "## Targets (medians of the per-round figures; the targets are set against the "
        f"{plain}, the ratio to the {room} follows in brackets)",
        "",
    ]
    for label in ours_labels(next(iter(results.values()), [])):

        def ratios(mode: str, of: str, echo_label: str, label: str = label) -> float:
            return median_of(
                [
                    ratio(getattr(rounds[label], of), getattr(rounds[echo_label], of))
                    for rounds in results[mode]
                ]
            )

        def both(mode: str, of: str, digits: int = 2) -> tuple[float, str]:
            against_plain = ratios(mode, of, plain)
            return against_plain, (
                f"{against_plain:.{digits}f} x ({room}: {ratios(mode, of, room):.{digits}f} x)"
            )

        if "closed" in results:
            moves, moves_text = both("closed", "acks_per_s")
            cpu, cpu_text = both("closed", "cpu_per_ack_us")
            lines.append(
                f"- {label}, closed loop, moves/s >= 0.5 x echo messages/s: "
                f"{moves_text}: {verdict(moves >= 0.5)}"
            )
            lines.append(
                f"- {label}, closed loop, server CPU per move <= 3 x echo's per "
                f"message: {cpu_text}: {verdict(cpu <= 3)}"
            )
        if "open" in results:
            p99s = [rounds[label].latency(0.99) for rounds in results["open"]]
            p99 = median_of(p99s)
            cpu, cpu_text = both("open", "cpu_per_ack_us")
            _, p99_text = both("open", "latency_p99")
            lines.append(
                f"- {label}, open loop, p99 ack < 25 ms: median p99 {p99:.1f} ms "
                f"(worst round {max(p99s):.1f} ms; against the {plain}'s p99: "
                f"{p99_text}): "
                f"{verdict(p99 < 25)}"
            )
            lines.append(
                f"- {label}, open loop, server CPU per move <= 3 x echo's per message: "
                f"{cpu_text}: {verdict(cpu <= 3)}"
            )
        if "idle" in results:
            memory, memory_text = both("idle", "kib_per_connection", digits=1)
            lines.append(
                f"- {label}, idle, memory per racer <= 1.5 x echo's per connection: "
                f"{memory_text}: {verdict(memory <= 1.5)}"
            )
    return [*lines, ""]


def code_version() -> str:
    """The commit, and a digest of any uncommitted change to the code the server runs."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(BENCH.parent), *args], capture_output=True, text=True, check=False
        )
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    diff = git("diff", "HEAD", "--", "server", "engine", "clients")
    if not diff:
        return f"commit {commit}"
    digest = hashlib.sha256(diff.encode()).hexdigest()[:12]
    return f"commit {commit} with uncommitted changes to server/engine/clients (diff {digest})"


def header(config: Config, load_before: str, version_at_start: str) -> list[str]:
    memory_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    versions = ", ".join(
        f"{name} {version(name)}" for name in ("websockets", "pydantic", "sqlalchemy", "aiosqlite")
    )
    database = config.database_url or "SQLite, a fresh file per round (WAL journal)"
    installed = [name for name in ("uvloop", "orjson") if find_spec(name)]
    return [
        "# Capacity: patience-race server against bare websockets echo servers",
        "",
        f"- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: {os.cpu_count()} CPUs "
        f"(nproc), {memory_gib:.1f} GiB, {platform.system()} {platform.release()}; "
        f"load average before the run: {load_before}",
        f"- Python {platform.python_version()}; {versions}; code: {version_at_start}"
        + (
            ""
            if version_at_start == code_version()
            else f" at the start, {code_version()} at the end (the code changed during the run)"
        )
        + f"; installed speed-ups: {', '.join(installed) or 'none'}",
        f"- Echo servers: one process each on 127.0.0.1, asyncio's default loop, "
        f"compression=None, max_size {MAX_SIZE} bytes, default keepalive pings, INFO logging; "
        f"the echo sends each frame back, the room echo also relays it to the other members "
        f"of the sender's room of {SEATS} (seated by arrival) with websockets.broadcast.",
        "- Ours (`patience-race serve`, same transport settings): "
        + "; ".join(spec.describe() for spec in config.servers)
        + f"; database {database}; rate "
        f"limit raised to {config.rate_per_s:g}/s, burst {config.rate_burst:g} "
        f"(PATIENCE_RACE_RATE_PER_S, PATIENCE_RACE_RATE_BURST); countdown "
        f"{config.countdown_s:g} s (PATIENCE_RACE_COUNTDOWN_S)"
        + (
            ""
            if config.commit_window_ms is None
            else f"; commit window {config.commit_window_ms:g} ms"
        )
        + ".",
        f"- Generator: one process, raw websockets clients (compression=None, no client "
        f"pings; {config.connect_concurrency} connections set up at a time); rooms of {SEATS} "
        f"over {', '.join(config.rule_sets)} in turn; moves chosen by "
        f"engine.players.GreedyPlayer. Echo frames: "
        f"{len(echo_frame(config.echo_move, 1, 1))}+ bytes, a move request of median size "
        f"whose id names the bot (`{echo_frame(config.echo_move, 1, 1)}`).",
        f"- {config.rounds} rounds of each load mode and {config.idle_rounds} of idle; in each, "
        "every server is started fresh (ours on a new database), the order rotating from round "
        "to round. Ratios of ours to each echo server are per round.",
        "",
    ]
