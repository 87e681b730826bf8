"""Whose search comes next when the hint processes are all busy: hints and live verdicts
waiting for a process take turns by address, round robin (``Turns``), for
``server.rooms.solver.SolverPool``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict, deque
from collections.abc import AsyncIterator


class Turns:
    """Whose hint is searched next: ``slots`` at a time (one per hint process); the others wait
    their turn by client, round robin, and a client whose search has just ended goes behind
    the others waiting. An honest player's hint then waits for the searches under way and at
    most one of each other client, however many that client asks for."""

    def __init__(self, slots: int) -> None:
        self.slots, self.running = slots, 0
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()
        """Per client, its hints waiting in the order asked; the client next in turn first."""

    @contextlib.asynccontextmanager
    async def turn(self, client: str) -> AsyncIterator[None]:
        """Wait for ``client``'s turn, and hold a slot while the block runs."""
        if self.running < self.slots and not self._waiting:
            self.running += 1
        else:
            ready = asyncio.get_running_loop().create_future()
            self._waiting.setdefault(client, deque()).append(ready)
            try:
                await ready
            except asyncio.CancelledError:
                if ready.done() and not ready.cancelled():
                    self._next(client)  # its turn had come: it is handed on
                else:
                    self._forget(client, ready)
                raise
        try:
            yield
        finally:
            self._next(client)

    def _next(self, done: str) -> None:
        """``done``'s slot is free: give it to the client next in turn."""
        self.running -= 1
        if done in self._waiting and len(self._waiting) > 1:
            self._waiting.move_to_end(done)
        while self._waiting and self.running < self.slots:
            client, waiting = next(iter(self._waiting.items()))
            ready = waiting.popleft()
            if waiting:
                self._waiting.move_to_end(client)
            else:
                del self._waiting[client]
            if not ready.done():  # (not given up meanwhile)
                ready.set_result(None)
                self.running += 1

    def _forget(self, client: str, ready: asyncio.Future[None]) -> None:
        waiting = self._waiting.get(client)
        if waiting is not None and ready in waiting:
            waiting.remove(ready)
            if not waiting:
                del self._waiting[client]
