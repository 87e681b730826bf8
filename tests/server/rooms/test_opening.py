"""``Openings``: a room opened, its race stored under a code nobody else holds, within what
each player may open; a daily deal played once a day.

The openings of a host of its own (``tests/server/rooms/test_host.py``'s ``hosted``), on a real
database, with a clock moved by hand: a player's allowance of rooms comes back as the test
advances it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import pytest_asyncio
from sqlalchemy import select

from server.core.errors import Refused
from server.rooms.opening import CODE_ALPHABET, CODE_LENGTH
from server.rooms.room import Room
from server.storage.models import RaceRow
from server.storage.writer import Writer
from tests.fakeclock import FakeClock
from tests.server.rooms.test_host import Hosting, hosted
from tests.server.test_server import DEAL, Sessions
from wire.protocol import CLIENT_MESSAGE, CreateRoom, ErrorCode, PlayDaily

NOON = datetime(2026, 11, 27, 12, tzinfo=UTC).timestamp()
"""When the tests' clocks start: well inside a day, whose daily deal is played once."""


@pytest_asyncio.fixture
async def hosting(sessions: Sessions, database_url: str, writer: Writer) -> AsyncIterator[Hosting]:
    async with hosted(
        sessions,
        database_url,
        writer,
        FakeClock(NOON),
        rooms_per_player_per_hour=2,
        public_lobbies_per_player=1,
    ) as running:
        yield running


def create_room(**fields: Any) -> CreateRoom:
    message = CLIENT_MESSAGE.validate_python({"type": "create_room", **fields})
    assert isinstance(message, CreateRoom)
    return message


async def stored(sessions: Sessions, room: Room) -> RaceRow:
    async with sessions() as session:
        row = await session.scalar(select(RaceRow).where(RaceRow.code == room.race.terms.code))
    assert row is not None
    return row


async def test_a_room_is_opened_under_a_new_code_its_race_stored_in_its_lobby(
    hosting: Hosting, sessions: Sessions
) -> None:
    ann = await hosting.member("Ann")
    room = await hosting.host.openings.create(
        ann,
        create_room(rule_set="octagon", seats=3, deal={"kind": "number", "number": str(DEAL)}),
    )
    code = room.race.terms.code
    assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
    assert hosting.host.rooms[code] is room and room.opened == hosting.clock.now
    row = await stored(sessions, room)
    assert (row.rule_set, row.seed, row.seats_max, row.host_id) == (
        "octagon",
        DEAL,
        3,
        ann.player_id,
    )
    assert row.started_at is None and row.ended_at is None
    assert ann.room is None, "the host enters the room it asked for (RoomHost)"


async def test_a_code_another_worker_holds_is_never_given(hosting: Hosting) -> None:
    class HeldElsewhere:
        """A directory in which the first codes asked for are another worker's."""

        def __init__(self, taken: int) -> None:
            self.asked: list[str] = []
            self.taken = taken

        async def claim(self, code: str) -> bool:
            self.asked.append(code)
            return len(self.asked) > self.taken

        def release(self, code: str) -> None:
            pass

        def listed(self, room: Room) -> None:
            pass

    directory = HeldElsewhere(taken=2)
    hosting.host.delivery.directory = directory
    room = await hosting.host.openings.create(
        await hosting.member("Ann"), create_room(rule_set="octagon")
    )
    assert len(directory.asked) == 3 and room.race.terms.code == directory.asked[-1]


async def test_a_player_opens_so_many_rooms_an_hour(hosting: Hosting) -> None:
    ann, bob = await hosting.member("Ann"), await hosting.member("Bob")
    openings = hosting.host.openings
    for _ in range(2):
        await openings.create(ann, create_room(rule_set="octagon"))
    with pytest.raises(Refused) as refused:
        await openings.create(ann, create_room(rule_set="octagon"))
    assert refused.value.code == ErrorCode.TOO_MANY_ROOMS
    await openings.create(bob, create_room(rule_set="octagon"))  # Bob has his own allowance
    hosting.clock.advance(1800)  # half an hour: one room of the two back
    await openings.create(ann, create_room(rule_set="octagon"))
    with pytest.raises(Refused):
        await openings.create(ann, create_room(rule_set="octagon"))


async def test_a_player_hosts_so_many_public_lobbies_at_once_and_any_private_room(
    hosting: Hosting,
) -> None:
    ann = await hosting.member("Ann")
    openings = hosting.host.openings
    public = await openings.create(ann, create_room(rule_set="octagon", public=True))
    assert public.race.terms.public
    with pytest.raises(Refused) as refused:
        await openings.create(ann, create_room(rule_set="octagon", public=True))
    assert refused.value.code == ErrorCode.TOO_MANY_LOBBIES
    assert not (await openings.create(ann, create_room(rule_set="octagon"))).race.terms.public


async def test_the_daily_deal_is_one_room_of_one_once_a_day(
    hosting: Hosting, sessions: Sessions
) -> None:
    ann = await hosting.member("Ann")
    daily = PlayDaily(type="daily", rule_set="octagon")
    openings = hosting.host.openings
    room = await openings.daily(ann, daily, hosting.clock.now)
    row = await stored(sessions, room)
    assert (row.deal_kind, row.seats_max, row.daily_day) == (
        "daily",
        1,
        datetime.fromtimestamp(NOON, UTC).date(),
    )
    rooms = dict(hosting.host.rooms)
    with pytest.raises(Refused) as refused:
        await openings.daily(ann, daily, hosting.clock.now)
    assert refused.value.code == ErrorCode.ALREADY_PLAYED
    assert hosting.host.rooms == rooms, "no room is opened for it"
    tomorrow = await openings.daily(
        ann, daily, hosting.clock.advance(timedelta(days=1).total_seconds())
    )
    assert (await stored(sessions, tomorrow)).seed != row.seed
