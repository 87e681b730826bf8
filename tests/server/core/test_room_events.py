"""A room's numbered events (``server.core.room_events``): the ``seq`` counter, the window of
events kept for reconnecting players, the room snapshot that supersedes the earlier one, a kept
event's text replaced, and ``since`` saying when a client must get the room afresh."""

from __future__ import annotations

from server.core.room_events import RoomEvents
from server.core.room_view import room_state
from server.core.said import as_frame
from tests.server.core.test_race import new_race
from wire.protocol import Countdown, Message, RoomState


def countdown(seq: int, seconds: float = 3.0) -> Countdown:
    return Countdown(seq=seq, starts_at_ms=1_000_000, seconds=seconds)


def room(seq: int) -> RoomState:
    return room_state(new_race("octagon", seats_max=2)).model_copy(update={"seq": seq})


def record(events: RoomEvents, *messages: Message) -> None:
    for message in messages:
        events.record(message, as_frame(message))


def seqs(found: list[Message] | None) -> list[int] | None:
    if found is None:
        return None
    numbers = []
    for message in found:
        assert isinstance(message, Countdown | RoomState)
        numbers.append(message.seq)
    return numbers


def test_events_are_numbered_from_one_and_said_to_the_whole_room() -> None:
    events = RoomEvents()
    assert (events.seq, events.next_seq) == (0, 1)
    first = countdown(events.next_seq)
    out = events.say(first, but="p1")
    assert (out.to, out.message, out.but) == (None, first, "p1")
    assert out.frame == as_frame(first) and out.text() == as_frame(first)
    assert (events.seq, events.next_seq) == (1, 2)
    assert events.since(0) == [first]


def test_since_gives_the_events_after_a_seq_in_order_and_none_after_the_latest() -> None:
    events = RoomEvents()
    record(events, countdown(1), countdown(2), countdown(3))
    assert seqs(events.since(1)) == [2, 3]
    assert events.since(3) == []


def test_a_seq_above_the_latest_is_not_this_rooms_and_gets_none() -> None:
    events = RoomEvents()
    record(events, countdown(1))
    assert events.since(2) is None


def test_only_the_latest_kept_events_are_given_and_a_client_who_missed_more_gets_none() -> None:
    events = RoomEvents(kept=3)
    record(events, *(countdown(seq) for seq in range(1, 6)))
    assert seqs(events.since(2)) == [3, 4, 5]
    assert events.since(1) is None
    assert events.since(0) is None


def test_a_room_snapshot_replaces_the_earlier_one() -> None:
    events = RoomEvents()
    record(events, room(1), countdown(2), room(3))
    found = events.since(0)
    assert found is not None and isinstance(found[-1], RoomState)
    assert seqs(found) == [2, 3]


def test_a_superseded_snapshot_is_not_counted_as_dropped_and_frees_its_place() -> None:
    events = RoomEvents(kept=3)
    record(events, room(1), countdown(2), countdown(3), room(4))
    assert seqs(events.since(0)) == [2, 3, 4], "nothing was dropped: the snapshot says it all"
    record(events, countdown(5))
    assert events.since(1) is None
    assert seqs(events.since(2)) == [3, 4, 5]


def test_a_snapshot_dropped_from_the_window_is_not_replaced_again() -> None:
    events = RoomEvents(kept=2)
    record(events, room(1), countdown(2), countdown(3), room(4))
    assert seqs(events.since(2)) == [3, 4]


def test_replace_changes_the_text_of_a_kept_event() -> None:
    events = RoomEvents()
    record(events, countdown(1), countdown(2))
    events.replace(1, as_frame(countdown(1, seconds=0.0)))
    assert events.since(0) == [countdown(1, seconds=0.0), countdown(2)]


def test_replace_of_an_event_no_longer_kept_changes_nothing() -> None:
    events = RoomEvents(kept=1)
    record(events, countdown(1), countdown(2))
    events.replace(1, as_frame(countdown(1, seconds=0.0)))
    assert events.since(1) == [countdown(2)]


def test_a_log_numbered_on_from_first_seq_resyncs_a_client_with_an_earlier_number() -> None:
    events = RoomEvents(first_seq=5000)
    assert (events.seq, events.next_seq) == (5000, 5001)
    assert events.since(5000) == []
    assert events.since(4999) is None
    record(events, countdown(5001))
    assert seqs(events.since(5000)) == [5001]
    assert events.since(12) is None


def test_a_snapshot_given_another_text_is_still_the_one_the_next_snapshot_replaces() -> None:
    events = RoomEvents()
    record(events, room(1), countdown(2))
    replaced = room(1).model_copy(update={"spectators": 3})
    events.replace(1, as_frame(replaced))
    record(events, room(3))
    assert seqs(events.since(0)) == [2, 3]
