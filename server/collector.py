"""How the garbage collector runs in a server process that holds thousands of live games.

CPython's collector is generational: a young collection walks every object made since the last
one, and what survives is walked again by the older generations' collections, less often. That
bets that most objects die young. In a race server many do not: a move's own objects die at once,
but each move also leaves objects that live as long as the race (the game's new piles, the
history), and connections, tasks and rooms come and go all the time. At 2,000 racers the
young collections under the old setting (every 50,000 net allocations) came every 4 s and walked
65,000-150,000 objects, nearly all alive, stopping the event loop for 35-105 ms each: the open
loop's p99 (docs/performance.md, "Issue 11, part 6").

So a server process collects differently (``Collector``):

- the young generation is collected often, every ``YOUNG_INTERVAL_S`` seconds, so each pause is
  short: a young collection walks what was made since the last and is still alive, which grows
  with time under load, not with the net allocations CPython counts (a move that replaces a
  game's pile makes an object and frees one: it counts nothing, but the new one is walked);
  ``YOUNG_THRESHOLD`` net allocations bring one on sooner, in a burst;
- what survives a collection is frozen at once (``gc.freeze``: moved to the permanent generation,
  which collections do not walk), so the routine collections walk each object once, young;
- what that leaves, reference cycles among objects that lived through a collection and became
  garbage later (a closed connection's objects, a finished room's), a full collection finds: with
  everything unfrozen, when the memory blocks the process holds have doubled since the last
  full one (as Go's collector paces itself by default; CPython's oldest generation waits for a
  quarter more objects): the full collections' work stays in proportion to what was made, and
  in a steady state there are none. A full collection stops the loop for as long as it walks
  everything (150-400 ms at 600-2,000 racers): doubling makes them as rare as memory allows. It
  runs from the event loop, not inside an allocation. Objects freed by their reference counts,
  most of what dies, leave the permanent generation at once.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from typing import Any

YOUNG_INTERVAL_S = 0.05
"""Seconds between young collections: at 2,000 moves a second, a pause of a few ms
(docs/performance.md)."""
YOUNG_THRESHOLD = 5_000
"""Net allocations that bring a young collection on sooner."""
FULL_GROWTH = 2.0
"""A full collection runs when the memory blocks held are this many times what the last
left."""


class Collector:
    """The policy above, for the life of a server (``start`` ... ``stop``), on its event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.full_at = 0
        """The memory blocks held (``sys.getallocatedblocks``, 0.1 ms for a heap of 2 million
        objects) at which a full collection is due. Not the frozen objects:
        ``gc.get_freeze_count`` walks them all, 12 ms for 2 million."""
        self.full_collections = 0
        self._full: asyncio.Handle | None = None
        """The full collection due, until it has run."""
        self._young: asyncio.TimerHandle | None = None
        self._thresholds = gc.get_threshold()

    def start(self) -> None:
        """Freeze what start-up made (modules, schemas, restored races: alive as long as the
        process) and collect from now on as the module says."""
        gc.collect()
        gc.freeze()
        self._due_after_growth()
        gc.set_threshold(YOUNG_THRESHOLD, 10, 10)
        gc.callbacks.append(self._collected)
        self._young = self.loop.call_later(YOUNG_INTERVAL_S, self.collect_young)

    def stop(self) -> None:
        """Back to the collector's own ways (tests run several servers in one process)."""
        gc.callbacks.remove(self._collected)
        for handle in (self._young, self._full):
            if handle is not None:
                handle.cancel()
        gc.set_threshold(*self._thresholds)
        gc.unfreeze()

    def _due_after_growth(self) -> None:
        self.full_at = int(sys.getallocatedblocks() * FULL_GROWTH)

    def _collected(self, phase: str, info: dict[str, Any]) -> None:
        if phase != "stop":
            return
        gc.freeze()
        if self._full is None and sys.getallocatedblocks() >= self.full_at:
            self._full = self.loop.call_soon(self.collect_all)

    def collect_young(self) -> None:
        gc.collect(0)
        self._young = self.loop.call_later(YOUNG_INTERVAL_S, self.collect_young)

    def collect_all(self) -> None:
        """A full collection, of what is frozen too; then freeze what is left."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._due_after_growth()
        self.full_collections += 1
        self._full = None
