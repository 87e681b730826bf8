"""What a solver process (``server.rooms.solver_processes.SolverProcesses``) runs first: it yields
the CPU to its server, ignores the terminal's Ctrl-C, ends with its server, and warms up.

A search takes all the CPU it is given for its budget; on a machine with as many server
processes as cores it would take that time from a server's event loop, and every racer's
acknowledgements with it. So a solver process lowers its own priority: a hint process by
``NICENESS``, a process for background searches (verdicts after races, the winnable pool) by
``BACKGROUND_NICENESS``, the lowest there is. A hint or a pool deal may take longer on a busy
machine, a move does not; and where a hint and a verdict search at once, the scheduler gives
the hint most of the CPU (at nice 10 against 19, about 7 parts in 8).

Ctrl-C at a terminal sends SIGINT to every process of its group, solver processes included;
their server stops them itself (``SolverProcesses.close``), so they ignore it rather than print
a ``KeyboardInterrupt`` traceback each. From their first instruction: the server spawns them
with SIGINT blocked (``sigint_held``; a blocked signal stays blocked across ``exec``), since a
Ctrl-C in the second or two a process takes to import its way to ``begin`` would otherwise
interrupt the import.

A server stopped cleanly stops its solver processes; one killed (``kill -9``, out of memory)
cannot, and a process of ``ProcessPoolExecutor`` waiting for work would wait for ever, holding
its memory and the server's standard output and error (a supervisor or test reading those to
their end would never see it). So each watches its parent, and ends once it is gone.

Last, it runs ``warm`` (``engine.hints.warm_up``: imports the solver and runs one trivial
search) before it takes any work: the first hint a player asks for is searched by a process
that is ready, not one still starting. This module imports only the standard library: a
spawned process imports it before anything else.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator

WATCH_EVERY_S = 1.0
NICENESS = 10
BACKGROUND_NICENESS = 19


def begin(parent: int, niceness: int, warm: Callable[[], object]) -> None:
    """Yield the CPU to the server's processes, leave SIGINT to the server, end once
    ``parent`` is gone, and run ``warm``."""
    os.nice(niceness)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent(parent)
    warm()


@contextlib.contextmanager
def sigint_held() -> Iterator[None]:
    """SIGINT blocked in this thread meanwhile: a process spawned from it starts so. The server
    loses no Ctrl-C: its other threads take the signal, or it waits until this ends."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def exit_with_parent(parent: int) -> None:
    """Start a thread that ends this process once ``parent`` is no longer its parent."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_EVERY_S)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def pid_after(seconds: float) -> int:
    """This process's id, after ``seconds``: given to each process as it starts, so that one
    ready early does not take the others' (``SolverProcesses.start``)."""
    time.sleep(seconds)
    return os.getpid()
