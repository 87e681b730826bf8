"""A quick race's room (``Openings.quick``): stored with who may sit in it, so that a restart
rebuilds its lobby with the same players invited, and its countdown is the quick one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest_asyncio

from server.storage import holding
from server.storage.writer import Writer
from tests.fakeclock import FakeClock
from tests.server.rooms.test_host import Hosting, hosted
from tests.server.rooms.test_opening import stored
from tests.server.test_server import Sessions
from wire.protocol import ErrorCode

COUNTDOWN_S = 5.0


@pytest_asyncio.fixture
async def hosting(sessions: Sessions, database_url: str, writer: Writer) -> AsyncIterator[Hosting]:
    async with hosted(
        sessions, database_url, writer, FakeClock(), quick_countdown_s=COUNTDOWN_S
    ) as running:
        yield running


async def test_a_quick_room_is_stored_with_its_players_and_seats_only_them(
    hosting: Hosting, sessions: Sessions
) -> None:
    ann, bob, zed = [await hosting.member(name) for name in ("Ann", "Bob", "Zed")]
    room = await hosting.host.openings.quick(
        "octagon", True, [(ann.player_id or "", "Ann"), (bob.player_id or "", "Bob")]
    )
    terms = room.race.terms
    assert (terms.quick, terms.deal_kind, terms.seats_max, terms.countdown_s, terms.public) == (
        "rated",
        "secret",
        2,
        COUNTDOWN_S,
        False,
    )
    row = await stored(sessions, room)
    assert row.quick == "rated"
    assert set((row.invited or "").split()) == {ann.player_id, bob.player_id}
    assert row.host_id == ann.player_id
    assert await hosting.refused(zed, type="join", code=terms.code) is ErrorCode.NOT_INVITED


async def test_a_restart_keeps_a_quick_lobby_for_the_players_matched_into_it(
    hosting: Hosting, sessions: Sessions, database_url: str, writer: Writer
) -> None:
    ann, bob, zed = [await hosting.member(name) for name in ("Ann", "Bob", "Zed")]
    room = await hosting.host.openings.quick(
        "octagon", False, [(ann.player_id or "", "Ann"), (bob.player_id or "", "Bob")]
    )
    code = room.race.terms.code
    await hosting.ask(ann, type="join", code=code)
    async with hosted(
        sessions, database_url, writer, hosting.clock, quick_countdown_s=COUNTDOWN_S
    ) as restarted:
        (row,) = await holding.take(
            sessions, None, restarted.host.openings.holder, datetime.now(UTC), force=True
        )
        race = restarted.host.adopt(row).race
        assert race.invited == {ann.player_id, bob.player_id}
        assert race.terms.quick == "unrated" and race.terms.countdown_s == COUNTDOWN_S
        assert race.racers == {}, "nobody is seated until they join again"
        assert await restarted.refused(zed, type="join", code=code) is ErrorCode.NOT_INVITED
        await restarted.ask(restarted.again(ann), type="join", code=code)
        frames = await restarted.ask(restarted.again(bob), type="join", code=code)
        assert "countdown" in [frame["type"] for frame in frames], "both are in: it begins"
