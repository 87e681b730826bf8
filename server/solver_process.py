"""What a solver process (``server.hints.SolverPool``) runs first: it yields the CPU to its
server, and ends with it.

A search takes all the CPU it is given for its budget; on a machine with as many server
processes as cores it would take that time from a server's event loop, and every racer's
acknowledgements with it. So a solver process lowers its own priority (``NICENESS``): a hint
or a pool deal may take longer on a busy machine, a move does not.

Ctrl-C in a terminal sends SIGINT to every process of the foreground group, the solver
processes too: one waiting for work would die of ``KeyboardInterrupt`` with a traceback, and its
server's pool would break under it while the server shuts down. So a solver process ignores
SIGINT: its server, which handles it, stops it (as on SIGTERM, which only the server gets).

A server stopped cleanly stops its solver processes; one killed (``kill -9``, out of memory)
cannot, and a process of ``ProcessPoolExecutor`` waiting for work would wait for ever, holding
its memory and the server's standard output and error (a supervisor or test reading those to
their end would never see it). So each watches its parent, and ends once it is gone. This
module imports only the standard library: a spawned process imports it before anything else.
"""

from __future__ import annotations

import os
import signal
import threading
import time

WATCH_EVERY_S = 1.0
NICENESS = 10


def begin(parent: int) -> None:
    """Leave SIGINT to the server, yield the CPU to the server's processes, and end once
    ``parent`` is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(NICENESS)
    exit_with_parent(parent)


def exit_with_parent(parent: int) -> None:
    """Start a thread that ends this process once ``parent`` is no longer its parent."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_EVERY_S)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
