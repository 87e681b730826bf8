"""A room's events as numbered and kept for reconnecting players: the ``seq`` counter.

Room events get consecutive ``seq`` numbers, counting from 1 in each room, and the latest are
kept, as the JSON text sent (a long race has thousands: only the last are kept, and as text, a
tenth of the memory of the message objects). A ``room`` snapshot makes the earlier ones moot, so
only the latest is kept. The log belongs to the room, not to one race: a rematch's race numbers
its events on from the finished race's (``server.core.rematch``), so a client that missed a few
across the rematch gets them, in order, like any others.
"""

from __future__ import annotations

from collections import deque

from server.core.said import Outgoing, as_frame
from wire.protocol import SERVER_MESSAGE, Message, RoomState

EVENTS_KEPT = 200
"""Room events kept for reconnecting players; one who missed more gets the room afresh."""


class RoomEvents:
    def __init__(self, kept: int = EVENTS_KEPT, first_seq: int = 0) -> None:
        """``first_seq`` above 0: numbering goes on from there, and a client with an earlier
        number gets a full resync (a race rebuilt after a restart: ``server.core.resume``)."""
        self.kept = kept
        self.seq = first_seq
        """The ``seq`` of the latest room event."""
        self._events: deque[tuple[int, str]] = deque()
        self._room_event: tuple[int, str] | None = None
        self._dropped_through = first_seq
        """The ``seq`` of the newest event no longer kept (not superseded by a snapshot)."""

    @property
    def next_seq(self) -> int:
        """The ``seq`` the next room event is to be made with."""
        return self.seq + 1

    def say(self, message: Message, but: str | None = None) -> Outgoing:
        """Keep a room event (made with ``seq=next_seq``), addressed to everyone in the room
        (but the player ``but``, where their connection asked for it: ``Outgoing.but``)."""
        frame = as_frame(message)
        self.record(message, frame)
        return Outgoing(None, message, frame, but)

    def record(self, message: Message, frame: str) -> None:
        """Keep a room event (made with ``seq`` one above the latest) as sent."""
        self.seq += 1
        event = (self.seq, frame)
        if isinstance(message, RoomState):
            if self._room_event is not None:
                self._events.remove(self._room_event)
            self._room_event = event
        if len(self._events) >= self.kept:
            dropped = self._events.popleft()
            self._dropped_through = dropped[0]
            if dropped is self._room_event:
                self._room_event = None
        self._events.append(event)

    def replace(self, seq: int, frame: str) -> None:
        """Keep another text for the event ``seq``, if it is still kept (a race's result, once
        storing it has rated the racers: ``Race.rate``)."""
        for index, (number, _) in enumerate(self._events):
            if number == seq:
                self._events[index] = (seq, frame)
                if self._room_event is not None and self._room_event[0] == seq:
                    self._room_event = self._events[index]

    def since(self, seq: int) -> list[Message] | None:
        """The room events after ``seq``, or ``None`` when they are no longer all kept (or
        ``seq`` is not one of this room's)."""
        if seq < self._dropped_through or seq > self.seq:
            return None
        return [
            SERVER_MESSAGE.validate_json(frame) for number, frame in self._events if number > seq
        ]
