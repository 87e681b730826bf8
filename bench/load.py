"""Capacity of the race server, measured against a bare ``websockets`` echo server.

    python bench/load.py [--modes closed open idle] [--rounds 8] [--idle-rounds 8] [--quick]

The server under test runs as its own process (``patience-race serve`` on 127.0.0.1, a fresh
SQLite file each round, or ``--database-url``), and so does the echo server
(bench/echo_server.py: the same websockets settings). Round by round, each is started fresh,
driven by this generator, measured, and stopped; which one goes first alternates. Modes:

- ``closed``: ``--rooms`` rooms of 4 bots; each bot sends its next move as soon as its
  acknowledgement comes back.
- ``open``: ``--open-racers`` bots at a human pace: one move every ``--pace`` seconds each,
  jittered uniformly between half and one and a half of it.
- ``idle``: ``--idle-connections`` bots that say hello, sit in rooms of 4 whose race has
  started, and then stay idle: server memory per connection.

Against our server a bot is a real racer: it says hello, a room is opened or joined (rooms of 4,
over the rule sets in turn), it gets ready, and it plays legal moves chosen by the engine's
greedy player from the ``legal_moves`` the server sent. When its game ends it leaves and takes
a seat in the next room, so the load stays steady. Against the echo server a bot sends frames of
the size of a typical ``move`` request and counts the echo as the acknowledgement.

Figures: acknowledgements per second, acknowledgement latency (send to ack, per move)
p50/p90/p99/max, server CPU per acknowledgement (utime+stime of the server process, from
/proc/PID/stat, over the measured window) and, for ``idle``, server memory per connection (RSS
from /proc/PID/status before connecting and after, divided by the connections). Ratios ours/echo
are taken per round, and their median is reported: absolute figures drift, ratios much less.
Markdown tables go to stdout, progress to stderr. Everything stays on 127.0.0.1 and every loop
ends by itself: rounds, windows and setup waits are bounded in count and time.

``--profile FILE`` runs py-spy (``pip install py-spy``) on our server through the first
window of the first mode run (summarise a raw profile with bench/profile_summary.py);
``--server-logs DIR`` keeps everything the servers print.

The generator reads the server's frames by their first bytes (``{"type":"move_ok","id":"7"``:
pydantic writes fields in declaration order, compactly) and parses JSON only for the frames whose
content it needs, so that one process can drive thousands of connections.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import hashlib
import itertools
import json
import math
import os
import platform
import random
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter, deque
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path
from typing import TextIO

from websockets.asyncio.client import ClientConnection, connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.echo_server import MAX_SIZE  # noqa: E402
from engine.moves import Move  # noqa: E402
from engine.players import GreedyPlayer  # noqa: E402
from engine.registry import RULE_SET_NAMES, find_rule_set  # noqa: E402

BENCH = Path(__file__).resolve().parent
HOST = "127.0.0.1"
MODES = ("closed", "open", "idle")
SEATS = 4
SERVER_START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
REPLY_TIMEOUT_S = 120.0
"""A bot waiting longer than this for a reply or for its room to fill gives up (an error) and
closes its connection. Setting up thousands of racers on SQLite can stall for tens of seconds."""
SETTLE_S = 2.0
"""Idle mode: pause between the last connection set up and the memory reading."""
WARM_UP_CONNECTIONS = 8
"""Idle mode: connections set up (and kept) before the baseline memory reading."""
SERVING = re.compile(r"serving on (ws://[\d.]+:\d+/\S*)")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

ONE_ADDRESS_MANY_CLIENTS = {
    "PATIENCE_RACE_CONNECTIONS_PER_ADDRESS": "1000000",
    "PATIENCE_RACE_NEW_PLAYERS_PER_ADDRESS_PER_MIN": "1000000",
    "PATIENCE_RACE_ROOMS_PER_PLAYER_PER_HOUR": "1000000",
}
"""Every bot connects from 127.0.0.1: the limits per address and per player are lifted."""


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
    connect_concurrency: int
    profile: Path | None
    server_logs: Path | None
    echo_move: str
    """The move text of the echo frames: a move request of median size."""

    def rounds_of(self, mode: str) -> int:
        return self.idle_rounds if mode == "idle" else self.rounds

    def racers(self, mode: str) -> int:
        return {"closed": self.rooms * SEATS, "open": self.open_racers,
                "idle": self.idle_connections}[mode]

    def server_env(self) -> dict[str, str]:
        """Our server's environment: the rate limit raised so that bots are never refused,
        and the countdown shortened so that new rooms start at once."""
        env = {key: value for key, value in os.environ.items()
               if not key.startswith("PATIENCE_RACE_")}
        env.update(PATIENCE_RACE_RATE_PER_S=f"{self.rate_per_s:g}",
                   PATIENCE_RACE_RATE_BURST=f"{self.rate_burst:g}",
                   PATIENCE_RACE_COUNTDOWN_S=f"{self.countdown_s:g}",
                   **ONE_ADDRESS_MANY_CLIENTS)
        return env


# -- the server processes -------------------------------------------------------------------------


@dataclass
class ServerLog:
    """What a server wrote: the last lines, and the first error with what follows it."""

    tail: deque[str] = field(default_factory=lambda: deque(maxlen=20))
    copy: TextIO | None = None
    """With ``--server-logs``: the file that gets every line."""
    errors: int = 0
    """Lines logged at ERROR level (an exception in a connection handler, say)."""
    warnings: int = 0
    """Lines logged at WARNING level (a database write retried, say)."""
    first_warning: str = ""
    first_error: list[str] = field(default_factory=list)

    def add(self, line: str) -> None:
        self.tail.append(line)
        if self.copy is not None:
            print(line, file=self.copy)
        if " ERROR " in line:
            self.errors += 1
        if " WARNING " in line:
            self.warnings += 1
            self.first_warning = self.first_warning or line
        if (self.errors or line.startswith("Traceback")) and len(self.first_error) < 400:
            self.first_error.append(line)

    def first_error_in_short(self) -> list[str]:
        """The first error's message, the project's own frames and the exceptions raised."""
        project = str(BENCH.parent)
        return [line for index, line in enumerate(self.first_error)
                if index == 0 or (line and not line[0].isspace() and not line.startswith("20"))
                or (project in line and ".venv" not in line)]


@dataclass
class ServerProcess:
    kind: str
    """``ours`` or ``echo``."""
    process: asyncio.subprocess.Process
    url: str
    log: ServerLog
    drains: list[asyncio.Task[None]]

    @property
    def pid(self) -> int:
        return self.process.pid

    def cpu_seconds(self) -> float:
        """utime + stime of the process (all its threads), from /proc/PID/stat."""
        stat = Path(f"/proc/{self.pid}/stat").read_text()
        fields = stat.rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS

    def thread_cpu_seconds(self) -> dict[int, float]:
        """utime + stime of each thread of the process, by thread id (the main thread's is the
        process id)."""
        seconds = {}
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            with contextlib.suppress(FileNotFoundError):
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
                seconds[int(task.name)] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        return seconds

    def rss_bytes(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError(f"no VmRSS for process {self.pid}")

    async def moves_and_commits(self) -> tuple[int, int]:
        """Ours: moves stored and the commits that stored them so far (from /healthz)."""
        if self.kind != "ours":
            return 0, 0
        health = self.url.replace("ws://", "http://", 1).rsplit("/", 1)[0] + "/healthz"

        def read() -> tuple[int, int]:
            with urllib.request.urlopen(health, timeout=10) as response:
                database = json.loads(response.read())["database"]
            return database["moves_stored"], database["move_commits"]

        return await asyncio.to_thread(read)

    async def stop(self) -> None:
        """SIGTERM (a graceful shutdown), then SIGKILL if it takes too long."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), STOP_TIMEOUT_S)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        for drain in self.drains:
            drain.cancel()
        if self.log.copy is not None:
            self.log.copy.close()


def machine_busy_seconds() -> float:
    """CPU seconds spent by the whole machine (all CPUs, every process), from /proc/stat."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


async def start_server(kind: str, config: Config, database_file: Path,
                       log_file: Path | None) -> ServerProcess:
    """Start ours or the echo server on a free port of 127.0.0.1; wait until it listens."""
    if kind == "ours":
        database_url = config.database_url or f"sqlite:///{database_file}"
        serve = Path(sys.executable).with_name("patience-race")
        command = [str(serve)] if serve.exists() else [sys.executable, "-m", "clients.cli"]
        command += ["serve", "--host", HOST, "--port", "0", "--database-url", database_url]
        env = config.server_env()
    else:
        command = [sys.executable, str(BENCH / "echo_server.py"), "--port", "0"]
        env = dict(os.environ)
    process = await asyncio.create_subprocess_exec(
        *command, env=env, cwd=BENCH.parent, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    log = ServerLog(copy=None if log_file is None else log_file.open("w"))
    found: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    drains = [asyncio.create_task(_drain(stream, log, found))
              for stream in (process.stdout, process.stderr)]
    server = ServerProcess(kind, process, "", log, drains)
    try:
        server.url = await asyncio.wait_for(asyncio.shield(found), SERVER_START_TIMEOUT_S)
    except (TimeoutError, RuntimeError):
        await server.stop()
        raise RuntimeError(f"the {kind} server did not start: " + " | ".join(log.tail)) from None
    return server


async def _drain(stream: asyncio.StreamReader, log: ServerLog,
                 found: asyncio.Future[str]) -> None:
    """Read a server's output as it comes (so it never blocks), watching for its address."""
    while line := (await stream.readline()).decode(errors="replace"):
        log.add(line.rstrip())
        match = SERVING.search(line)
        if match and not found.done():
            found.set_result(match.group(1))
    if not found.done():
        found.set_exception(RuntimeError("the server exited"))


# -- what a round measures ------------------------------------------------------------------------


@dataclass
class Stats:
    recording: bool = False
    acks: int = 0
    latencies: list[float] = field(default_factory=list)
    late: int = 0
    """Open loop: moves sent more than ``--pace`` late (the previous ack was slow)."""
    errors: Counter[str] = field(default_factory=Counter)
    set_up: int = 0
    """Bots connected and identified (idle mode: seated in a started race)."""
    failed: int = 0
    """Bots that stopped on an error."""
    games: int = 0
    """Games played to their end within the measured window."""

    def ack(self, latency: float) -> None:
        if self.recording:
            self.acks += 1
            self.latencies.append(latency)

    def error(self, what: str) -> None:
        self.errors[what] += 1
        if self.errors[what] <= 3:
            print(f"    bot error: {what}", file=sys.stderr)


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
        ordered = self._ordered_ms
        if not ordered:
            return math.nan
        return ordered[min(len(ordered) - 1, max(0, math.ceil(quantile * len(ordered)) - 1))]

    @property
    def cpu_per_ack_us(self) -> float:
        return self.server_cpu_s / self.acks * 1e6 if self.acks else math.nan

    @property
    def kib_per_connection(self) -> float:
        if not self.connections:
            return math.nan
        return (self.rss_after - self.rss_before) / self.connections / 1024


Pair = tuple[RoundResult, RoundResult]
"""One round's results: ours, then echo."""


# -- bots -----------------------------------------------------------------------------------------


parse_move = functools.lru_cache(maxsize=1 << 16)(Move.parse)


def frame_type(frame: bytes) -> bytes:
    """``move_ok`` from ``{"type":"move_ok",...``."""
    return frame[9:frame.index(b'"', 9)]


class Refused(Exception):
    """The server answered with an error, or something other than what was expected."""


class Bot:
    """One connection and its requests: each gets a fresh id, and the reply is the frame
    that carries it (other frames are room events, skipped unread)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._ids = itertools.count(1)

    async def send(self, request: dict[str, object]) -> bytes:
        request_id = str(next(self._ids))
        await self.ws.send(json.dumps({**request, "id": request_id}, separators=(",", ":")))
        return f'","id":"{request_id}"'.encode()

    async def reply(self, marker: bytes, expected: bytes) -> bytes:
        async with asyncio.timeout(REPLY_TIMEOUT_S):
            while True:
                frame = await self.ws.recv(decode=False)
                kind = frame_type(frame)
                if frame.startswith(marker, 9 + len(kind)):
                    if kind != expected:
                        raise Refused(_error_code(frame))
                    return frame

    async def request(self, request: dict[str, object], expected: bytes) -> bytes:
        return await self.reply(await self.send(request), expected)


def _error_code(frame: bytes) -> str:
    message = json.loads(frame)
    return str(message.get("code") or message.get("type"))


@dataclass(eq=False)
class Seat:
    """A seat in a room being filled: the first bot to take one opens the room."""

    rule_set: str
    code: asyncio.Future[str]
    taken: int = 1
    arrived: int = 0
    full: asyncio.Event = field(default_factory=asyncio.Event)

    def arrive(self) -> None:
        self.arrived += 1
        if self.arrived == SEATS:
            self.full.set()


class Matchmaker:
    """Bots that want a race take seats in turn: every fourth one opens a new room."""

    def __init__(self, rule_sets: Sequence[str]) -> None:
        self.rule_sets = itertools.cycle(rule_sets)
        self.open: Seat | None = None

    def seat(self) -> tuple[Seat, bool]:
        """A seat, and whether this bot hosts (opens) the room."""
        if self.open is None:
            code: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            code.add_done_callback(_retrieved)
            self.open = Seat(next(self.rule_sets), code)
            return self.open, True
        seat = self.open
        seat.taken += 1
        if seat.taken == SEATS:
            self.open = None
        return seat, False


def _retrieved(future: asyncio.Future[str]) -> None:
    """Mark a room's failure as seen, so that a room nobody joined does not warn about it."""
    if not future.cancelled():
        future.exception()


class Pace:
    """Open loop: the times a bot means to send its moves, ``pace`` apart on average."""

    def __init__(self, pace_s: float, rng: random.Random) -> None:
        self.pace_s, self.rng = pace_s, rng
        self.next_at = time.perf_counter() + rng.uniform(0, pace_s)

    async def wait(self, stats: Stats) -> None:
        now = time.perf_counter()
        if now < self.next_at:
            await asyncio.sleep(self.next_at - now)
        elif now - self.next_at > self.pace_s and stats.recording:
            stats.late += 1
        self.next_at = max(self.next_at, now) + self.pace_s * self.rng.uniform(0.5, 1.5)


async def race_ours(bot: Bot, matchmaker: Matchmaker, stats: Stats, rng: random.Random,
                    pace: Pace | None, idle: bool) -> None:
    """Race on our server, game after game, until cancelled (idle: one race, no moves)."""
    while True:
        seat, host = matchmaker.seat()
        try:
            if host:
                room = await bot.request({"type": "create_room", "rule_set": seat.rule_set,
                                          "seats": SEATS}, b"room")
                seat.code.set_result(json.loads(room)["code"])
            else:
                async with asyncio.timeout(REPLY_TIMEOUT_S):
                    code = await asyncio.shield(seat.code)
                await bot.request({"type": "join", "code": code}, b"room")
        except BaseException:
            if host and not seat.code.done():
                seat.code.set_exception(Refused("the host could not open the room"))
            raise
        seat.arrive()
        async with asyncio.timeout(REPLY_TIMEOUT_S):
            await seat.full.wait()
        view = await ready_and_view(bot)
        if idle:
            stats.set_up += 1
            return
        await play_game(bot, view, stats, rng, pace)
        if stats.recording:
            stats.games += 1
        await bot.request({"type": "leave"}, b"ok")


async def ready_and_view(bot: Bot) -> dict[str, object]:
    """Send ``ready`` and read until both its ``ok`` and the race's opening ``view`` came (the
    last bot to get ready gets the view first)."""
    marker = await bot.send({"type": "ready"})
    view: bytes | None = None
    acknowledged = False
    async with asyncio.timeout(REPLY_TIMEOUT_S):
        while view is None or not acknowledged:
            frame = await bot.ws.recv(decode=False)
            kind = frame_type(frame)
            if kind == b"view":
                view = frame
            elif frame.startswith(marker, 9 + len(kind)):
                if kind != b"ok":
                    raise Refused(_error_code(frame))
                acknowledged = True
    state: dict[str, object] = json.loads(view)["view"]
    return state


async def play_game(bot: Bot, state: dict[str, object], stats: Stats, rng: random.Random,
                    pace: Pace | None) -> None:
    player = GreedyPlayer(rng)
    legal, home, status = state["legal_moves"], state["on_foundations"], state["status"]
    while status == "in_progress" and legal:
        assert isinstance(legal, list) and isinstance(home, int)
        move = str(player.choose([parse_move(text) for text in legal], home))
        if pace is not None:
            await pace.wait(stats)
        sent = time.perf_counter()
        marker = await bot.send({"type": "move", "move": move})
        try:
            frame = await bot.reply(marker, b"move_ok")
        except Refused as refused:
            stats.error(f"move refused: {refused}")
            return
        stats.ack(time.perf_counter() - sent)
        ack = json.loads(frame)
        legal, home, status = ack["legal_moves"], ack["on_foundations"], ack["status"]


async def echo_loop(ws: ClientConnection, move: str, stats: Stats, pace: Pace | None,
                    idle: bool) -> None:
    """Against the echo server: move-sized frames; the echo is the acknowledgement."""
    for request_id in itertools.count(1):
        frame = echo_frame(move, request_id)
        if pace is not None:
            await pace.wait(stats)
        sent = time.perf_counter()
        await ws.send(frame)
        async with asyncio.timeout(REPLY_TIMEOUT_S):
            await ws.recv(decode=False)
        stats.ack(time.perf_counter() - sent)
        if idle:
            stats.set_up += 1
            return


@dataclass
class Fleet:
    """The bots of one round, and their connections (to be cut at the end of the round)."""

    server: ServerProcess
    config: Config
    mode: str
    stats: Stats = field(default_factory=Stats)
    matchmaker: Matchmaker | None = None
    connections: list[ClientConnection] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    gate: asyncio.Semaphore | None = None

    def launch(self, count: int) -> None:
        """Start ``count`` more bots; connections and hellos are limited in number at once."""
        if self.gate is None:
            self.gate = asyncio.Semaphore(self.config.connect_concurrency)
            self.matchmaker = Matchmaker(self.config.rule_sets)
        first = len(self.tasks)
        self.tasks += [asyncio.create_task(self._bot(index))
                       for index in range(first, first + count)]

    async def _bot(self, index: int) -> None:
        assert self.gate is not None and self.matchmaker is not None
        rng = random.Random(index)
        idle = self.mode == "idle"
        pace = Pace(self.config.pace_s, rng) if self.mode == "open" else None
        ws: ClientConnection | None = None
        try:
            async with self.gate:
                ws = await connect(self.server.url, compression=None, max_size=MAX_SIZE,
                                   ping_interval=None, open_timeout=REPLY_TIMEOUT_S)
                self.connections.append(ws)
                if self.server.kind == "ours":
                    bot = Bot(ws)
                    await bot.request({"type": "hello", "name": f"bot{index}"}, b"welcome")
            if self.server.kind == "echo":
                if not idle:
                    self.stats.set_up += 1
                await echo_loop(ws, self.config.echo_move, self.stats, pace, idle)
                return
            if not idle:
                self.stats.set_up += 1
            await race_ours(bot, self.matchmaker, self.stats, rng, pace, idle)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - a failed bot is counted and reported
            self.stats.failed += 1
            self.stats.error(f"{type(error).__name__}: {error}")
            if ws is not None:
                ws.transport.abort()

    async def all_set_up(self, count: int, label: str) -> float:
        """Wait until ``count`` bots are set up (bounded); return the seconds it took."""
        started = time.perf_counter()
        deadline = started + max(60.0, count / 50)
        reported = started
        while (self.stats.set_up + self.stats.failed < count
               and time.perf_counter() < deadline):
            await asyncio.sleep(0.1)
            if time.perf_counter() - reported > 5:
                reported = time.perf_counter()
                print(f"    {label}: {self.stats.set_up}/{count} set up", file=sys.stderr)
        if self.stats.set_up < count:
            print(f"    {label}: only {self.stats.set_up}/{count} set up", file=sys.stderr)
        return time.perf_counter() - started

    async def cancel(self) -> None:
        """Stop the bots; their connections stay open until the server closes them."""
        for task in self.tasks:
            task.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*self.tasks, return_exceptions=True),
                                   STOP_TIMEOUT_S)

    def abort(self) -> None:
        """Drop whatever connection is still open."""
        for ws in self.connections:
            ws.transport.abort()


# -- a round --------------------------------------------------------------------------------------


async def run_round(mode: str, kind: str, number: int, config: Config,
                    workdir: Path) -> RoundResult:
    server = await start_server(
        kind, config, workdir / f"{mode}-{number}.sqlite3",
        config.server_logs / f"{mode}-{number}-{kind}.log" if config.server_logs else None)
    fleet = Fleet(server, config, mode)
    try:
        measure = measure_memory if mode == "idle" else measure_load
        result = await measure(fleet, number)
        result.error_kinds = fleet.stats.errors.copy()
        result.server_errors, result.server_warnings = server.log.errors, server.log.warnings
        if server.log.warnings:
            print(f"    the {kind} server logged {server.log.warnings} warnings; the first:\n"
                  f"    | {server.log.first_warning}", file=sys.stderr)
        if server.log.errors:
            print(f"    the {kind} server logged {server.log.errors} errors; the first:",
                  *(f"    | {line}" for line in server.log.first_error_in_short()), sep="\n",
                  file=sys.stderr)
        return result
    finally:
        await fleet.cancel()
        await server.stop()
        fleet.abort()
        for path in workdir.glob(f"{mode}-{number}.sqlite3*"):
            path.unlink()


async def measure_load(fleet: Fleet, number: int) -> RoundResult:
    config, server, stats = fleet.config, fleet.server, fleet.stats
    count = config.racers(fleet.mode)
    fleet.launch(count)
    await fleet.all_set_up(count, server.kind)
    await asyncio.sleep(config.warmup_s)
    profiler = start_profiler(config, server, fleet.mode, number)
    threads = server.thread_cpu_seconds()
    stored, commits = await server.moves_and_commits()
    cpu, generator_cpu, started = server.cpu_seconds(), time.process_time(), time.perf_counter()
    machine, rss = machine_busy_seconds(), server.rss_bytes()
    stats.recording = True
    await asyncio.sleep(config.window_s)
    stats.recording = False
    result = RoundResult(
        number, server.kind, window_s=time.perf_counter() - started, acks=stats.acks,
        latencies_ms=[latency * 1000 for latency in stats.latencies],
        server_cpu_s=server.cpu_seconds() - cpu,
        generator_cpu_s=time.process_time() - generator_cpu,
        errors=sum(stats.errors.values()), late=stats.late, games=stats.games,
        rss_before=rss, rss_after=server.rss_bytes())
    stored_after, commits_after = await server.moves_and_commits()
    result.moves_stored, result.commits = stored_after - stored, commits_after - commits
    result.other_cpu_s = max(0.0, machine_busy_seconds() - machine - result.server_cpu_s
                             - result.generator_cpu_s)
    if profiler is not None:
        busy = {tid: seconds - threads.get(tid, 0.0)
                for tid, seconds in server.thread_cpu_seconds().items()}
        print("    CPU of the server's threads over the window: " + ", ".join(
            f"{'main' if tid == server.pid else f'thread {tid}'} "
            f"{seconds / result.window_s:.0%}" for tid, seconds in busy.items()),
            file=sys.stderr)
        await profiler
    return result


async def measure_memory(fleet: Fleet, number: int) -> RoundResult:
    config, server, stats = fleet.config, fleet.server, fleet.stats
    fleet.launch(WARM_UP_CONNECTIONS)
    await fleet.all_set_up(WARM_UP_CONNECTIONS, f"{server.kind} warm-up")
    await asyncio.sleep(SETTLE_S)
    rss_before, cpu = server.rss_bytes(), server.cpu_seconds()
    count = config.idle_connections
    fleet.launch(count)
    setup_s = await fleet.all_set_up(WARM_UP_CONNECTIONS + count, server.kind)
    setup_cpu = server.cpu_seconds() - cpu
    await asyncio.sleep(SETTLE_S)
    return RoundResult(number, server.kind, connections=stats.set_up - WARM_UP_CONNECTIONS,
                       rss_before=rss_before, rss_after=server.rss_bytes(), setup_s=setup_s,
                       setup_cpu_s=setup_cpu, errors=sum(stats.errors.values()))


def start_profiler(config: Config, server: ServerProcess, mode: str,
                   number: int) -> Awaitable[object] | None:
    """With ``--profile``: py-spy on our server through the first window of the first mode."""
    if config.profile is None or server.kind != "ours" or mode != config.modes[0] or number != 1:
        return None
    spy = Path(sys.executable).with_name("py-spy")
    output_format = {".svg": "flamegraph", ".json": "speedscope"}.get(config.profile.suffix,
                                                                        "raw")
    command = [str(spy), "record", "--pid", str(server.pid), "--rate", "100",
               "--duration", str(math.ceil(config.window_s)), "--format", output_format,
               "--output", str(config.profile)]
    print(f"    profiling ours with py-spy into {config.profile}", file=sys.stderr)
    return asyncio.create_task(_run_quietly(command))


async def _run_quietly(command: list[str]) -> int:
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    return await process.wait()


def describe(mode: str, result: RoundResult) -> str:
    if mode == "idle":
        return (f"{result.connections} connections, {result.kib_per_connection:.1f} KiB each, "
                f"set up in {result.setup_s:.1f} s, bot errors {result.errors}, server warnings "
                f"{result.server_warnings}, errors {result.server_errors}")
    return (f"{result.acks_per_s:,.0f} acks/s, p50 {result.latency(0.5):.2f} ms, "
            f"p99 {result.latency(0.99):.2f} ms, server CPU "
            f"{result.server_cpu_s / result.window_s:.0%}, {result.cpu_per_ack_us:.0f} us/ack, "
            f"generator CPU {result.generator_cpu_s / result.window_s:.0%}, other processes' "
            f"CPU {result.other_cpu_s / result.window_s:.0%}, "
            f"bot errors {result.errors}, server warnings {result.server_warnings}, errors "
            f"{result.server_errors}")


async def run_mode(mode: str, config: Config, workdir: Path) -> list[Pair]:
    """The mode's rounds, each ours and echo, the order alternating."""
    rounds = []
    for number in range(1, config.rounds_of(mode) + 1):
        order = ("ours", "echo") if number % 2 else ("echo", "ours")
        results = {}
        for kind in order:
            print(f"[{mode} {number}/{config.rounds_of(mode)}] {kind}: {config.racers(mode)} bots",
                  file=sys.stderr)
            results[kind] = await run_round(mode, kind, number, config, workdir)
            print(f"    {describe(mode, results[kind])}", file=sys.stderr)
        rounds.append((results["ours"], results["echo"]))
    return rounds


# -- tables ---------------------------------------------------------------------------------------


def number(value: float, digits: int = 0) -> str:
    return "n/a" if math.isnan(value) else f"{value:,.{digits}f}"


def ratio_row(name: str, ratios: list[float], digits: int = 2) -> str:
    cells = " | ".join(number(value, digits) for value in ratios)
    usable = [value for value in ratios if not math.isnan(value)]
    median = statistics.median(usable) if usable else math.nan
    return f"| {name} | {number(median, digits)} | {cells} |"


def ratio_header(rounds: int) -> list[str]:
    numbers = " | ".join(f"r{index}" for index in range(1, rounds + 1))
    return [f"| ours / echo | median | {numbers} |",
            "| --- | ---: |" + " ---: |" * rounds]


def median_of(values: list[float]) -> float:
    usable = [value for value in values if not math.isnan(value)]
    return statistics.median(usable) if usable else math.nan


def load_table(mode: str, rounds: list[Pair], config: Config) -> list[str]:
    if mode == "closed":
        title = (f"## Closed loop: {config.rooms} rooms of {SEATS} "
                 f"({config.racers(mode)} bots), each move sent as soon as the last is acked")
    else:
        title = (f"## Open loop: {config.open_racers} bots, one move every {config.pace_s:g} s "
                 f"each (jittered 0.5-1.5x)")
    lines = [title, "", f"Warm-up {config.warmup_s:g} s, measured window {config.window_s:g} s "
             "per server per round. CPU (100% = one core): utime+stime of the server process "
             "over the window, of the generator, and of everything else on the machine (other "
             "processes: a busy machine shows here). Moves per commit: the moves our server "
             "stored over the window, over the transactions it took (its /healthz counts). "
             "Late sends: moves sent more than a pace after their time (the previous ack was "
             "slow). Games ended and RSS growth: over the window.", "",
             "| round | server | acks/s | p50 ms | p90 ms | p99 ms | max ms | server CPU | "
             "CPU us/ack | moves per commit | generator CPU | other CPU | games ended | "
             "RSS growth MiB | late sends | bot errors | server warnings | server errors |",
             "| ---: | --- |" + " ---: |" * 16]
    for pair in rounds:
        for result in pair:
            lines.append(
                f"| {result.round} | {result.server} | {number(result.acks_per_s)} | "
                f"{number(result.latency(0.5), 2)} | {number(result.latency(0.9), 2)} | "
                f"{number(result.latency(0.99), 2)} | {number(result.latency(1.0), 1)} | "
                f"{result.server_cpu_s / result.window_s:.0%} | "
                f"{number(result.cpu_per_ack_us)} | {result.moves_per_commit} | "
                f"{result.generator_cpu_s / result.window_s:.0%} | "
                f"{result.other_cpu_s / result.window_s:.0%} | {result.games} | "
                f"{(result.rss_after - result.rss_before) / 2**20:.1f} | {result.late} | "
                f"{result.errors} | {result.server_warnings} | {result.server_errors} |")
    lines += [*error_notes(rounds), "", *ratio_header(len(rounds)),
              ratio_row("acks/s", [ours.acks_per_s / echo.acks_per_s
                                   if echo.acks_per_s else math.nan for ours, echo in rounds]),
              ratio_row("server CPU per ack", [ours.cpu_per_ack_us / echo.cpu_per_ack_us
                                               for ours, echo in rounds]),
              ratio_row("p50 latency", [ours.latency(0.5) / echo.latency(0.5)
                                        for ours, echo in rounds]),
              ratio_row("p99 latency", [ours.latency(0.99) / echo.latency(0.99)
                                        for ours, echo in rounds]), ""]
    return lines


def error_notes(rounds: list[Pair]) -> list[str]:
    """What the bots' errors were, round by round (none, usually)."""
    notes = [f"- round {result.round}, {result.server}: " + "; ".join(
                 f"{count} x {what or 'no message'}" for what, count in
                 result.error_kinds.most_common(4))
             for pair in rounds for result in pair if result.error_kinds]
    return ["", "Bot errors:", *notes] if notes else []


def memory_table(rounds: list[Pair], config: Config) -> list[str]:
    lines = [f"## Idle: {config.idle_connections} connections, memory per connection", "",
             f"Ours: each bot said hello, sat in a room of {SEATS} and got ready; the race "
             "started (each racer has its game) and then nobody moved. Echo: each bot sent one "
             f"frame. RSS read after {WARM_UP_CONNECTIONS} warm-up connections and again "
             f"{SETTLE_S:g} s after the last connection was set up.", "",
             "| round | server | connections | RSS before MiB | RSS after MiB | KiB/connection | "
             "setup s | setup CPU ms/connection | bot errors | server warnings | "
             "server errors |",
             "| ---: | --- |" + " ---: |" * 9]
    for pair in rounds:
        for result in pair:
            per_connection_ms = (result.setup_cpu_s / result.connections * 1000
                                 if result.connections else math.nan)
            lines.append(
                f"| {result.round} | {result.server} | {result.connections} | "
                f"{result.rss_before / 2**20:.1f} | {result.rss_after / 2**20:.1f} | "
                f"{number(result.kib_per_connection, 1)} | {result.setup_s:.1f} | "
                f"{number(per_connection_ms, 2)} | {result.errors} | "
                f"{result.server_warnings} | {result.server_errors} |")
    lines += [*error_notes(rounds), "", *ratio_header(len(rounds)),
              ratio_row("memory per connection", [ours.kib_per_connection
                                                  / echo.kib_per_connection
                                                  for ours, echo in rounds]), ""]
    return lines


def verdict(met: bool) -> str:
    return "MET" if met else "MISSED"


def targets(results: dict[str, list[Pair]]) -> list[str]:
    lines = ["## Targets (one server process; medians of the per-round figures)", ""]
    if "closed" in results:
        ratio = median_of([ours.acks_per_s / echo.acks_per_s
                           for ours, echo in results["closed"]])
        lines.append(f"- closed loop, moves/s >= 0.5 x echo messages/s: {ratio:.2f} x: "
                     f"{verdict(ratio >= 0.5)}")
    if "open" in results:
        p99 = median_of([ours.latency(0.99) for ours, _ in results["open"]])
        worst = max(ours.latency(0.99) for ours, _ in results["open"])
        cpu = median_of([ours.cpu_per_ack_us / echo.cpu_per_ack_us
                         for ours, echo in results["open"]])
        lines.append(f"- open loop, p99 ack < 25 ms: median p99 {p99:.1f} ms (worst round "
                     f"{worst:.1f} ms): {verdict(p99 < 25)}")
        lines.append(f"- open loop, server CPU per move <= 3 x echo's per message: {cpu:.1f} x: "
                     f"{verdict(cpu <= 3)}")
    if "idle" in results:
        memory = median_of([ours.kib_per_connection / echo.kib_per_connection
                            for ours, echo in results["idle"]])
        lines.append(f"- idle, memory per racer <= 1.5 x echo's per connection: {memory:.1f} x: "
                     f"{verdict(memory <= 1.5)}")
    return [*lines, ""]


def code_version() -> str:
    """The commit, and a digest of any uncommitted change to the code the server runs."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(BENCH.parent), *args], capture_output=True,
                              text=True, check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    diff = git("diff", "HEAD", "--", "server", "engine", "clients")
    if not diff:
        return f"commit {commit}"
    digest = hashlib.sha256(diff.encode()).hexdigest()[:12]
    return f"commit {commit} with uncommitted changes to server/engine/clients (diff {digest})"


def header(config: Config, load_before: str, version_at_start: str) -> list[str]:
    memory_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    versions = ", ".join(f"{name} {version(name)}" for name in
                         ("websockets", "pydantic", "sqlalchemy", "aiosqlite"))
    database = config.database_url or "SQLite, a fresh file per round (WAL journal)"
    loops = "asyncio's default loop (asyncio.run; uvloop is " + (
        "installed but neither server uses it)" if find_spec("uvloop") else "not installed)")
    return [
        "# Capacity: patience-race server against a bare websockets echo server", "",
        f"- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: {os.cpu_count()} CPUs "
        f"(nproc), {memory_gib:.1f} GiB, {platform.system()} {platform.release()}; "
        f"load average before the run: {load_before}",
        f"- Python {platform.python_version()}; {versions}; code: {version_at_start}" + (
            "" if version_at_start == code_version() else
            f" at the start, {code_version()} at the end (the code changed during the run)"),
        f"- Both servers: one process each on 127.0.0.1, {loops}, compression=None, "
        f"max_size {MAX_SIZE} bytes, default keepalive pings, INFO logging.",
        f"- Ours: `patience-race serve`, database {database}; rate limit raised to "
        f"{config.rate_per_s:g}/s, burst {config.rate_burst:g} (PATIENCE_RACE_RATE_PER_S, "
        f"PATIENCE_RACE_RATE_BURST); countdown {config.countdown_s:g} s "
        "(PATIENCE_RACE_COUNTDOWN_S); JSON in: json.loads + pydantic validation; JSON out: "
        "pydantic model_dump_json.",
        f"- Generator: one process, raw websockets clients (compression=None, no client "
        f"pings; {config.connect_concurrency} connections set up at a time); rooms of {SEATS} "
        f"over {', '.join(config.rule_sets)} in turn; moves chosen by "
        f"engine.players.GreedyPlayer. Echo frames: "
        f"{len(echo_frame(config.echo_move, 1))}+ bytes, a move request of median size "
        f"(`{echo_frame(config.echo_move, 1)}`).",
        f"- {config.rounds} rounds of each load mode and {config.idle_rounds} of idle; in each, "
        "both servers are started fresh (ours on a new database), ours first in odd rounds, "
        "echo first in even ones. Ratios ours/echo are per round.", ""]


# -- the run --------------------------------------------------------------------------------------


def echo_frame(move: str, request_id: int) -> str:
    return json.dumps({"type": "move", "move": move, "id": str(request_id)},
                      separators=(",", ":"))


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
    results: dict[str, list[Pair]] = {}
    with tempfile.TemporaryDirectory(prefix="patience-load-") as workdir:
        for mode in config.modes:
            results[mode] = await run_mode(mode, config, Path(workdir))
    lines = header(config, load_before, version_at_start)
    for mode, rounds in results.items():
        lines += memory_table(rounds, config) if mode == "idle" else load_table(mode, rounds,
                                                                               config)
    load_after = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    lines += targets(results)
    lines.append(f"Load average after the run: {load_after}; the run took "
                 f"{(time.perf_counter() - started) / 60:.1f} min.")
    return "\n".join(lines)


def build_config(args: argparse.Namespace) -> Config:
    quick = args.quick
    rule_sets = tuple(args.rule_set or RULE_SET_NAMES)
    return Config(
        modes=tuple(args.modes), rounds=args.rounds or (1 if quick else 8),
        idle_rounds=args.idle_rounds or (1 if quick else 8),
        warmup_s=args.warmup if args.warmup is not None else (1.0 if quick else 2.0),
        window_s=args.window or (3.0 if quick else 8.0),
        rooms=args.rooms or (10 if quick else 50),
        open_racers=args.open_racers or (200 if quick else 2000), pace_s=args.pace,
        idle_connections=args.idle_connections or (400 if quick else 10_000),
        rule_sets=rule_sets, database_url=args.database_url, rate_per_s=args.rate_per_s,
        rate_burst=args.rate_burst, countdown_s=args.countdown,
        connect_concurrency=args.connect_concurrency,
        profile=Path(args.profile) if args.profile else None,
        server_logs=Path(args.server_logs) if args.server_logs else None,
        echo_move=typical_move(rule_sets))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--rounds", type=int,
                        help="rounds of closed and open (default 8; quick 1)")
    parser.add_argument("--idle-rounds", type=int, help="rounds of idle (default 8; quick 1): "
                        "each takes a minute or more at 10,000 connections")
    parser.add_argument("--warmup", type=float, help="seconds before measuring (default 2)")
    parser.add_argument("--window", type=float, help="measured seconds (default 8; quick 3)")
    parser.add_argument("--rooms", type=int, help="closed loop: rooms of 4 (default 50)")
    parser.add_argument("--open-racers", type=int, help="open loop: bots (default 2000)")
    parser.add_argument("--pace", type=float, default=1.0,
                        help="open loop: mean seconds between a bot's moves (default 1)")
    parser.add_argument("--idle-connections", type=int, help="idle: connections (default 10000)")
    parser.add_argument("--rule-set", action="append", choices=RULE_SET_NAMES,
                        help="rule sets of the rooms, in turn (default: all); repeatable")
    parser.add_argument("--database-url", help="our server's database (default: a fresh "
                        "SQLite file per round); PostgreSQL is not emptied between rounds")
    parser.add_argument("--rate-per-s", type=float, default=1e6,
                        help="our server's rate limit for the run (default 1e6)")
    parser.add_argument("--rate-burst", type=float, default=1e6,
                        help="our server's rate burst for the run (default 1e6)")
    parser.add_argument("--countdown", type=float, default=0.0,
                        help="our server's countdown before a race, seconds (default 0)")
    parser.add_argument("--connect-concurrency", type=int, default=16,
                        help="connections being set up at once (default 16)")
    parser.add_argument("--profile", metavar="FILE", help="py-spy our server during the first "
                        "window of the first mode: .svg flame graph, .json speedscope, else "
                        "raw stacks")
    parser.add_argument("--server-logs", metavar="DIR", help="write everything each server "
                        "prints to DIR/MODE-ROUND-SERVER.log")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 1 round, small loads, short windows")
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
