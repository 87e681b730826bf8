"""A room's outbox on its own (server/rooms/outbox.py): entries leave in the order they were
queued, each once the write it waits for is done, and not at all if it never will be."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from server.rooms.outbox import Outbox


def recording() -> tuple[Outbox, list[str]]:
    sent: list[str] = []

    def hand_over(members: Sequence[Any], frame: str) -> None:
        sent.append(frame)

    return Outbox(hand_over), sent


async def test_entries_sharing_a_write_leave_together_once_it_is_done_in_order() -> None:
    outbox, sent = recording()
    loop = asyncio.get_running_loop()
    commit = loop.create_future()
    first = outbox.add([([], "ack 1")], commit)
    second = outbox.add([([], "ack 2")], commit)
    third = outbox.add([([], "reply")])
    await asyncio.sleep(0)
    assert sent == [] and outbox.waiting == 3, "nothing overtakes a write not yet done"
    commit.set_result(True)
    assert await first and await second and await third
    assert sent == ["ack 1", "ack 2", "reply"]


async def test_a_write_given_up_sends_nothing_of_its_entries_and_releases_the_rest() -> None:
    outbox, sent = recording()
    loop = asyncio.get_running_loop()
    lost, kept = loop.create_future(), loop.create_future()
    never = outbox.add([([], "never")], lost)
    later = outbox.add([([], "later")], kept)
    kept.set_result(True)
    lost.set_result(False)
    assert await never is False and await later is True
    assert sent == ["later"]


async def test_a_frame_may_be_made_as_it_leaves() -> None:
    """A race's result leaves with the rating changes storing it made."""
    outbox, sent = recording()
    stored = asyncio.get_running_loop().create_future()
    rated: list[str] = []
    outbox.add([([], lambda: rated[0])], stored)
    rated.append("result, rated")
    stored.set_result(True)
    await asyncio.sleep(0)
    assert sent == ["result, rated"]
