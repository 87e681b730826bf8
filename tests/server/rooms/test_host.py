"""``RoomHost``: each room request of a member, acted on or refused, and what each member is told.

A host of its own on a real database (``sessions``, ``writer``: SQLite and PostgreSQL), with a
clock moved by hand. Its members are connections held by another worker (``RemoteMember``): the
host treats them as its own (but for ``reconnect_to``, given only by a worker with an address,
which this host has not), and their frames go to a carrier that keeps them, so what each member
was sent is read back in order, with no socket.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from unittest.mock import ANY

import pytest
import pytest_asyncio

from server.core.errors import Refused
from server.rooms.host import RoomHost
from server.rooms.room import ROOM_REQUESTS, RemoteMember
from server.storage import holding
from server.storage.players import create_player
from server.storage.writer import Writer
from tests.fakeclock import FakeClock
from tests.server.test_server import DEAL, Sessions, make_settings
from wire.protocol import CLIENT_MESSAGE, ErrorCode

ILLEGAL_MOVE = "KS heap:1 -> heap:13 bottom"
"""A move that reads as one, and that no racer of ``DEAL`` in hidden-cards may make."""


@dataclass
class KeptFrames:
    """The host's carrier: every frame sent to each member, by connection, as JSON."""

    frames: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))

    def send_frames(self, members: Sequence[RemoteMember], frame: str) -> None:
        for member in members:
            self.frames[member.connection_id].append(json.loads(frame))

    def out_of_room(self, members: Sequence[RemoteMember]) -> None:
        pass

    def moved(self, members: Sequence[RemoteMember]) -> None:
        pass


@dataclass
class Hosting:
    """A host, and its members' requests made and their frames read back."""

    host: RoomHost
    clock: FakeClock
    kept: KeptFrames
    sessions: Sessions

    async def member(self, name: str) -> RemoteMember:
        """A new player's connection, said hello to."""
        player, _ = await create_player(self.sessions, name)
        return RemoteMember("elsewhere", secrets.token_hex(8), player.id, player.name)

    def again(self, member: RemoteMember) -> RemoteMember:
        """Another connection of the same player."""
        return RemoteMember("elsewhere", secrets.token_hex(8), member.player_id, member.name)

    def frames(self, member: RemoteMember) -> list[dict[str, Any]]:
        return self.kept.frames[member.connection_id]

    async def ask(self, member: RemoteMember, **fields: Any) -> list[dict[str, Any]]:
        """Make a request, as the wire would read it; the frames the member got meanwhile."""
        message = CLIENT_MESSAGE.validate_python(fields)
        assert isinstance(message, ROOM_REQUESTS)
        before = len(self.frames(member))
        await self.host.handle(member, message)
        return self.frames(member)[before:]

    async def reply(self, member: RemoteMember, **fields: Any) -> dict[str, Any]:
        """Make a request; the reply to it (among the room events it caused)."""
        request_id = fields.setdefault("id", secrets.token_hex(4))
        (reply,) = [
            frame for frame in await self.ask(member, **fields) if frame.get("id") == request_id
        ]
        return reply

    async def refused(self, member: RemoteMember, **fields: Any) -> ErrorCode:
        """The code of a request's refusal; nothing is sent to the member."""
        before = len(self.frames(member))
        with pytest.raises(Refused) as refusal:
            await self.ask(member, **fields)
        assert self.frames(member)[before:] == []
        return refusal.value.code

    async def open_room(self, *members: RemoteMember, rule_set: str = "hidden-cards") -> str:
        """The first member opens a room of a chosen deal, the others join; its code."""
        opened = await self.ask(
            members[0],
            type="create_room",
            id="open",
            rule_set=rule_set,
            seats=max(2, len(members)),
            deal={"kind": "number", "number": str(DEAL)},
        )
        code: str = opened[0]["code"]
        for member in members[1:]:
            await self.ask(member, type="join", code=code)
        return code

    async def all_ready(self, *members: RemoteMember) -> None:
        """The racers of a room get ready, until each is told the race started."""
        for member in members:
            await self.ask(member, type="ready", ready=True)
        for member in members:  # (the countdown is 0: the room's timer is due at once)
            await self.told(member, "race_started")

    async def told(self, member: RemoteMember, kind: str) -> dict[str, Any]:
        """The first frame of that type the member got; waits (for the room's timer, or a
        write) until it comes."""
        async with asyncio.timeout(5):
            while True:
                for frame in self.frames(member):
                    if frame["type"] == kind:
                        return frame
                await asyncio.sleep(0.01)


@asynccontextmanager
async def hosted(
    sessions: Sessions, database_url: str, writer: Writer, clock: FakeClock, **limits: Any
) -> AsyncIterator[Hosting]:
    """A host of its own, as a process has one, with a countdown of 0 and these settings; its
    timers stopped at the end."""
    settings = make_settings(database_url, countdown_s=0, **limits)
    host = RoomHost(settings, sessions, writer, clock)
    kept = KeptFrames()
    host.delivery.carrier = kept
    try:
        yield Hosting(host, clock, kept, sessions)
    finally:
        host.delivery.stop_timers()
        host.solver.close()


@pytest_asyncio.fixture
async def hosting(sessions: Sessions, database_url: str, writer: Writer) -> AsyncIterator[Hosting]:
    async with hosted(sessions, database_url, writer, FakeClock()) as running:
        yield running


def seat_names(frame: dict[str, Any]) -> list[str]:
    return [seat["name"] for seat in frame["seats"]]


async def test_a_room_opened_and_joined_is_the_reply_and_a_room_event_to_those_in_it(
    hosting: Hosting,
) -> None:
    ann, bob = await hosting.member("Ann"), await hosting.member("Bob")
    (opened,) = await hosting.ask(ann, type="create_room", id="c1", rule_set="octagon", seats=2)
    assert opened["type"] == "room" and opened["id"] == "c1" and seat_names(opened) == ["Ann"]
    event, joined = await hosting.ask(bob, type="join", id="j1", code=opened["code"].lower())
    assert joined["id"] == "j1" and seat_names(joined) == ["Ann", "Bob"]
    assert event["type"] == "room" and event["id"] is None and seat_names(event) == ["Ann", "Bob"]
    assert event["seq"] == joined["seq"], "the reply shows the room as of that event"
    assert hosting.frames(ann)[1:] == [event], "Ann, already in, is told of Bob's coming"


async def test_a_room_this_host_does_not_hold_is_unknown(hosting: Hosting) -> None:
    """Whether no room has that code or another worker holds it, this host knows no room by
    it (the bus, ``server.cluster.redis_bus``, takes a request to the room's worker)."""
    ann = await hosting.member("Ann")
    for kind in ("join", "spectate"):
        assert await hosting.refused(ann, type=kind, code="NOPE") == ErrorCode.UNKNOWN_ROOM
    assert (
        await hosting.refused(ann, type="resume", code="NOPE", last_seq=0) == ErrorCode.UNKNOWN_ROOM
    )


@pytest.mark.parametrize(
    "request_fields",
    [
        {"type": "leave"},
        {"type": "ready", "ready": True},
        {"type": "start"},
        {"type": "move", "move": "turn"},
        {"type": "resign"},
        {"type": "rematch"},
        {"type": "hint"},
    ],
)
async def test_a_request_about_ones_room_is_refused_in_no_room(
    hosting: Hosting, request_fields: dict[str, Any]
) -> None:
    ann = await hosting.member("Ann")
    assert await hosting.refused(ann, **request_fields) == ErrorCode.NOT_IN_ROOM


async def test_another_room_is_entered_only_once_the_first_is_left(hosting: Hosting) -> None:
    ann, bob, cy = [await hosting.member(name) for name in ("Ann", "Bob", "Cy")]
    first = await hosting.open_room(ann, bob)
    other = await hosting.open_room(cy, rule_set="octagon")
    for kind in ("join", "spectate"):
        assert await hosting.refused(bob, type=kind, code=other) == ErrorCode.IN_ANOTHER_ROOM
    assert await hosting.reply(bob, type="leave") == {"type": "ok", "id": ANY}
    left = hosting.frames(ann)[-1]
    assert left["type"] == "room" and seat_names(left) == ["Ann"], "Bob's seat is free"
    joined = await hosting.reply(bob, type="join", code=other)
    assert joined["code"] == other and seat_names(joined) == ["Cy", "Bob"]
    assert await hosting.refused(cy, type="join", code=first) == ErrorCode.IN_ANOTHER_ROOM


async def test_a_spectator_sees_the_room_but_takes_no_seat(hosting: Hosting) -> None:
    ann, wes = await hosting.member("Ann"), await hosting.member("Wes")
    code = await hosting.open_room(ann, rule_set="octagon")
    (watching,) = await hosting.ask(wes, type="spectate", id="w1", code=code)
    assert watching["code"] == code and seat_names(watching) == ["Ann"]
    assert await hosting.refused(wes, type="ready", ready=True) == ErrorCode.NOT_IN_ROOM


async def test_only_the_rooms_host_starts_the_race_early(hosting: Hosting) -> None:
    ann, bob = await hosting.member("Ann"), await hosting.member("Bob")
    await hosting.open_room(ann, bob)
    assert await hosting.refused(bob, type="start") == ErrorCode.NOT_HOST
    assert await hosting.reply(ann, type="start") == {"type": "ok", "id": ANY}
    for member in (ann, bob):
        started = await hosting.told(member, "race_started")
        assert started["deal_number"] == str(DEAL)
        assert (await hosting.told(member, "view"))["view"]["legal_moves"]


async def test_a_refused_move_costs_nothing(hosting: Hosting) -> None:
    ann, bob = await hosting.member("Ann"), await hosting.member("Bob")
    await hosting.open_room(ann, bob)
    assert await hosting.refused(ann, type="move", move="turn") == ErrorCode.NOT_RACING
    await hosting.all_ready(ann, bob)
    legal = (await hosting.told(ann, "view"))["view"]["legal_moves"]
    assert await hosting.refused(ann, type="move", move=ILLEGAL_MOVE) == ErrorCode.ILLEGAL_MOVE
    assert (
        await hosting.refused(ann, type="move", move="9Z heap:1 -> heap:2")
        == ErrorCode.INVALID_MOVE
    )
    accepted = await hosting.reply(ann, type="move", move=legal[0])
    assert accepted["type"] == "move_ok"
    assert accepted["moves"] == 1, "the refused moves were not counted"
    progress = await hosting.told(bob, "progress")
    assert progress["player_id"] == ann.player_id and progress["moves"] == 1


async def test_a_racer_who_resigns_moves_no_more(hosting: Hosting) -> None:
    ann, bob = await hosting.member("Ann"), await hosting.member("Bob")
    await hosting.open_room(ann, bob)
    await hosting.all_ready(ann, bob)
    legal = (await hosting.told(ann, "view"))["view"]["legal_moves"]
    resigned = await hosting.reply(ann, type="resign")
    assert resigned["type"] == "move_ok" and resigned["status"] == "resigned"
    assert await hosting.refused(ann, type="move", move=legal[0]) == ErrorCode.FINISHED
    accepted = await hosting.reply(bob, type="move", move=legal[0])
    assert accepted["moves"] == 1, "Bob races on"


async def test_a_racer_whose_connection_dropped_resumes_in_the_room(hosting: Hosting) -> None:
    ann, bob = await hosting.member("Ann"), await hosting.member("Bob")
    code = await hosting.open_room(ann, bob)
    await hosting.all_ready(ann, bob)
    hosting.host.disconnect(bob)
    dropped = hosting.frames(ann)[-1]
    assert [seat["connected"] for seat in dropped["seats"]] == [True, False]
    back = hosting.again(bob)
    resumed, view = await hosting.ask(back, type="resume", id="b1", code=code, last_seq=0)
    assert resumed["type"] == "resumed" and resumed["id"] == "b1" and resumed["full"]
    assert view["type"] == "view" and view["view"]["legal_moves"]
    shown = hosting.frames(ann)[-1]
    assert [seat["connected"] for seat in shown["seats"]] == [True, True]
    cy = await hosting.member("Cy")
    assert (
        await hosting.refused(cy, type="resume", code=code, last_seq=0) == ErrorCode.NOT_IN_ROOM
    ), "no seat of Cy's"


async def test_a_rematch_is_for_the_racers_of_a_race_over(hosting: Hosting) -> None:
    ann, bob, wes = [await hosting.member(name) for name in ("Ann", "Bob", "Wes")]
    code = await hosting.open_room(ann, bob)
    await hosting.ask(wes, type="spectate", code=code)
    await hosting.all_ready(ann, bob)
    assert await hosting.refused(ann, type="rematch") == ErrorCode.NOT_OVER
    for member in (ann, bob):
        await hosting.reply(member, type="resign")
    await hosting.told(ann, "race_finished")
    assert await hosting.refused(wes, type="rematch") == ErrorCode.NOT_IN_ROOM
    before = len(hosting.frames(bob))
    assert await hosting.reply(ann, type="rematch") == {"type": "ok", "id": ANY}
    (offered,) = hosting.frames(bob)[before:]
    assert (offered["type"], offered["accepted"], offered["waiting"]) == (
        "rematch_offer",
        [ann.player_id],
        [bob.player_id],
    ), "an offer Bob is asked to accept, not yet a new race"
    before = len(hosting.frames(bob))
    assert await hosting.reply(bob, type="rematch") == {"type": "ok", "id": ANY}
    agreed, reopened, reply = hosting.frames(bob)[before:]
    assert (agreed["type"], agreed["waiting"], reply["type"]) == ("rematch_offer", [], "ok")
    assert (reopened["type"], reopened["code"], reopened["phase"]) == ("room", code, "lobby")
    assert [(seat["name"], seat["ready"]) for seat in reopened["seats"]] == [
        ("Ann", False),
        ("Bob", False),
    ]
    assert reopened["spectators"] == 1, "the room keeps its members"
    assert hosting.frames(wes)[-1] == reopened


async def test_a_race_adopted_from_the_database_goes_on_from_its_last_acknowledged_move(
    hosting: Hosting, sessions: Sessions, database_url: str, writer: Writer
) -> None:
    """As after a restart, or on the worker that takes over a dead one's rooms."""
    ann, bob = await hosting.member("Ann"), await hosting.member("Bob")
    code = await hosting.open_room(ann, bob)
    await hosting.all_ready(ann, bob)
    legal = (await hosting.told(ann, "view"))["view"]["legal_moves"]
    moved = await hosting.reply(ann, type="move", move=legal[0])  # (acknowledged once stored)
    async with hosted(sessions, database_url, writer, hosting.clock) as restarted:
        (row,) = await holding.take(
            sessions, None, restarted.host.openings.holder, datetime.now(UTC), force=True
        )
        restarted.host.adopt(row)
        assert restarted.host.room(code.lower()) is restarted.host.rooms[code]
        resumed, view = await restarted.ask(
            hosting.again(ann), type="resume", code=code, last_seq=0
        )
        assert resumed["type"] == "resumed" and resumed["full"]
        assert view["view"]["moves"] == 1 and view["view"]["legal_moves"] == moved["legal_moves"]
