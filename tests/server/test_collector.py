"""The server's garbage collection policy (server/collector.py): survivors of a collection are
frozen at once, cycles among them are found by the full collection that growth brings on, and
stopping gives the process back its collector as it was."""

from __future__ import annotations

import asyncio
import gc
import sys
import weakref
from collections.abc import Iterator

import pytest

from server.collector import FULL_GROWTH, YOUNG_INTERVAL_S, YOUNG_THRESHOLD, Collector


class Node:
    other: Node | None = None


@pytest.fixture
def collector() -> Iterator[Collector]:
    loop = asyncio.new_event_loop()
    collector = Collector(loop)
    collector.start()
    try:
        yield collector
    finally:
        collector.stop()
        loop.close()


def is_walked(thing: object) -> bool:
    """Whether the collector's generations hold ``thing`` (the permanent one aside)."""
    return any(item is thing for item in gc.get_objects())


def test_what_survives_a_young_collection_is_frozen(collector: Collector) -> None:
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD
    kept = [Node() for _ in range(10)]
    assert is_walked(kept[0])
    gc.collect(0)
    assert not is_walked(kept[0]) and gc.is_tracked(kept[0])


def test_young_collections_come_by_the_clock(collector: Collector) -> None:
    gc.set_threshold(1 << 30, 10, 10)  # none from the allocations counted
    kept = [Node() for _ in range(10)]
    collector.loop.run_until_complete(asyncio.sleep(3 * YOUNG_INTERVAL_S))
    assert not is_walked(kept[0])


def test_a_cycle_that_died_frozen_is_found_by_the_full_collection(collector: Collector) -> None:
    first, second = Node(), Node()
    first.other, second.other = second, first
    alive = weakref.ref(first)
    gc.collect(0)
    del first, second
    gc.collect()
    assert alive() is not None  # frozen: what the routine collections leave
    collector.full_at = 0  # as if the memory held had doubled
    gc.collect(0)
    assert collector.full_collections == 0  # due, and run from the loop, not in the collection
    collector.loop.run_until_complete(asyncio.sleep(0))
    assert collector.full_collections == 1
    assert alive() is None
    assert collector.full_at > sys.getallocatedblocks()  # the next, from what was left


def test_memory_doubled_brings_on_a_full_collection(collector: Collector) -> None:
    held = sys.getallocatedblocks()
    assert collector.full_at == pytest.approx(held * FULL_GROWTH, rel=0.01)
    kept = [Node() for _ in range(held)]
    gc.collect(0)
    collector.loop.run_until_complete(asyncio.sleep(0))
    assert collector.full_collections == 1
    assert collector.full_at >= (held + len(kept)) * FULL_GROWTH  # from what is held now


def test_stopping_gives_the_collector_back() -> None:
    before = gc.get_threshold()
    loop = asyncio.new_event_loop()
    collector = Collector(loop)
    collector.start()
    collector.full_at = 0
    gc.collect(0)  # a full collection is now due
    collector.stop()
    loop.run_until_complete(asyncio.sleep(0))
    loop.close()
    assert gc.get_threshold() == before
    assert collector._collected not in gc.callbacks
    assert gc.get_freeze_count() == 0
    assert collector.full_collections == 0  # the one due was called off
