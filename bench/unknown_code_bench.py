"""What a request for a room code nobody holds costs the server: one process, and two workers.

    python bench/unknown_code_bench.py [--checkout LABEL=PATH]... [--requests 2000]
                                       [--connections 4] [--postgres URL]

For each ``--checkout`` (default: this tree as ``after``; ``git archive BASE | tar -x -C
/tmp/base`` makes an older one) and each mode (one process; ``--workers 2`` with a private
``redis-server`` on a free port, so that its command counts are the bench's alone),
``patience-race serve`` from that tree on a fresh database (SQLite, or with ``--postgres`` a
throwaway PostgreSQL database on that server, dropped after). Anonymous connections then send
``spectate`` for codes no room has, one request at a time each, ``--requests`` in all; the
rate and the allowance of errors are lifted (``rate_per_s``, ``rate_burst``,
``flood_close_after``) so that every request is looked up and none is closed: the cost of each
lookup is what is measured.

Figures per request, the server's idle cost over the same time taken off: CPU (user + system
of the server's processes, its workers included, from /proc), Redis commands (``INFO
commandstats``) and, with ``--postgres``, database transactions (``pg_stat_database``, read
after the backends have flushed their counts). Markdown to stdout, progress to stderr. Run by
hand; never a timing assertion.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import make_url, text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool
from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.abuse_bench import serve  # noqa: E402
from tests.server.conftest import postgres_admin  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
SERVING = re.compile(r"serving on ws://([\d.]+):(\d+)/")
TICKS = os.sysconf("SC_CLK_TCK")
IDLE_S = 3.0
"""How long the server's idle cost is measured, before the requests."""
SETTLE_S = 2.0
"""How long after start-up before anything is measured (workers joining, the directory)."""
PG_FLUSH_S = 11.0
"""How long PostgreSQL backends may keep their transaction counts before reporting them
(an idle backend reports within 10 s)."""


@dataclass
class Cost:
    cpu_s: float
    redis_calls: int
    transactions: int


def process_tree(root: int) -> list[int]:
    """``root`` and every process descended from it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def cpu_seconds(root: int) -> float:
    """User and system CPU of ``root``'s process tree so far."""
    total = 0
    for pid in process_tree(root):
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total / TICKS


def redis_calls(port: int | None) -> int:
    """Commands the private Redis has run so far (0 without one)."""
    if port is None:
        return 0
    info = subprocess.run(
        ["redis-cli", "-p", str(port), "INFO", "commandstats"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sum(int(match) for match in re.findall(r"calls=(\d+)", info))


async def transactions(url: str | None) -> int:
    """Transactions committed and rolled back in the PostgreSQL database so far (0 without
    one); this read is one more."""
    if url is None:
        return 0
    engine = create_async_engine(url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            row = (
                await connection.execute(
                    text(
                        "SELECT xact_commit + xact_rollback FROM pg_stat_database "
                        "WHERE datname = current_database()"
                    )
                )
            ).one()
            return int(row[0])
    finally:
        await engine.dispose()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def private_redis() -> Iterator[int]:
    """A ``redis-server`` of the bench's own, nothing kept on disk."""
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            if (
                subprocess.run(
                    ["redis-cli", "-p", str(port), "PING"], capture_output=True, text=True
                ).stdout.strip()
                == "PONG"
            ):
                break
            time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait()


def start_server(
    checkout: Path, database_url: str, redis_port: int | None
) -> tuple[subprocess.Popen[str], str]:
    workers = (
        []
        if redis_port is None
        else ["--workers", "2", "--redis-url", f"redis://127.0.0.1:{redis_port}/0"]
    )
    return serve(
        checkout,
        ["--database-url", database_url, *workers],
        {
            "PATIENCE_RACE_WINNABLE_POOL_TARGET": "0",
            "PATIENCE_RACE_VERDICT_BUDGET_S": "0",
            "PATIENCE_RACE_FLOOD_CLOSE_AFTER": "1000000000",
            "PATIENCE_RACE_RATE_PER_S": "1000000000",
            "PATIENCE_RACE_RATE_BURST": "1000000000",
        },
    )


async def ask_unknown(url: str, requests: int, connections: int) -> dict[str, int]:
    """``requests`` spectates of codes no room has, over ``connections`` anonymous
    connections, each waiting for its answer before the next: the answers by code."""
    answers: dict[str, int] = {}

    async def one(n: int) -> None:
        async with connect(url) as ws:
            await ws.send('{"type": "hello"}')
            await ws.recv()
            for index in range(n, requests, connections):
                await ws.send(json.dumps({"type": "spectate", "code": f"NOROOM{index:06d}"}))
                answer = json.loads(await ws.recv())
                code = answer.get("code", answer["type"])
                answers[code] = answers.get(code, 0) + 1

    await asyncio.gather(*(one(n) for n in range(connections)))
    return answers


async def measure_one(checkout: Path, mode: str, args: argparse.Namespace) -> str:
    database_url, pg_url = "", None
    with (
        tempfile.TemporaryDirectory() as directory,
        private_redis() if mode == "2 workers" else contextlib.nullcontext() as redis_port,
    ):
        if args.postgres:
            server = make_url(args.postgres)
            name = f"patience_race_bench_{secrets.token_hex(4)}"
            await postgres_admin(args.postgres, f'CREATE DATABASE "{name}"')
            database_url = pg_url = server.set(database=name).render_as_string(hide_password=False)
        else:
            database_url = f"sqlite:///{Path(directory) / 'bench.sqlite3'}"
        process, url = start_server(checkout, database_url, redis_port)
        try:
            await asyncio.sleep(SETTLE_S)
            before = Cost(cpu_seconds(process.pid), redis_calls(redis_port), 0)
            await asyncio.sleep(IDLE_S)
            idle = Cost(
                cpu_seconds(process.pid) - before.cpu_s,
                redis_calls(redis_port) - before.redis_calls - 1,
                0,
            )
            if pg_url is not None:
                await asyncio.sleep(PG_FLUSH_S)
            start = Cost(
                cpu_seconds(process.pid), redis_calls(redis_port), await transactions(pg_url)
            )
            began = time.monotonic()
            answers = await ask_unknown(url, args.requests, args.connections)
            took = time.monotonic() - began
            end = Cost(cpu_seconds(process.pid), redis_calls(redis_port), 0)
            if pg_url is not None:
                await asyncio.sleep(PG_FLUSH_S)
                end.transactions = await transactions(pg_url) - 1
        finally:
            process.terminate()
            process.wait()
            if pg_url is not None:
                await postgres_admin(
                    args.postgres, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
                )
    scale = took / IDLE_S
    cpu_us = (end.cpu_s - start.cpu_s - idle.cpu_s * scale) / args.requests * 1e6
    redis_per_request = (
        end.redis_calls - start.redis_calls - 1 - idle.redis_calls * scale
    ) / args.requests
    calls = "n/a" if redis_port is None else f"{redis_per_request:.2f}"
    xacts = (
        "n/a"
        if pg_url is None
        else f"{(end.transactions - start.transactions) / args.requests:.2f}"
    )
    return (
        f"| {mode} | {args.requests} | {args.requests / took:.0f} | {cpu_us:.0f} | "
        f"{calls} | {xacts} | {', '.join(f'{n} {c}' for c, n in answers.items())} |"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--checkout", action="append", default=[], help="LABEL=PATH of a source tree to serve from"
    )
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument(
        "--postgres",
        metavar="URL",
        help="a PostgreSQL server (postgresql+asyncpg://...) to make each "
        "run's database on, and count its transactions",
    )
    args = parser.parse_args()
    targets = [tuple(item.split("=", 1)) for item in args.checkout] or [("after", str(HERE))]
    for label, path in targets:
        print(f"## {label}: a spectate of a code no room has\n")
        print(
            "| server | requests | per second | CPU µs per request | Redis commands per "
            "request | database transactions per request | answers |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for mode in ("1 process", "2 workers"):
            print(f"{label}: {mode}", file=sys.stderr)
            print(await measure_one(Path(path).resolve(), mode, args), flush=True)
        print()


if __name__ == "__main__":
    asyncio.run(main())
