"""Ctrl-C on a real ``patience-race serve``, one process and two workers: it stops gracefully
and quietly, as SIGTERM does. A terminal's Ctrl-C sends SIGINT to every process of its
foreground group, so the server runs here in a session of its own and the test sends SIGINT to
the whole group: the server, its workers and their solver processes, one of them idle after a
hint (the one that used to die with a traceback), as a terminal would.

The two-worker tests need PATIENCE_RACE_TEST_REDIS_URL (CI sets it) and are skipped without it.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import signal
import sys
from pathlib import Path

import pytest

from clients.sdk import RaceClient
from tests.server.conftest import drop_redis_keys
from wire.protocol import YourView

SERVING = re.compile(r"serving on (ws://[\d.]+:\d+/ws)")
STOP_WITHIN_S = 30.0
LOGGED = re.compile(r"^\d{4}-\d\d-\d\d [\d:,]+ INFO ")
"""A quiet server prints its log's information lines, nothing else (no traceback, no
warning of leaked semaphores)."""


class Serving:
    """``patience-race serve`` in a session of its own, everything it prints kept."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.printed: list[str] = []

    @classmethod
    async def start(cls, tmp_path: Path, *options: str, redis_prefix: str = "") -> Serving:
        env = dict(
            os.environ,
            PATIENCE_RACE_COUNTDOWN_S="0.2",
            PATIENCE_RACE_PORT="0",
            PATIENCE_RACE_WINNABLE_POOL_TARGET="0",
            PATIENCE_RACE_VERDICT_BUDGET_S="0",
            PATIENCE_RACE_REDIS_PREFIX=redis_prefix or "unused:",
        )
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server.commands",
            "serve",
            "--database-url",
            f"sqlite:///{tmp_path / 'race.sqlite3'}",
            *options,
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        return cls(process)

    async def line(self) -> str:
        assert self.process.stderr is not None
        line = (await self.process.stderr.readline()).decode()
        if line:  # (empty at the end)
            self.printed.append(line)
        return line

    async def url(self) -> str:
        async with asyncio.timeout(60):
            while not (match := SERVING.search(await self.line())):
                pass
        return match.group(1)

    async def ctrl_c(self) -> int:
        """SIGINT to the whole group, as a terminal's Ctrl-C; the exit status."""
        os.killpg(self.process.pid, signal.SIGINT)
        async with asyncio.timeout(STOP_WITHIN_S):
            while await self.line():
                pass
            return await self.process.wait()

    def noise(self) -> list[str]:
        return [line for line in self.printed if not LOGGED.match(line)]


async def ask_a_hint(url: str) -> None:
    """A practice race alone on a chosen deal, and a hint: a solver process is started, and
    waits for the next search once it has answered."""
    async with await RaceClient.connect(url) as client:
        await client.hello(name="Ann")
        await client.create_room("hidden-cards", deal="number", number=2)
        await client.start()
        await client.next_event(YourView)
        assert (await client.hint()).result == "won"


async def stop_after_a_hint(serving: Serving) -> None:
    await ask_a_hint(await serving.url())
    status = await serving.ctrl_c()
    printed = "".join(serving.printed)
    assert status == 0, printed
    assert serving.noise() == [], printed
    assert "shutting down" in printed


async def stop_while_migrating(serving: Serving) -> None:
    """Ctrl-C at the first line printed (the migrations run): it stops, before serving."""
    await serving.line()
    status = await serving.ctrl_c()
    printed = "".join(serving.printed)
    assert status == 0, printed
    assert serving.noise() == [] and not SERVING.search(printed), printed


async def test_ctrl_c_stops_one_process_quietly(tmp_path: Path) -> None:
    await stop_after_a_hint(await Serving.start(tmp_path))


async def test_ctrl_c_while_one_process_starts_stops_it_quietly(tmp_path: Path) -> None:
    await stop_while_migrating(await Serving.start(tmp_path))


@pytest.mark.parametrize("moment", ["after_a_hint", "while_migrating"])
async def test_ctrl_c_stops_two_workers_quietly(
    tmp_path: Path, redis_url: str, moment: str
) -> None:
    prefix = f"test-{secrets.token_hex(4)}:"
    serving = await Serving.start(
        tmp_path, "--workers", "2", "--redis-url", redis_url, redis_prefix=prefix
    )
    try:
        if moment == "after_a_hint":
            await stop_after_a_hint(serving)
        else:
            await stop_while_migrating(serving)
    finally:
        await drop_redis_keys(redis_url, prefix)
