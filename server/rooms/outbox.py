"""A room's outbox: everything said in a room leaves in the order it was said.

The race numbers its room events as it makes them, and a request's reply comes after the room
events it caused. Some of what the race says may not leave at once: a move's progress event and
its acknowledgement wait until the move is committed (an acknowledged move is never lost), a
race's result until it is stored (an announced result is in the database). So that nothing
overtakes them, each room has one queue: an entry leaves when the write it depends on, if any,
is done, and only after every entry queued before it has left.

An entry is addressed when it is queued: to the connections in the room at that moment (the
race's ``Outgoing.to`` says which), so a member gets exactly the room events said while they were
in the room, in ``seq`` order, however long a commit takes. One that comes in later gets the
room as it is then, in its reply.

Frames are handed over by the function the room gives its outbox (``RoomHost._hand_over``):
written at once to this process's connections, and carried by the bus to other workers'.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

Addressed = tuple[Sequence[Any], str | Callable[[], str]]
"""A frame and the room members it goes to. The frame may be made as it leaves: a race's
result carries the rating changes that storing it made."""
HandOver = Callable[[Sequence[Any], str], None]


@dataclass(slots=True)
class _Entry:
    frames: list[Addressed]
    after: asyncio.Future[Any] | None
    """The write this entry waits for: done with a true value once written; False if it never
    will be (the server stopped first), and then the entry is not sent."""
    sent: asyncio.Future[bool]


class Outbox:
    def __init__(self, hand_over: HandOver) -> None:
        self._queue: deque[_Entry] = deque()
        self._hand_over = hand_over
        self._awaited: asyncio.Future[Any] | None = None
        """The write the last entry queued waits for, already told to release the queue."""

    @property
    def waiting(self) -> int:
        """Entries not sent yet."""
        return len(self._queue)

    def add(
        self, frames: Iterable[Addressed], after: asyncio.Future[Any] | None = None
    ) -> asyncio.Future[bool]:
        """Queue frames, to leave once ``after`` is written and everything queued before has
        left. The future says when: True once they are sent, False if they never will be."""
        entry = _Entry(list(frames), after, asyncio.get_running_loop().create_future())
        self._queue.append(entry)
        if after is not None and not after.done() and after is not self._awaited:
            # (a race's moves up to a commit share one write: the room waits for it once)
            after.add_done_callback(self._release)
            self._awaited = after
        self._release()
        return entry.sent

    def _release(self, _: object = None) -> None:
        """Send every entry at the head of the queue whose write is done."""
        while self._queue:
            entry = self._queue[0]
            if entry.after is not None and not entry.after.done():
                return
            self._queue.popleft()
            written = entry.after is None or (not entry.after.cancelled() and entry.after.result())
            if written:
                for members, frame in entry.frames:
                    self._hand_over(members, frame if isinstance(frame, str) else frame())
            if not entry.sent.done():  # (cancelled if whoever waited for it was)
                entry.sent.set_result(written)
