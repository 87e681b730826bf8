"""A quick race's room (``Openings.quick``): stored with who may sit in it, so that a restart
rebuilds its lobby with the same players invited, and its countdown is the quick one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest_asyncio
from sqlalchemy import func, select

from engine.deal import DEAL_ALGORITHM
from engine.game import RULES_VERSION
from server.storage import holding
from server.storage.models import WinnableDealRow
from server.storage.writer import Writer
from tests.fakeclock import FakeClock
from tests.server.rooms.test_host import Hosting, hosted
from tests.server.rooms.test_opening import stored
from tests.server.test_server import Sessions
from wire.protocol import ErrorCode

COUNTDOWN_S = 5.0
POOLED = "all-fours"


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


async def test_a_quick_room_draws_from_the_pool_within_each_players_winnable_rooms(
    sessions: Sessions, database_url: str, writer: Writer
) -> None:
    """A quick room's proved deal counts as a winnable room of each person in it
    (``winnable_rooms_per_player_per_hour``, 1 here): the same identities matched again get an
    unproved secret deal, and the pool keeps its deals for everyone else; a practice bot takes
    from nobody's allowance but its seeker's."""
    async with sessions.begin() as session:
        session.add_all(
            WinnableDealRow(
                rule_set=POOLED,
                seed=seed,
                algorithm=DEAL_ALGORITHM,
                rules=RULES_VERSION,
                moves=52,
                solved_at=datetime.now(UTC),
            )
            for seed in (11, 12, 13)
        )
    async with hosted(
        sessions,
        database_url,
        writer,
        FakeClock(),
        winnable_rooms_per_player_per_hour=1,
        winnable_pool_rule_sets=(POOLED,),
        winnable_pool_wait_s=0,
    ) as hosting:
        ann, bob, cy = [await hosting.member(name) for name in ("Ann", "Bob", "Cy")]
        pair = [(ann.player_id or "", "Ann"), (bob.player_id or "", "Bob")]
        first = await hosting.host.openings.quick(POOLED, True, pair)
        again = await hosting.host.openings.quick(POOLED, True, pair)
        assert (first.race.terms.winnable, first.race.terms.seed in (11, 12, 13)) == (True, True)
        assert (again.race.terms.winnable, again.race.terms.seed in (11, 12, 13)) == (False, False)
        with_bot = [(cy.player_id or "", "Cy"), ("bot-id", "Practice bot")]
        for attempt in range(2):  # the bot's allowance is not taken: Cy's first room is pooled
            practice = await hosting.host.openings.quick(
                POOLED, False, with_bot, people=[cy.player_id or ""]
            )
            assert practice.race.terms.winnable is (attempt == 0)
    async with sessions.begin() as session:
        unused = await session.scalar(
            select(func.count())
            .select_from(WinnableDealRow)
            .where(WinnableDealRow.used_at.is_(None))
        )
    assert unused == 1
