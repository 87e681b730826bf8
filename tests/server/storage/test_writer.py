"""The writer (server/storage/writer.py) on its own: a fake database that records each commit."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import pytest

from server.core.said import MoveMade
from server.storage.writer import WriteGivenUp, Writer

RACE, EPOCH = "r", 1
"""The race the moves are of, and the epoch this process holds it at."""


def move(index: int) -> list[MoveMade]:
    return [MoveMade(player_id="p", index=index, text="t", at_ms=index)]


class FakeDatabase:
    def __init__(self) -> None:
        self.commits: list[list[int]] = []
        self.failing = False
        self.taken: set[str] = set()
        """Races another process holds now: their moves are refused."""

    async def record_moves(
        self, moves: Mapping[str, Sequence[MoveMade]], epochs: dict[str, int]
    ) -> set[str]:
        await asyncio.sleep(0)
        if self.failing:
            raise OSError("the database is away")
        fenced = self.taken & set(epochs)
        self.commits.append(
            [
                move.index
                for race_id, made in moves.items()
                if race_id not in fenced
                for move in made
            ]
        )
        return fenced


async def spaced_moves(writer: Writer, count: int, gap_s: float) -> list[bool]:
    """Moves queued one by one, ``gap_s`` apart, as racers at a light load send them."""
    stored = []
    for index in range(count):
        stored.append(writer.store_moves(RACE, EPOCH, move(index)))
        await asyncio.sleep(gap_s)
    return list(await asyncio.gather(*stored))


async def test_without_a_window_a_move_alone_is_committed_alone() -> None:
    database = FakeDatabase()
    writer = Writer(database.record_moves)
    writer.start()
    assert await spaced_moves(writer, 5, 0.005) == [True] * 5
    assert database.commits == [[0], [1], [2], [3], [4]]
    await writer.close()


async def test_the_window_groups_moves_that_come_within_it() -> None:
    database = FakeDatabase()
    writer = Writer(database.record_moves, window_s=0.05)
    writer.start()
    assert await spaced_moves(writer, 5, 0.002) == [True] * 5
    assert database.commits == [[0, 1, 2, 3, 4]]
    assert (writer.batches, writer.moves_written) == (1, 5)
    await writer.close()


async def test_the_window_ends_early_once_a_full_batch_is_queued() -> None:
    database = FakeDatabase()
    writer = Writer(database.record_moves, window_s=10.0, max_batch=3)
    writer.start()
    async with asyncio.timeout(5):  # well under the 10 s window, with room for a loaded machine
        assert await spaced_moves(writer, 3, 0) == [True] * 3
    assert database.commits == [[0, 1, 2]]
    await writer.close()


async def test_a_call_returns_its_result_in_order_with_the_moves() -> None:
    database = FakeDatabase()
    writer = Writer(database.record_moves, window_s=0.01)
    writer.start()
    stored = writer.store_moves(RACE, EPOCH, move(0))

    async def count_commits() -> int:
        return len(database.commits)

    assert await writer.call(count_commits, within_s=1) == 1
    assert await stored
    await writer.close()


async def test_a_call_queued_behind_a_failing_write_is_given_up_in_time() -> None:
    database = FakeDatabase()
    database.failing = True
    writer = Writer(database.record_moves, retry_s=0.05)
    writer.start()
    stored = writer.store_moves(RACE, EPOCH, move(0))
    ran = []

    async def write() -> None:
        ran.append(True)

    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises(WriteGivenUp):
        await writer.call(write, within_s=0.2)
    assert loop.time() - began < 2.0  # given up, not retried for ever (slack for a busy CI)
    database.failing = False
    assert await stored
    await writer.flush()
    assert ran == [], "a write given up is never done"
    await writer.close()


async def test_a_failing_call_is_retried_until_its_bound_then_given_up() -> None:
    writer = Writer(FakeDatabase().record_moves, retry_s=0.05)
    writer.start()
    attempts = []

    async def write() -> None:
        attempts.append(True)
        raise OSError("database is locked")

    with pytest.raises(WriteGivenUp, match="database is locked"):
        await writer.call(write, within_s=0.3)
    assert 2 <= len(attempts) <= 4
    assert writer.failing_since is not None
    await writer.close()


async def test_close_gives_up_the_calls_it_has_not_done() -> None:
    database = FakeDatabase()
    database.failing = True
    writer = Writer(database.record_moves, retry_s=0.05)
    writer.start()
    stored = writer.store_moves(RACE, EPOCH, move(0))

    async def write() -> None:
        return None

    call = asyncio.ensure_future(writer.call(write, within_s=10))
    await asyncio.sleep(0.01)
    assert await writer.close(timeout=0.05) == 2
    await writer.stopped()
    assert await stored is False
    with pytest.raises(WriteGivenUp):
        await call


async def test_moves_of_a_race_another_process_holds_are_refused_for_good() -> None:
    """Fenced (``server.storage.holding``): not retried, not acknowledged, and the room is told; the
    moves of other races in the same commit are stored."""
    database = FakeDatabase()
    database.taken = {"lost"}
    writer = Writer(database.record_moves, window_s=0.05)
    told: list[frozenset[str]] = []
    writer.on_fenced = told.append
    writer.start()
    kept = writer.store_moves(RACE, EPOCH, move(0))
    refused = writer.store_moves("lost", 3, move(7))
    assert await kept is True and await refused is False
    assert database.commits == [[0]] and told == [frozenset({"lost"})]
    assert writer.moves_written == 1
    await writer.close(1.0)


async def test_a_race_s_moves_queued_together_share_one_future_and_one_commit() -> None:
    """One future a race a commit, however many moves its racers make before it."""
    database = FakeDatabase()
    writer = Writer(database.record_moves, window_s=0.05)
    writer.start()
    first = writer.store_moves(RACE, EPOCH, move(0))
    assert writer.store_moves(RACE, EPOCH, move(1)) is first
    other = writer.store_moves("other", EPOCH, move(5))
    assert other is not first
    assert await first is True and await other is True
    assert database.commits == [[0, 1, 5]]
    later = writer.store_moves(RACE, EPOCH, move(2))
    assert later is not first, "a commit under way or done takes no more moves"
    assert await later is True
    await writer.close()


async def test_moves_after_another_write_wait_for_it() -> None:
    """A race's moves queued after another write (its result, say) do not join the job before
    it: the writes are committed in the order they were queued."""
    database = FakeDatabase()
    writer = Writer(database.record_moves, window_s=0.05)
    order: list[str] = []

    async def between() -> None:
        order.append(f"write after {len(database.commits)} commits")

    writer.start()
    before = writer.store_moves(RACE, EPOCH, move(0))
    written = writer.run(between)
    after = writer.store_moves(RACE, EPOCH, move(1))
    assert after is not before
    assert await before and await written and await after
    assert database.commits == [[0], [1]] and order == ["write after 1 commits"]
    await writer.close()


async def test_run_returning_hands_back_what_the_write_returned() -> None:
    writer = Writer(FakeDatabase().record_moves)
    writer.start()

    async def write() -> str:
        return "stored"

    assert await writer.run_returning(write) == "stored"
    await writer.close()
