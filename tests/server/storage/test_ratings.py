"""Ratings in the database, on SQLite and PostgreSQL (conftest.py): rated with each stored
result, the rated board, ``patience-race ratings rebuild``, and ratings in ``race_finished``
from a real server."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.exc import DBAPIError

from clients.sdk import RaceClient
from server.commands import main as cli_main
from server.core.ratings import Rating, RatingRules
from server.core.terms import DealKind
from server.storage.models import EntryRow, PlayerRow, RatingChangeRow, RatingRow
from server.storage.players import mark_bot
from server.storage.races import record_start
from server.storage.ratings import rating_board, rebuild
from server.storage.results import record_results
from tests.server.cluster.test_bus import two_workers
from tests.server.core.test_ratings import RACE_1, RACE_2, close, race_1_by_hand, two_racers_by_hand
from tests.server.storage.test_store import NOW, Sessions, new_players, new_race
from tests.server.test_abuse import server_with
from tests.server.test_server import Server
from wire.protocol import RaceFinished, RankEntry, YourView

RULES = "octagon"
NOBODY_NEW = RatingRules(provisional_s=0)
"""The tests' identities are made for them: none is provisional."""


async def store_race(
    sessions: Sessions,
    ranking: list[RankEntry],
    players: dict[str, str],
    *,
    at: int,
    deal_kind: DealKind = "secret",
    rule_set: str = RULES,
    daily_day: date | None = None,
) -> tuple[str, dict[str, Any]]:
    """A race stored as the server stores one, ``at`` minutes after NOW, with the ranking's
    racers (named as in tests/server/core/test_ratings.py) mapped to player ids."""
    ranking = [
        entry.model_copy(update={"player_id": players[entry.player_id], "rank": rank})
        for rank, entry in enumerate(ranking, start=1)
    ]
    race_id = await new_race(
        sessions, ranking[0].player_id, rule_set=rule_set, deal_kind=deal_kind, daily_day=daily_day
    )
    started = NOW + timedelta(minutes=at)
    await record_start(
        sessions, race_id, started, [entry.player_id for entry in ranking], rating=NOBODY_NEW
    )
    recorded = await record_results(sessions, race_id, started + timedelta(minutes=10), ranking)
    return race_id, recorded.ratings


async def table(sessions: Sessions) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every rating and every change, exactly as stored (floats compared exactly)."""
    async with sessions.begin() as session:
        ratings = [
            (r.rule_set, r.player_id, r.mu, r.sigma, r.ordinal, r.races, r.updated_at)
            for r in await session.scalars(
                select(RatingRow).order_by(RatingRow.rule_set, RatingRow.player_id)
            )
        ]
        changes = [
            (c.race_id, c.player_id, c.mu_before, c.sigma_before, c.mu_after, c.sigma_after)
            for c in await session.scalars(
                select(RatingChangeRow).order_by(RatingChangeRow.race_id, RatingChangeRow.player_id)
            )
        ]
    return ratings, changes


async def rating_of(sessions: Sessions, player_id: str, rule_set: str = RULES) -> Rating | None:
    async with sessions.begin() as session:
        row = await session.get(RatingRow, (rule_set, player_id))
    return None if row is None else Rating(row.mu, row.sigma)


async def test_stored_ratings_are_the_hand_computed_ones(sessions: Sessions) -> None:
    ann, bob, cy = await new_players(sessions, "Ann", "Bob", "Cy")
    players = {"ann": ann, "bob": bob, "cy": cy}
    _, first = await store_race(sessions, RACE_1, players, at=0)
    ann_1, bob_1 = race_1_by_hand()
    assert first[ann].before.mu == 25 and close(
        Rating(first[ann].after.mu, first[ann].after.sigma), ann_1
    )
    await store_race(sessions, RACE_2, players, at=20)
    bob_2, ann_2 = two_racers_by_hand(bob_1, ann_1)
    for player, expected in ((ann, ann_2), (bob, bob_2), (cy, bob_1)):
        stored = await rating_of(sessions, player)
        assert stored is not None and close(stored, expected)
    async with sessions.begin() as session:
        row = await session.get_one(RatingRow, (RULES, ann))
    assert row.races == 2 and row.ordinal == row.mu - 3 * row.sigma
    assert row.updated_at == NOW + timedelta(minutes=30)


async def test_chosen_daily_and_lone_races_leave_ratings_alone(sessions: Sessions) -> None:
    ann, bob, cy = await new_players(sessions, "Ann", "Bob", "Cy")
    players = {"ann": ann, "bob": bob, "cy": cy}
    await store_race(sessions, RACE_1, players, at=0)
    before = await table(sessions)
    _, chosen = await store_race(sessions, RACE_2, players, at=20, deal_kind="number")
    _, alone = await store_race(sessions, RACE_2[:1], players, at=40)
    _, daily = await store_race(
        sessions, RACE_2[:1], players, at=60, deal_kind="daily", daily_day=NOW.date()
    )
    assert chosen == alone == daily == {}
    assert await table(sessions) == before


async def test_a_race_with_a_bot_account_rates_nobody_from_its_start(sessions: Sessions) -> None:
    """The start reads each racer's account (``players.bot``) beside its age: a bot in the
    race leaves everyone out, stored so (``rated_as``), and a rebuild rates it no more."""
    ann, bob, robo = await new_players(sessions, "Ann", "Bob", "Robo")
    await mark_bot(sessions, robo)
    race_id, changes = await store_race(
        sessions, RACE_1, {"ann": ann, "bob": bob, "cy": robo}, at=0
    )
    assert changes == {} and await table(sessions) == ([], [])
    async with sessions.begin() as session:
        rated_as = set(
            await session.scalars(select(EntryRow.rated_as).where(EntryRow.race_id == race_id))
        )
    assert rated_as == {None}
    await store_race(sessions, RACE_2, {"ann": ann, "bob": bob}, at=20)
    live = await table(sessions)
    assert {row[1] for row in live[0]} == {ann, bob}
    assert await rebuild(sessions) == 1 and await table(sessions) == live
    board = await rating_board(sessions, RULES, 5)
    assert not any(line.bot for line in board.lines)
    await mark_bot(sessions, ann)  # rated before: her line stays, marked
    board = await rating_board(sessions, RULES, 5)
    assert {line.player_id: line.bot for line in board.lines} == {ann: True, bob: False}


async def test_a_retried_result_rates_once_and_gives_the_same_changes(sessions: Sessions) -> None:
    ann, bob, cy = await new_players(sessions, "Ann", "Bob", "Cy")
    players = {"ann": ann, "bob": bob, "cy": cy}
    race_id, changes = await store_race(sessions, RACE_1, players, at=0)
    stored = await table(sessions)
    ranking = [
        entry.model_copy(update={"player_id": players[entry.player_id], "rank": rank})
        for rank, entry in enumerate(RACE_1, start=1)
    ]
    again = await record_results(sessions, race_id, NOW + timedelta(minutes=10), ranking)
    assert again.ratings == changes and await table(sessions) == stored


async def test_two_races_finishing_at_once_for_one_player_are_rated_one_after_the_other(
    sessions: Sessions,
) -> None:
    """One rated race at a time: the second started longer than the longest race after the
    first (as when the first was restored after an outage), so both are rated."""
    ann, bob, cy = await new_players(sessions, "Ann", "Bob", "Cy")
    stored: list[list[RankEntry]] = []
    races = []
    rules = RatingRules(provisional_s=0, longest_race_s=3600)
    for number, other in enumerate((bob, cy)):  # Ann loses to each
        ranking = [
            entry.model_copy(update={"player_id": player, "rank": rank})
            for rank, (entry, player) in enumerate(zip(RACE_2, (other, ann), strict=True), start=1)
        ]
        race_id = await new_race(sessions, ann, rule_set=RULES)
        await record_start(
            sessions, race_id, NOW + timedelta(hours=2 * number), [ann, other], rating=rules
        )
        races.append(race_id)
        stored.append(ranking)

    async def finish(number: int) -> None:
        while True:  # as the server's writer does: a write that failed is tried again
            try:
                await record_results(
                    sessions,
                    races[number],
                    NOW + timedelta(hours=2, minutes=number),
                    stored[number],
                )
                return
            except DBAPIError:  # SQLite: the other holds the write lock
                await asyncio.sleep(0.05)

    await asyncio.gather(finish(0), finish(1))
    async with sessions.begin() as session:
        row = await session.get_one(RatingRow, (RULES, ann))
        changes = list(
            await session.scalars(select(RatingChangeRow).where(RatingChangeRow.player_id == ann))
        )
    assert row.races == 2
    # One of the two was rated from the other's result: their changes chain.
    first, second = sorted(changes, key=lambda change: change.mu_before != 25.0)
    assert (first.mu_before, first.sigma_before) == (25.0, 25 / 3)
    assert (second.mu_before, second.sigma_before) == (first.mu_after, first.sigma_after)
    assert (row.mu, row.sigma) == (second.mu_after, second.sigma_after)


async def test_the_board_orders_by_ordinal_and_ties_share_a_rank(sessions: Sessions) -> None:
    ann, bob, cy, di = await new_players(sessions, "Ann", "Bob", "Cy", "Di")
    await store_race(sessions, RACE_1, {"ann": ann, "bob": bob, "cy": cy}, at=0)
    await store_race(sessions, RACE_2, {"ann": di, "bob": ann}, at=20)
    await store_race(sessions, RACE_2, {"ann": bob, "bob": di}, at=40, rule_set="all-fours")
    board = await rating_board(sessions, RULES, 10)
    lines = [(line.rank, line.name, line.races) for line in board.lines]
    # Ann won race 1 and beat Di; Bob and Cy tied in race 1 (the same rating); Di lost.
    assert lines[0] == (1, "Ann", 2)
    assert sorted(lines[1:3]) == [(2, "Bob", 1), (2, "Cy", 1)]
    assert lines[3] == (4, "Di", 1)
    ordinals = [line.ordinal for line in board.lines]
    assert ordinals == sorted(ordinals, reverse=True)
    assert all(line.ordinal == line.mu - 3 * line.sigma for line in board.lines)
    assert board.me is None and board.rule_set == RULES

    around = await rating_board(sessions, RULES, 3, around=di)  # one line above, Di last
    assert [(line.rank, line.name) for line in around.lines][1] == (4, "Di")
    assert around.lines[0].rank == 2 and around.me == around.lines[1]
    top = await rating_board(sessions, RULES, 1, around=cy)
    assert top.me is not None and top.me.name == "Cy" and top.me.rank == 2
    assert (await rating_board(sessions, RULES, 5, around="nobody")).me is None
    assert (await rating_board(sessions, "hidden-cards", 5)).lines == []


async def test_rebuild_gives_exactly_the_table_the_live_updates_made(
    sessions: Sessions, database_url: str
) -> None:
    ann, bob, cy, di = await new_players(sessions, "Ann", "Bob", "Cy", "Di")
    players = {"ann": ann, "bob": bob, "cy": cy}
    await store_race(sessions, RACE_1, players, at=0)
    await store_race(sessions, RACE_2, players, at=15)
    await store_race(sessions, RACE_1, {"ann": di, "bob": ann, "cy": bob}, at=30)
    await store_race(sessions, RACE_2, {"ann": cy, "bob": di}, at=45, deal_kind="number")
    await store_race(sessions, RACE_2, {"ann": cy, "bob": di}, at=50, rule_set="all-fours")
    await store_race(sessions, RACE_1, {"ann": cy, "bob": di, "cy": ann}, at=60)
    live = await table(sessions)
    assert len(live[1]) == 13
    assert await rebuild(sessions) == 5
    assert await table(sessions) == live
    async with sessions.begin() as session:
        await session.execute(RatingRow.__table__.delete())  # type: ignore[attr-defined]
    command = ["ratings", "rebuild", "--database-url", database_url]
    assert await asyncio.to_thread(cli_main, command) == 0
    assert await table(sessions) == live


BEHIND_A_PROXY: dict[str, Any] = {
    "trusted_proxies": frozenset({"127.0.0.1"}),
    "rating_provisional_s": 0.0,
    "rating_board_min_races": 2,
}
"""A server that takes 127.0.0.1 for a reverse proxy, so that each test client names its own
address (``X-Forwarded-For``) as players on machines of their own would; nobody is new, and the
board shows players with two rated races."""


async def racing_client(
    server: Server,
    name: str,
    tokens: dict[str, str | None],
    address: str,
    follow_reconnect_to: bool = True,
    bot: bool = False,
) -> RaceClient:
    """A client from ``address`` (for a server ``BEHIND_A_PROXY``), as itself by its token
    (saying it is a bot with ``bot``); one that does not follow ``reconnect_to`` stays on the
    worker it reached, and its requests take the hop to the room's."""
    client = await RaceClient.connect(
        server.url,
        follow_reconnect_to=follow_reconnect_to,
        additional_headers={"X-Forwarded-For": address},
    )
    await client.hello(name=name, token=tokens.get(name), bot=bot)
    tokens[name] = client.token
    return client


async def secret_race(
    server: Server,
    names: list[str],
    tokens: dict[str, str | None],
    addresses: dict[str, str] | None = None,
    moving: frozenset[str] | None = None,
    others_on: Server | None = None,
    bots: frozenset[str] = frozenset(),
) -> list[RaceFinished]:
    """A race on a secret deal: each racer from an address of their own (or the one
    ``addresses`` gives), makes one move (those of ``moving``, if given) and resigns; the
    racers come back as themselves by their ``tokens``, those of ``bots`` saying they are
    bots. With ``others_on``, every racer but the first is a client of that worker, staying
    there."""
    clients = [
        await racing_client(
            server if number == 1 or others_on is None else others_on,
            name,
            tokens,
            (addresses or {}).get(name, f"10.1.0.{number}"),
            follow_reconnect_to=others_on is None,
            bot=name in bots,
        )
        for number, name in enumerate(names, start=1)
    ]
    room = await clients[0].create_room("all-fours", seats=len(names))
    for client in clients[1:]:
        await client.join(room.code)
    for client in clients:
        await client.ready()
    for name, client in zip(names, clients, strict=True):
        view = (await client.next_event(YourView)).view
        if moving is None or name in moving:
            await client.move(next(move for move in view.legal_moves if move != "resign"))
    for client in clients:
        await client.resign()
    finished = [await client.next_event(RaceFinished, timeout=20) for client in clients]
    for client in clients:
        await client.close()
    return finished


@pytest.mark.asyncio
async def test_race_finished_carries_ratings_the_board_shows_and_a_rebuild_keeps(
    database_url: str, sessions: Sessions
) -> None:
    async with server_with(database_url, **BEHIND_A_PROXY) as server:
        await ratings_on_a_real_server(server, sessions)


async def ratings_on_a_real_server(server: Server, sessions: Sessions) -> None:
    tokens: dict[str, str | None] = {}
    first = await secret_race(server, ["Ann", "Bob"], tokens)
    assert first[0] == first[1]
    for entry in first[0].ranking:
        assert entry.rating is not None
        assert (entry.rating.before.mu, entry.rating.before.sigma) == (25.0, 25 / 3)
        stored = await rating_of(sessions, entry.player_id, "all-fours")
        assert stored is not None
        assert (entry.rating.after.mu, entry.rating.after.sigma) == (stored.mu, stored.sigma)
        assert entry.rating.after.ordinal == stored.ordinal
    status, board = await server.http_get("/api/ratings/all-fours")
    assert status == 200 and board["lines"] == [] and board["min_races"] == 2  # one race each
    second = (await secret_race(server, ["Ann", "Bob"], tokens))[0]
    for entry in second.ranking:
        before = next(e for e in first[0].ranking if e.player_id == entry.player_id)
        assert entry.rating is not None and before.rating is not None
        assert entry.rating.before == before.rating.after

    status, board = await server.http_get("/api/ratings/all-fours?limit=5")
    assert status == 200 and {line["name"] for line in board["lines"]} == {"Ann", "Bob"}
    assert {line["races"] for line in board["lines"]} == {2} and board["me"] is None
    me = second.ranking[0].player_id
    status, board = await server.http_get(f"/api/ratings/all-fours?around={me}")
    assert status == 200 and board["me"]["player_id"] == me
    for query, code in (
        ("?limit=0", 400),
        ("?limit=101", 400),
        ("?around=a%20b", 400),
        ("?board=x", 400),
    ):
        assert (await server.http_get(f"/api/ratings/all-fours{query}"))[0] == code
    assert (await server.http_get("/api/ratings/snap"))[0] == 404

    live = await table(sessions)
    assert await rebuild(sessions) == 2
    assert await table(sessions) == live


async def test_who_is_rated_is_stored_at_the_start_and_a_rebuild_keeps_it(
    database_url: str, sessions: Sessions
) -> None:
    """Racers sharing an address are left out (a third from elsewhere is rated against
    nobody: the race rates nobody); a racer who made no move is left out at the end; the
    rebuild reads what was stored and finds the same table."""
    tokens: dict[str, str | None] = {}
    async with server_with(database_url, **BEHIND_A_PROXY) as server:
        shared = await secret_race(
            server, ["Ann", "Bob", "Cy"], tokens, addresses={"Ann": "10.2.0.1", "Bob": "10.2.0.1"}
        )
        idle = await secret_race(
            server, ["Ann", "Bob", "Cy"], tokens, moving=frozenset({"Ann", "Cy"})
        )
    assert all(entry.rating is None for entry in shared[0].ranking)
    rated = {entry.name for entry in idle[0].ranking if entry.rating is not None}
    assert rated == {"Ann", "Cy"}
    async with sessions.begin() as session:
        roles = sorted(
            (
                await session.execute(
                    select(PlayerRow.name, EntryRow.rated_as)
                    .join(PlayerRow)
                    .where(EntryRow.race_id == shared[0].race_id)
                )
            ).all()
        )
    assert roles == [("Ann", None), ("Bob", None), ("Cy", "established")]
    live = await table(sessions)
    assert await rebuild(sessions) == 1
    assert await table(sessions) == live


async def test_the_address_of_a_racer_on_another_worker_is_carried_with_the_hop(
    database_url: str, redis_url: str, sessions: Sessions
) -> None:
    """Bob's requests hop from the second worker to the first, which holds the room: the
    address he connected from goes with them, so the room can tell his address from Ann's."""
    tokens: dict[str, str | None] = {}
    async with two_workers(database_url, redis_url, **BEHIND_A_PROXY) as (first, second):
        apart = await secret_race(first, ["Ann", "Bob"], tokens, others_on=second)
        together = await secret_race(
            first,
            ["Ann", "Bob"],
            tokens,
            others_on=second,
            addresses={"Ann": "10.3.0.1", "Bob": "10.3.0.1"},
        )
    assert all(entry.rating is not None for entry in apart[0].ranking)
    assert all(entry.rating is None for entry in together[0].ranking)


async def test_two_races_starting_at_once_rate_a_player_in_one_of_them(sessions: Sessions) -> None:
    """Ann starts two rated races at the same moment (on two workers, say): her player row is
    locked while each start decides, so the second sees the first under way and leaves her
    out; her opponents are rated as ever."""
    ann, bob, cy = await new_players(sessions, "Ann", "Bob", "Cy")
    races = [await new_race(sessions, ann, rule_set=RULES) for _ in range(2)]

    async def start(race_id: str, other: str) -> None:
        while True:  # as the server's writer does: a write that failed is tried again
            try:
                await record_start(sessions, race_id, NOW, [ann, other], rating=NOBODY_NEW)
                return
            except DBAPIError:  # SQLite: the other holds the write lock, or read before it
                await asyncio.sleep(0.05)

    await asyncio.gather(start(races[0], bob), start(races[1], cy))
    async with sessions.begin() as session:
        roles = (await session.execute(select(EntryRow.player_id, EntryRow.rated_as))).all()
    assert sorted(str(role) for player, role in roles if player == ann) == ["None", "established"]
    assert {role for player, role in roles if player != ann} == {"established"}
