"""Every database write the server makes, done in order by one background task: group commit.

One path for every write. Moves, races, results, new players, daily claims: all are queued here
and written one transaction at a time by the writer's task, never beside it on a session of
their own. On SQLite two connections writing at once contend for the one file lock, and the
loser fails with ``database is locked`` once it has waited out the driver's busy timeout (5 s),
which CPU starvation makes easy; through one writer no write of this server ever waits for
another of its own. A lock held by someone else (a backup, a maintenance script, another
server on PostgreSQL, a deadlock or serialization failure there) makes a write fail, and the
writer retries it, with backoff, logged and shown on /healthz.

Move handling never waits on the database except for the one thing it must: a move is stored
before it is acknowledged. Moves queued while a write is under way are stored together in one
transaction, so durability costs one commit per batch rather than one per move. When the load
is light a write would find the writer idle and commit alone, so a write that finds it idle
waits up to ``window_s`` (``Settings.commit_window_ms``) for others to join it, or until
``max_batch`` moves are queued: each acknowledgement may wait that much longer, and none is
sent before its commit.

Two kinds of write:

- ``store_moves``, ``run`` and ``run_returning``: idempotent writes the server needs done
  (moves, a race's start and result, a lobby's removal). Retried until the database answers,
  however long; nothing queued is dropped while the server runs. Their futures say True once
  written (``run_returning``'s: what the write returned), False if given up. The moves of one
  race queued while no other write is queued after them join one job: one future for all of
  them, however many moves the race's racers make before the commit.
- ``call``: a write a client is waiting for (``hello``, ``create_room``, ``daily``), whose
  result it returns. It is given up, raising ``WriteGivenUp``, if it has not begun within its
  bound (queued behind other writes) or would begin a retry past it. An attempt under way is
  let finish, within the driver's own limits (SQLite's 5 s busy timeout, PostgreSQL's 10 s
  statement timeout): stopped halfway, a claim could land and its answer be lost. A retry after
  a commit whose answer was lost (a connection cut during the commit) finds the claim taken
  and says so; a new player made twice leaves an unused row.

A write for a race that another process holds now (``server.storage.holding``: its epoch has moved
on) is not retried: ``store_moves`` leaves those moves out of the batch, and an action raising
``Fenced`` ends there. Their futures say False (nothing was written, nothing is acknowledged),
and ``on_fenced`` is told the races, so that their rooms are let go.

Only ``close`` gives writes up otherwise: those the database has not taken within its time
limit, and any queued after it, say False (a ``call`` raises ``WriteGivenUp``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from server.core.said import MoveMade
from server.storage.holding import Fenced

log = logging.getLogger("patience_race.writer")

T = TypeVar("T")


class WriteGivenUp(Exception):
    """A ``call`` not done in time: not begun within its bound, failing until then, or cut off
    by ``close``."""


@dataclass(eq=False)
class _Job:
    moves: list[MoveMade] | None = None
    held: tuple[str, int] | None = None
    """The race the moves are of, and the epoch at which this process holds it."""
    action: Callable[[], Awaitable[Any]] | None = None
    deadline: float | None = None
    """A ``call``'s: no attempt begins after this loop time. None: retried until done."""
    behind: bool = False
    """Queued while a write was under way: it is written next, with no window."""
    returns: bool = False
    """A ``run_returning``: its future holds what its action returned."""
    started: bool = False
    done: asyncio.Future[Any] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    """True once written (a ``call``: what its action returned); False if given up."""


class Writer:
    def __init__(
        self,
        record_moves: Callable[[dict[str, list[MoveMade]], dict[str, int]], Awaitable[set[str]]],
        *,
        window_s: float = 0.0,
        max_batch: int = 1000,
        retry_s: float = 0.5,
        max_retry_s: float = 10.0,
    ) -> None:
        self._record_moves = record_moves
        self._queue: asyncio.Queue[_Job] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._writing: list[_Job] = []
        """The jobs of the batch under way."""
        self._open: dict[str, _Job] = {}
        """The move jobs still queued with no other write queued after them, by race: a race's
        next moves join its job."""
        self._closed = False
        self._window_s, self._max_batch = window_s, max_batch
        self._queued_moves = 0
        self._enough = asyncio.Event()
        """Set once ``max_batch`` moves are queued, or by ``flush``: the window ends early."""
        self._retry_s, self._max_retry_s = retry_s, max_retry_s
        self.failing_since: float | None = None
        self.last_error: str | None = None
        self.batches = 0
        self.moves_written = 0
        self.on_fenced: Callable[[frozenset[str]], None] = lambda races: None
        """Told the races whose writes were refused because another process holds them."""

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="db-writer")

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    def store_moves(
        self, race_id: str, epoch: int, moves: Sequence[MoveMade]
    ) -> asyncio.Future[bool]:
        """Queue moves of one race, held at ``epoch``; the future says True once they are
        committed, False if they never will be. It is the future of every move of the race
        queued since the last other write: each commit makes one a race."""
        self._queued_moves += len(moves)
        if self._queued_moves >= self._max_batch:
            self._enough.set()
        job = self._open.get(race_id)
        if job is not None and job.held == (race_id, epoch) and job.moves is not None:
            job.moves.extend(moves)
            return job.done
        job = self._queue_job(_Job(moves=list(moves), held=(race_id, epoch)))
        if not self._closed:
            self._open[race_id] = job
        return job.done

    def run(self, action: Callable[[], Awaitable[Any]]) -> asyncio.Future[bool]:
        """Queue any other idempotent write, done in order with the moves."""
        return self._queue_job(_Job(action=action)).done

    def run_returning(self, action: Callable[[], Awaitable[T]]) -> asyncio.Future[T | bool]:
        """As ``run``; the future holds what the write returned, or False if it is given up."""
        return self._queue_job(_Job(action=action, returns=True)).done

    async def call(self, action: Callable[[], Awaitable[T]], within_s: float) -> T:
        """Do a write a client waits for, in order with the others; return what it returns.
        Raises ``WriteGivenUp`` if no attempt began within ``within_s`` seconds, or the last
        failed and the next would begin later."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within_s
        job = self._queue_job(_Job(action=action, deadline=deadline))
        timer = loop.call_at(deadline, self._expire, job)
        try:
            result: T = await job.done
        finally:
            timer.cancel()
        return result

    def _expire(self, job: _Job) -> None:
        if not job.started and not job.done.done():
            job.done.set_exception(WriteGivenUp("the database took no write in time"))

    def _queue_job(self, job: _Job) -> _Job:
        if job.moves is None:  # (the moves queued before it are written before it)
            self._open.clear()
        if self._closed:
            _give_up(job)
        else:
            job.behind = bool(self._writing)
            self._queue.put_nowait(job)
        return job

    async def flush(self) -> None:
        """Wait until everything queued so far is written (with no window)."""
        flushed = self.run(_nothing)
        self._enough.set()
        await flushed

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
            _give_up(job)
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
        self._queued_moves = 0
        self._enough.clear()
        self._open.clear()
        return jobs

    async def _run(self) -> None:
        while True:
            first = await self._queue.get()
            if not first.behind and self._window_s > 0 and self._queued_moves < self._max_batch:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self._window_s):
                        await self._enough.wait()
            jobs = [first, *self._drain()]
            self._writing = jobs
            for group in _groups(jobs):
                await self._write_until_done(group)
            self._writing = []

    async def _write_until_done(self, jobs: list[_Job]) -> None:
        """Write one group (moves to store together, or one other write), retrying until it is
        done or, for a ``call``, until the next attempt would begin past its bound."""
        jobs = [job for job in jobs if not job.done.done()]  # a call given up meanwhile
        if not jobs:
            return
        delay = self._retry_s
        loop = asyncio.get_running_loop()
        for job in jobs:
            job.started = True
        while True:
            try:
                result = await self._write(jobs)
            except Fenced as fenced:
                self._fenced(jobs, fenced.race_ids)
                return
            except Exception as error:  # noqa: BLE001 - any database failure is retried
                if self.failing_since is None:
                    self.failing_since = loop.time()
                self.last_error = f"{type(error).__name__}: {error}"
                deadline = jobs[0].deadline
                if deadline is not None and loop.time() + delay > deadline:
                    log.warning("database write given up, its client told: %s", self.last_error)
                    if not jobs[0].done.done():
                        jobs[0].done.set_exception(WriteGivenUp(self.last_error))
                    return
                log.warning("database write failed, retrying in %.1fs: %s", delay, self.last_error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._max_retry_s)
                continue
            if self.failing_since is not None:
                log.warning("database writes succeed again")
            self.failing_since, self.last_error = None, None
            for job in jobs:
                if not job.done.done():
                    job.done.set_result(result if job.deadline is not None or job.returns else True)
            return

    async def _write(self, jobs: list[_Job]) -> Any:
        if jobs[0].action is not None:
            return await jobs[0].action()
        moves: dict[str, list[MoveMade]] = {}
        for job in jobs:
            assert job.held is not None and job.moves is not None
            moves.setdefault(job.held[0], []).extend(job.moves)
        epochs = dict(job.held for job in jobs if job.held is not None)
        fenced = await self._record_moves(moves, epochs)
        self.batches += 1
        self.moves_written += sum(len(job.moves or []) for job in jobs)
        if fenced:
            self.moves_written -= sum(
                len(job.moves or [])
                for job in jobs
                if job.held is not None and job.held[0] in fenced
            )
            self._fenced(
                [job for job in jobs if job.held is not None and job.held[0] in fenced],
                frozenset(fenced),
            )
        return True

    def _fenced(self, jobs: list[_Job], races: frozenset[str]) -> None:
        """Writes refused for good: another process holds these races now."""
        log.warning("writes refused: %s", Fenced(races))
        for job in jobs:
            if not job.done.done():
                if job.deadline is not None:
                    job.done.set_exception(WriteGivenUp(str(Fenced(races))))
                else:
                    job.done.set_result(False)
        self.on_fenced(races)


def _groups(jobs: list[_Job]) -> Iterator[list[_Job]]:
    """Runs of consecutive move jobs, each stored in one transaction; every other job alone."""
    run: list[_Job] = []
    for job in jobs:
        if job.moves is not None:
            run.append(job)
            continue
        if run:
            yield run
            run = []
        yield [job]
    if run:
        yield run


def _give_up(job: _Job) -> None:
    if job.deadline is not None:
        job.done.set_exception(WriteGivenUp("the server is stopping"))
    else:
        job.done.set_result(False)


async def _nothing() -> None:
    return None
