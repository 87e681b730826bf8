"""The solver processes: ``SolverProcesses``, a few processes for one kind of search (hints,
verdicts, the winnable pool), and ``core``, which search core they use.

A hint runs the solver (``engine.hints``), which takes up to its budget of CPU: never on the
event loop. Searches run in ``SolverProcesses``: a few processes started with the ``spawn``
method (a child holds nothing of the server's sockets, threads or event loop; what it runs,
``engine.hints``, needs only the engine), each warmed up before it takes any work
(``server.rooms.solver_process.begin``). Who uses them how much is ``server.rooms.solver``'s
(``SolverPool``) and ``server.rooms.pool``'s.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from engine.hints import warm_up
from engine.solver import core_description, core_name
from engine.solver.compiled import RULE_SETS as COMPILED_RULE_SETS
from server.core.errors import Refusal
from server.rooms.solver_process import begin, pid_after, sigint_held
from wire.protocol import ErrorCode

log = logging.getLogger("patience_race.hints")

SLACK_S = 10.0
"""How much longer than its budget a search may take to come back (a child starting, a busy
machine) before it is given up as ``unavailable``."""
WARM_WITHIN_S = 120.0
"""How long starting the solver processes and warming them up may take (a busy machine)."""
SPREAD_S = 0.05
"""How long each process holds its part of the start (``pid_after``)."""


def core() -> dict[str, Any]:
    """Which search core the solver processes use, for ``/healthz``: ``compiled`` (the C core,
    for the rule sets it knows, the Python search for the others) or ``python``. The processes
    are spawned from this one's installation and environment, so they load what it loads."""
    return {
        "name": core_name(),
        "compiled_rule_sets": sorted(COMPILED_RULE_SETS),
        "description": core_description(),
    }


class SolverProcesses:
    """``count`` spawned processes for one kind of search (``kind``: hints, verdicts, the
    winnable pool), of the given ``niceness``: started by ``start`` or by the first search,
    each warmed up before it takes any work. A process that dies takes the others with it
    (``BrokenProcessPool``): they are started again, and warmed, at once."""

    def __init__(self, kind: str, count: int, niceness: int) -> None:
        self.kind, self.count, self.niceness = kind, count, niceness
        self.warm = False
        """Every process started and warmed up (by ``start``), and none died since."""
        self.searching = 0
        """Searches handed to the processes whose answers are awaited."""
        self.restarts = 0
        """How often the processes were started again after one died."""
        self._executor: ProcessPoolExecutor | None = None
        self._starting: asyncio.Task[None] | None = None
        self._closed = False

    def _pool(self) -> ProcessPoolExecutor:
        if self._closed:
            raise Refusal(ErrorCode.UNAVAILABLE, "the server is stopping")
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                self.count,
                multiprocessing.get_context("spawn"),
                initializer=begin,
                initargs=(os.getpid(), self.niceness, warm_up),
            )
        return self._executor

    async def start(self) -> None:
        """Start every process and wait until each is warm. Each process takes work only once
        it has warmed up, and each holds its part of the start a moment, so that the first
        ready does not take every part: the parts go round until every process has answered
        one."""
        if self.count == 0:
            return
        loop = asyncio.get_running_loop()
        began, answered = loop.time(), set[int]()
        try:
            while len(answered) < self.count:
                answered.update(
                    await asyncio.gather(
                        *(
                            self.run(pid_after, SPREAD_S, within_s=WARM_WITHIN_S)
                            for _ in range(self.count)
                        )
                    )
                )
        except Refusal as failed:
            log.error("the solver processes for %s did not start: %s", self.kind, failed.message)
            return
        self.warm = not self._closed
        log.info(
            "%d solver process%s for %s warm in %.1f s (pid %s)",
            self.count,
            "es" * (self.count != 1),
            self.kind,
            loop.time() - began,
            ", ".join(map(str, sorted(answered))),
        )

    async def run(self, function: Any, *args: Any, within_s: float) -> Any:
        """``function(*args)`` in one of the processes; ``unavailable`` when the answer does not
        come within ``within_s`` or the process died."""
        executor = self._pool()
        self.searching += 1
        try:
            with sigint_held():  # (where the executor starts a process, it starts it here)
                future = asyncio.get_running_loop().run_in_executor(executor, function, *args)
            return await asyncio.wait_for(future, within_s)
        except TimeoutError:
            raise Refusal(ErrorCode.UNAVAILABLE, "the solver took too long: try again") from None
        except BrokenProcessPool:  # a solver process died (killed, out of memory): start anew
            if executor is self._executor:  # (once, by the first search to hear of it)
                log.exception("a solver process for %s died: starting them again", self.kind)
                self._start_again()
            raise Refusal(ErrorCode.UNAVAILABLE, "the solver failed: try again") from None
        finally:
            self.searching -= 1

    def _start_again(self) -> None:
        self._stop_processes()
        self.warm, self.restarts = False, self.restarts + 1
        if self._starting is None or self._starting.done():
            self._starting = asyncio.create_task(self.start())

    def health(self) -> dict[str, Any]:
        """For ``/healthz``."""
        return {
            "processes": self.count,
            "warm": self.warm,
            "searching": self.searching,
            "restarts": self.restarts,
        }

    def close(self) -> None:
        """Stop the processes (a search under way is dropped)."""
        self._closed, self.warm = True, False
        if self._starting is not None:
            self._starting.cancel()
        self._stop_processes()

    def _stop_processes(self) -> None:
        if self._executor is not None:
            # A search runs to its budget; a stopping server does not wait for it. (Python
            # 3.14 names this ``terminate_workers``; 3.11 keeps the processes here.)
            processes = list(getattr(self._executor, "_processes", {}).values())
            self._executor.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                process.terminate()
            self._executor = None
