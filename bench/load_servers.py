"""The servers bench/load.py drives: ours (one process, or a supervisor and its workers) and
the two echo servers (``BASELINES``: the plain echo and the room echo), each a child process on
127.0.0.1; their CPU and memory read from /proc.

A ``ServerSpec`` says which of our servers to run: from this tree or another checkout (``git
archive COMMIT | tar -x -C DIR``: run with ``PYTHONPATH=DIR`` from DIR, as
bench/abuse_bench.py's ``--checkout`` does), how many workers (above one, with Redis and a
fresh key prefix per start), and extra ``PATIENCE_RACE_*`` settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import signal
import sys
import urllib.request
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

BENCH = Path(__file__).resolve().parent
HOST = "127.0.0.1"
SERVER_START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
SERVING = re.compile(r"serving on (ws://[\d.]+:\d+/\S*)")
WORKER_READY = re.compile(r"worker (\d+) \(pid (\d+)\) ready, its own address (ws://\S+)")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
SEATS = 4
"""Seats in a room: the bots' rooms on our server, and the room echo's."""


@dataclass(frozen=True)
class EchoSpec:
    """An echo server ours is measured against (bench/echo_server.py)."""

    label: str
    room: int | None = None
    """The room echo's seats in a room (``--room``); None for the plain echo."""


BASELINES = (EchoSpec("echo"), EchoSpec("room echo", SEATS))
"""The echo servers run in every round beside ours."""


@dataclass(frozen=True)
class ServerSpec:
    """One of our servers to measure:
    ``LABEL[,checkout=DIR][,workers=N][,seating=local|mixed][,NAME=VALUE...]`` on the command
    line, NAME a setting without its ``PATIENCE_RACE_`` prefix."""

    label: str = "ours"
    checkout: Path | None = None
    """Run the server of this directory (another commit's tree) rather than this tree's."""
    workers: int = 1
    """Above 1: ``serve --workers N --redis-url ...``; 1 is one process without Redis."""
    settings: tuple[tuple[str, str], ...] = ()
    """Extra ``PATIENCE_RACE_*`` variables, e.g. (("EVENT_LOOP", "uvloop"),)."""
    seating: str | None = None
    """With workers: the bots connect to the workers' own addresses, seated ``local`` (with
    their own worker's bots only: no hops) or ``mixed`` (bench/load_bots.py); None: the public
    address, where the kernel picks each connection's worker."""

    @classmethod
    def parse(cls, text: str) -> ServerSpec:
        label, *options = text.split(",")
        checkout, workers, settings, seating = None, 1, [], None
        for option in options:
            name, _, value = option.partition("=")
            if name == "checkout":
                checkout = Path(value).resolve()
            elif name == "workers":
                workers = int(value)
            elif name == "seating" and value in ("local", "mixed"):
                seating = value
            else:
                settings.append((name.upper(), value))
        if label in {baseline.label for baseline in BASELINES}:
            raise ValueError(f"{label!r} is an echo server's label")
        return cls(label, checkout, workers, tuple(settings), seating)

    def describe(self) -> str:
        parts = [
            f"checkout {self.checkout}" if self.checkout else "this tree",
            f"{self.workers} workers and Redis" if self.workers > 1 else "one process",
        ]
        if self.seating:
            parts.append(f"bots on the workers' own addresses, seated {self.seating}")
        parts += [f"PATIENCE_RACE_{name}={value}" for name, value in self.settings]
        return f"{self.label}: " + ", ".join(parts)


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
    workers: dict[int, tuple[int, str]] = field(default_factory=dict)
    """Workers that said they were ready: their pid and own address, by index."""

    def add(self, line: str) -> None:
        self.tail.append(line)
        if self.copy is not None:
            print(line, file=self.copy)
        if match := WORKER_READY.search(line):
            self.workers[int(match.group(1))] = (int(match.group(2)), match.group(3))
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
        return [
            line
            for index, line in enumerate(self.first_error)
            if index == 0
            or (line and not line[0].isspace() and not line.startswith("20"))
            or (project in line and ".venv" not in line)
        ]


def _stat_fields(pid: int | str, task: str = "") -> list[str]:
    path = f"/proc/{pid}/task/{task}/stat" if task else f"/proc/{pid}/stat"
    return Path(path).read_text().rsplit(")", 1)[1].split()


@dataclass
class ServerProcess:
    kind: str
    """``ours`` or ``echo`` (either echo server)."""
    label: str
    process: asyncio.subprocess.Process
    url: str
    log: ServerLog
    drains: list[asyncio.Task[None]]

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def pids(self) -> list[int]:
        """The process, and its workers if it has any."""
        return [self.pid, *(pid for pid, _ in self.log.workers.values())]

    @property
    def worker_urls(self) -> list[str]:
        """Each worker's own address, by index (none for one process)."""
        return [url for _, (_, url) in sorted(self.log.workers.items())]

    def cpu_seconds(self) -> float:
        """utime + stime of the process and its workers (all threads), from /proc/PID/stat."""
        total = 0.0
        for pid in self.pids:
            with contextlib.suppress(FileNotFoundError):
                fields = _stat_fields(pid)
                total += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        return total

    def thread_cpu_seconds(self) -> dict[int, float]:
        """utime + stime of each thread of the (main) process, by thread id (the main
        thread's is the process id)."""
        seconds = {}
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            with contextlib.suppress(FileNotFoundError):
                fields = _stat_fields(self.pid, task.name)
                seconds[int(task.name)] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        return seconds

    def rss_bytes(self) -> int:
        total = 0
        for pid in self.pids:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        return total

    async def moves_and_commits(self) -> tuple[int, int]:
        """Ours: moves stored and the commits that stored them so far (from /healthz; of each
        worker, on its own address)."""
        if self.kind != "ours":
            return 0, 0
        urls = self.worker_urls or [self.url]
        healths = [
            url.replace("ws://", "http://", 1).rsplit("/", 1)[0] + "/healthz" for url in urls
        ]

        def read() -> tuple[int, int]:
            moves = commits = 0
            for health in healths:
                with urllib.request.urlopen(health, timeout=10) as response:
                    database = json.loads(response.read())["database"]
                moves += database["moves_stored"]
                commits += database["move_commits"]
            return moves, commits

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
        for pid in self.pids[1:]:  # a worker the supervisor could not stop
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for drain in self.drains:
            drain.cancel()
        if self.log.copy is not None:
            self.log.copy.close()


def machine_busy_seconds() -> float:
    """CPU seconds spent by the whole machine (all CPUs, every process), from /proc/stat."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


def serve_module(tree: Path) -> str:
    """The module whose ``serve`` starts the server of ``tree``: ``server.commands``, or in a
    tree from before the server's commands left the clients' command line (issue 25),
    ``clients.cli``."""
    return "server.commands" if (tree / "server" / "commands.py").exists() else "clients.cli"


async def start_server(
    spec: ServerSpec | EchoSpec,
    env: dict[str, str],
    database_url: str,
    redis_url: str | None,
    log_file: Path | None,
) -> ServerProcess:
    """Start ours or an echo server on a free port of 127.0.0.1; wait until it listens (all its
    workers ready)."""
    cwd = BENCH.parent
    if isinstance(spec, ServerSpec):
        env = {**env, **{f"PATIENCE_RACE_{name}": value for name, value in spec.settings}}
        command = [
            sys.executable,
            "-m",
            serve_module(spec.checkout or BENCH.parent),
            "serve",
            "--host",
            HOST,
            "--port",
            "0",
            "--database-url",
            database_url,
        ]
        if spec.workers > 1:
            if redis_url is None:
                raise SystemExit(f"{spec.label}: {spec.workers} workers need --redis-url")
            command += ["--workers", str(spec.workers), "--redis-url", redis_url]
            env["PATIENCE_RACE_REDIS_PREFIX"] = f"patience-load-{secrets.token_hex(4)}:"
        if spec.checkout is not None:
            cwd = spec.checkout
            env["PYTHONPATH"] = str(spec.checkout)
    else:
        command = [sys.executable, str(BENCH / "echo_server.py"), "--port", "0"]
        if spec.room is not None:
            command += ["--room", str(spec.room)]
    process = await asyncio.create_subprocess_exec(
        *command,
        env=env,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    log = ServerLog(copy=None if log_file is None else log_file.open("w"))
    found: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    drains = [
        asyncio.create_task(_drain(stream, log, found))
        for stream in (process.stdout, process.stderr)
    ]
    kind = "ours" if isinstance(spec, ServerSpec) else "echo"
    server = ServerProcess(kind, spec.label, process, "", log, drains)
    try:
        server.url = await asyncio.wait_for(asyncio.shield(found), SERVER_START_TIMEOUT_S)
    except (TimeoutError, RuntimeError):
        await server.stop()
        raise RuntimeError(
            f"the {spec.label} server did not start: " + " | ".join(log.tail)
        ) from None
    return server


async def _drain(stream: asyncio.StreamReader, log: ServerLog, found: asyncio.Future[str]) -> None:
    """Read a server's output as it comes (so it never blocks), watching for its address."""
    while line := (await stream.readline()).decode(errors="replace"):
        log.add(line.rstrip())
        match = SERVING.search(line)
        if match and not found.done():
            found.set_result(match.group(1))
    if not found.done():
        found.set_exception(RuntimeError("the server exited"))
