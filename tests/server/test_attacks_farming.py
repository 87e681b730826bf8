"""Farming what one person can gain (issue 23, items 1, 2 and 4), each attack beside an honest
racer on a real server, as in tests/server/test_attacks.py: ratings from throwaway identities,
races by rematch past the rooms quota, and the winnable pool drained by rooms left at once.
Each test checks what the attack achieved is bounded, and that the racer was not stalled (the
ratio is printed and attached to the report; bench/abuse_bench.py measures it properly).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest
from sqlalchemy import func, select

from server.storage.models import EntryRow, PlayerRow, RaceRow, RatingRow, WinnableDealRow
from tests.server import test_attacks
from tests.server.attacks import FARM_RULE_SET, HOSTILE_NAMES
from tests.server.rooms.test_pool import pool_ready, winnable_room
from tests.server.test_abuse import server_with
from tests.server.test_attacks import Check, beside_an_honest_racer, refused
from tests.server.test_server import Sessions

attacker = test_attacks.attacker
check = test_attacks.check

MANY_ADDRESSES = {"trusted_proxies": frozenset({"127.0.0.1"})}
"""The server takes 127.0.0.1 for a reverse proxy: each attacking identity's
``X-Forwarded-For`` is its address, as for a player with an address per identity."""


async def player_id(sessions: Sessions, name: str) -> str:
    async with sessions.begin() as session:
        return (await session.scalars(select(PlayerRow.id).where(PlayerRow.name == name))).one()


async def rated_entries(sessions: Sessions, player: str) -> list[EntryRow]:
    """The player's entries they may be rated in, in the order their races started."""
    async with sessions.begin() as session:
        return list(
            (
                await session.scalars(
                    select(EntryRow)
                    .where(EntryRow.player_id == player, EntryRow.rated_as.is_not(None))
                    .order_by(EntryRow.rated_at)
                )
            ).all()
        )


@pytest.mark.parametrize(
    ("limits", "why"),
    [
        ({}, "every identity is from one address"),
        (MANY_ADDRESSES, "every identity is new: provisional racers rate nobody"),
    ],
)
async def test_a_rating_farm_of_new_identities_rates_nothing(
    check: Check, sessions: Sessions, limits: dict[str, Any], why: str
) -> None:
    """The farm of the probe: a main identity in three rated rooms at once, a throwaway in
    each, both moving once and resigning, rematch after rematch. None of it is rated."""
    measured = await check("rating-farm", limits, identities=len(HOSTILE_NAMES))
    assert measured.counts["race"] >= 3, measured.counts  # the farm ran
    assert "rated" not in measured.counts, why
    async with sessions.begin() as session:
        assert (await session.scalar(select(func.count()).select_from(RatingRow))) == 0
    assert measured.extra_attacked == 0


async def test_a_rating_farm_from_many_addresses_is_one_rated_race_at_a_time_and_capped(
    sessions: Sessions,
    database_url: str,
    attacker: ProcessPoolExecutor,
    record_property: Callable[[str, object], None],
) -> None:
    """The same farm from identities old enough and an address each: the main identity is
    rated in one race at a time (of three rooms racing at once) and at most the hourly cap of
    them (2 here); the rated board, which shows players with 10 rated races, does not show
    it."""
    async with server_with(
        database_url, **MANY_ADDRESSES, rating_provisional_s=0, rated_races_per_player_per_hour=2
    ) as server:
        measured = await beside_an_honest_racer(
            server,
            sessions,
            attacker,
            "rating-farm",
            record_property,
            identities=len(HOSTILE_NAMES),
        )
        status, board = await server.http_get(f"/api/ratings/{FARM_RULE_SET}")
    assert status == 200 and board["min_races"] == 10 and board["lines"] == []
    counts = measured.counts
    assert 1 <= counts["rated"] <= 2 < counts["race"], counts
    main = await player_id(sessions, HOSTILE_NAMES[0])
    rated = await rated_entries(sessions, main)
    assert len(rated) <= 2
    for earlier, later in zip(rated, rated[1:], strict=False):  # never two at once
        assert earlier.ended_at is not None and later.rated_at is not None
        assert earlier.ended_at <= later.rated_at
    async with sessions.begin() as session:
        row = await session.get_one(RatingRow, (FARM_RULE_SET, main))
    assert row.races == counts["rated"]
    assert measured.extra_alone == measured.extra_attacked == 0


async def test_rematch_churn_is_refused_past_the_rooms_quota(
    check: Check, sessions: Sessions
) -> None:
    """Start, resign, rematch, again: each rematch is a room of the quota (3 an hour here), so
    the identity stores 3 races and is refused ``too_many_rooms`` after."""
    measured = await check(
        "rematch-churn", {"rooms_per_player_per_hour": 3}, identities=len(HOSTILE_NAMES)
    )
    refused(measured.counts, "error:too_many_rooms")
    churner = await player_id(sessions, HOSTILE_NAMES[-1])
    async with sessions.begin() as session:
        stored = await session.scalar(
            select(func.count()).select_from(RaceRow).where(RaceRow.host_id == churner)
        )
    assert stored == 3 and measured.counts["race"] <= 3, measured.counts
    assert measured.extra_attacked == 0


POOL_TARGET = 3


async def test_the_winnable_pool_is_not_drained_by_rooms_left_at_once(
    sessions: Sessions,
    database_url: str,
    attacker: ProcessPoolExecutor,
    record_property: Callable[[str, object], None],
) -> None:
    """One identity opens winnable rooms and leaves each at once: it gets its allowance of
    proved deals (2 here, the pool holds 3), then ``too_many_winnable``; an honest winnable
    room still gets a proved deal; and once the left lobbies are closed, every deal they took
    is back in the pool."""
    async with server_with(
        database_url,
        winnable_pool_target=POOL_TARGET,
        winnable_pool_rule_sets=(FARM_RULE_SET,),
        winnable_pool_budget_s=0.5,
        winnable_pool_wait_s=0.3,
        winnable_rooms_per_player_per_hour=2,
        lobby_empty_s=0.5,
    ) as server:
        await pool_ready(server, POOL_TARGET)
        measured = await beside_an_honest_racer(
            server, sessions, attacker, "winnable-drain", record_property
        )
        counts = measured.counts
        refused(counts, "winnable:true", "error:too_many_winnable")
        assert counts["winnable:true"] <= 2 and "winnable:false" not in counts, counts
        honest = await server.client("Honest player")
        room = await winnable_room(honest, FARM_RULE_SET)
        assert room.winnable is True
        for _ in range(100):  # the attacker's lobbies closed, their deals given back
            async with sessions.begin() as session:
                used = await session.scalar(
                    select(func.count())
                    .select_from(WinnableDealRow)
                    .where(WinnableDealRow.used_at.is_not(None))
                )
                lobbies = await session.scalar(
                    select(func.count()).select_from(RaceRow).where(RaceRow.winnable.is_(True))
                )
            if used == lobbies == 1:  # the honest room's
                break
            await asyncio.sleep(0.1)
        assert used == lobbies == 1
        await honest.close()
    assert measured.extra_attacked == 0
