"""Group commit: database writes queued by the server, done in order by one background task.

Move handling never waits on the database except for the one thing it must: a move is stored
before it is acknowledged. Moves queued while a write is under way are stored together in one
transaction, so durability costs one commit per batch rather than one per move. Every write is
idempotent, so a failed batch is simply retried (with backoff, logged, and shown on /healthz)
until the database answers again; nothing queued is dropped while the server runs.

Each write's future says True once it is written. Only ``close`` gives writes up: those the
database has not taken within its time limit, and any queued after it, say False.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from server.store import AcceptedMove

log = logging.getLogger("patience_race.writer")



@dataclass
class _Job:
    moves: list[AcceptedMove] | None = None
    action: Callable[[], Awaitable[Any]] | None = None
    done: asyncio.Future[bool] = field(default_factory=lambda: asyncio.get_running_loop()
                                       .create_future())
    """True once written; False if given up (see ``Writer.close``)."""


class Writer:
    def __init__(self, record_moves: Callable[[Sequence[AcceptedMove]], Awaitable[None]],
                 retry_s: float = 0.5, max_retry_s: float = 10.0) -> None:
        self._record_moves = record_moves
        self._queue: asyncio.Queue[_Job] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._writing: list[_Job] = []
        """The jobs of the batch under way."""
        self._closed = False
        self._retry_s, self._max_retry_s = retry_s, max_retry_s
        self.failing_since: float | None = None
        self.last_error: str | None = None
        self.batches = 0
        self.moves_written = 0

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="db-writer")

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    def store_moves(self, rows: list[AcceptedMove]) -> asyncio.Future[bool]:
        """Queue accepted moves; the future says True once they are committed."""
        return self._queue_job(_Job(moves=rows))

    def run(self, action: Callable[[], Awaitable[Any]]) -> asyncio.Future[bool]:
        """Queue any other idempotent write, done in order with the moves."""
        return self._queue_job(_Job(action=action))

    def _queue_job(self, job: _Job) -> asyncio.Future[bool]:
        if self._closed:
            job.done.set_result(False)
        else:
            self._queue.put_nowait(job)
        return job.done

    async def flush(self) -> None:
        """Wait until everything queued so far is written."""
        await self.run(_nothing)

    async def close(self, timeout: float | None = None) -> int:
        """Write everything queued, waiting at most ``timeout`` seconds, then stop; ``stopped``
        waits for a write cut short to let go. Returns how many writes were given up, not
        done in time (their futures say False, as do those of writes queued from now on)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self.flush()
        self._closed = True
        if self._task is not None:
            self._task.cancel()
        given_up = [job for job in [*self._writing, *self._drain()] if not job.done.done()]
        for job in given_up:
            job.done.set_result(False)
        return len(given_up)

    async def stopped(self) -> None:
        """Once ``close`` has been called: until the writing task has ended. A write cut short
        ends within its driver's own limits (on SQLite, the statement runs on in the driver's
        thread until the 5 s busy timeout; asyncpg's close waits up to 2 s). Wait for it: left
        to be cancelled again as the event loop closes, aiosqlite can hang."""
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _drain(self) -> list[_Job]:
        jobs = []
        while not self._queue.empty():
            jobs.append(self._queue.get_nowait())
        return jobs

    async def _run(self) -> None:
        while True:
            jobs = [await self._queue.get(), *self._drain()]
            self._writing = jobs
            await self._write_until_done(jobs)
            for job in jobs:
                if not job.done.done():
                    job.done.set_result(True)
            self._writing = []

    async def _write_until_done(self, jobs: list[_Job]) -> None:
        delay = self._retry_s
        loop = asyncio.get_running_loop()
        while True:
            try:
                await self._write(jobs)
            except Exception as error:  # noqa: BLE001 - any database failure is retried
                if self.failing_since is None:
                    self.failing_since = loop.time()
                self.last_error = f"{type(error).__name__}: {error}"
                log.warning("database write failed, retrying in %.1fs: %s", delay,
                            self.last_error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._max_retry_s)
                continue
            if self.failing_since is not None:
                log.warning("database writes succeed again")
            self.failing_since, self.last_error = None, None
            return

    async def _write(self, jobs: list[_Job]) -> None:
        """Runs of consecutive move jobs become one transaction; other jobs run in order."""
        index = 0
        while index < len(jobs):
            if jobs[index].moves is not None:
                rows: list[AcceptedMove] = []
                while index < len(jobs) and jobs[index].moves is not None:
                    rows += jobs[index].moves or []
                    index += 1
                await self._record_moves(rows)
                self.batches += 1
                self.moves_written += len(rows)
            else:
                action = jobs[index].action
                assert action is not None
                await action()
                index += 1


async def _nothing() -> None:
    return None
