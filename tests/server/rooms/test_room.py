"""``server.rooms.room``: who in a room gets what the race said, a move read from a request,
a write a client waits for, and what a room counts against. No database, no socket: rooms of
races made as the race's own tests make them (``tests/server/core/test_race.py``), whose
frames an outbox hands to a list."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest

from engine.moves import Move
from server.core.errors import Refused
from server.core.said import MoveMade, Outgoing
from server.rooms.outbox import Outbox
from server.rooms.room import (
    Member,
    RemoteMember,
    Room,
    opened_by,
    parse_move,
    public_lobbies,
    write_for_client,
)
from server.storage.writer import Writer
from tests.server.core.test_race import T0, new_race
from wire.protocol import CLIENT_MESSAGE, ErrorCode, MakeMove, Ok


class HandedOver:
    """An outbox's hand-over: each frame, as JSON, with whom it was for."""

    def __init__(self) -> None:
        self.frames: list[tuple[list[str | None], dict[str, Any]]] = []

    def __call__(self, members: Iterable[Member], frame: str) -> None:
        self.frames.append(([member.player_id for member in members], json.loads(frame)))


def member(player_id: str, own_progress: bool = True) -> RemoteMember:
    return RemoteMember("elsewhere", f"conn-{player_id}", player_id, player_id, own_progress)


def room_of(*members: RemoteMember, **race: Any) -> tuple[Room, HandedOver]:
    handed = HandedOver()
    room = Room(new_race(**race), Outbox(handed), members=set(members), opened=T0)
    return room, handed


def test_what_the_race_says_goes_to_those_it_is_meant_for() -> None:
    ann, ann_quiet, bob = member("p1"), member("p1", own_progress=False), member("p2")
    room, _ = room_of(ann, ann_quiet, bob)
    said = Ok(id="x")
    to_all, _ = room.address(Outgoing(None, said))
    to_ann, _ = room.address(Outgoing("p1", said))
    but_ann, text = room.address(Outgoing(None, said, but="p1"))
    assert set(to_all) == {ann, ann_quiet, bob}
    assert set(to_ann) == {ann, ann_quiet}
    assert set(but_ann) == {ann, bob}, "Ann's quiet connection asked not to get it"
    assert json.loads(text) == {"type": "ok", "id": "x"}
    assert room.address(Outgoing(None, said, frame='{"made": "already"}'))[1] == (
        '{"made": "already"}'
    )


async def test_a_reply_goes_to_its_member_alone_after_what_was_said_before_it() -> None:
    ann, bob = member("p1"), member("p2")
    room, handed = room_of(ann, bob)
    room.outbox.add([([ann, bob], '{"type": "said"}')])
    sent = room.reply(bob, Ok(id="a"), Ok(id="b"))
    assert sent.done()
    assert handed.frames == [
        (["p1", "p2"], {"type": "said"}),
        (["p2"], {"type": "ok", "id": "a"}),
        (["p2"], {"type": "ok", "id": "b"}),
    ]


@pytest.mark.parametrize(
    ("move", "expected"),
    [
        ("turn", Move.act("turn")),
        ({"action": "resign"}, Move.act("resign")),
        ("8H heap:3 -> foundation:2", Move.parse("8H heap:3 -> foundation:2")),
        (
            {"card": "8H", "from": "heap:3", "to": "foundation:2"},
            Move.parse("8H heap:3 -> foundation:2"),
        ),
    ],
)
def test_a_move_is_read_from_its_text_or_its_object(move: object, expected: Move) -> None:
    message = CLIENT_MESSAGE.validate_python({"type": "move", "move": move})
    assert isinstance(message, MakeMove)
    assert parse_move(message) == expected


def test_a_move_that_does_not_read_as_one_is_refused_as_invalid() -> None:
    message = CLIENT_MESSAGE.validate_python({"type": "move", "move": "9Z heap:1 -> heap:2"})
    assert isinstance(message, MakeMove)
    with pytest.raises(Refused) as refused:
        parse_move(message)
    assert refused.value.code == ErrorCode.INVALID_MOVE and refused.value.message


async def no_moves(moves: dict[str, list[MoveMade]], epochs: dict[str, int]) -> set[str]:
    return set()


async def test_a_write_the_database_does_not_take_in_time_is_refused_unavailable() -> None:
    idle = Writer(no_moves)  # (never started: it takes no write)

    async def write() -> str:
        raise AssertionError("never begun")

    with pytest.raises(Refused) as refused:
        await write_for_client(idle, write, 0)
    assert refused.value.code == ErrorCode.UNAVAILABLE


async def test_a_write_taken_in_time_returns_what_it_returns() -> None:
    writer = Writer(no_moves)
    writer.start()

    async def write() -> str:
        return "written"

    try:
        assert await write_for_client(writer, write, 5) == "written"
    finally:
        await writer.close(5)
        await writer.stopped()


def test_a_room_counts_against_the_address_it_was_opened_from_or_else_itself() -> None:
    room, _ = room_of(code="ABCD2345")
    assert opened_by(room) == "room:ABCD2345", "restored from the database: no address"
    room.host_address = "192.0.2.7"
    assert opened_by(room) == "192.0.2.7"


def test_public_lobbies_are_counted_by_host_and_by_address() -> None:
    rooms = []
    for host, address, public in [
        ("p1", "192.0.2.7", True),
        ("p1", "192.0.2.8", True),
        ("p2", "192.0.2.7", True),
        ("p1", "192.0.2.7", False),
    ]:
        room, _ = room_of(host_id=host, public=public)
        room.host_address = address
        rooms.append(room)
    assert public_lobbies(rooms, "p1", "192.0.2.7") == (2, 2)
    assert public_lobbies(rooms, "p2", "192.0.2.8") == (1, 1)
    assert public_lobbies(rooms, "p3", None) == (0, 0)
