"""A rematch (``server.core.rematch``): who may ask and what the next race keeps, on its own; then
over live connections, on both databases."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest
from sqlalchemy import select

from clients.sdk import RaceClient, RequestRefused
from engine.moves import RESIGN
from server.core.race import Phase, Race, RaceError
from server.core.rematch import rematch
from server.core.room_view import room_state
from server.storage.models import RaceRow
from tests.server.cluster.test_bus import hopping, two_workers
from tests.server.core.test_race import T0, messages, new_race, started
from tests.server.test_server import DEAL, Server, Sessions, play_to_end, race_of
from wire.protocol import RaceFinished, RaceStarted, RoomState, YourView

NEW_SEED = 77


def finished_race(**options: object) -> Race:
    race = new_race(seats_max=3, **options)
    started(race, "p2", "p3")
    for player in ("p1", "p2", "p3"):
        race.move(player, RESIGN, T0 + 10)
    assert race.phase is Phase.FINISHED
    return race


def test_the_next_race_keeps_the_room_and_its_racers_not_ready_on_a_new_deal() -> None:
    race = finished_race(time_limit_s=300, public=True, winnable=True)
    race.spectate("s1", most=1)
    last = race.events.seq
    following, out = rematch(race, "p2", race_id="r2", seed=NEW_SEED, algorithm=1, winnable=False)
    (room,) = messages(out, RoomState)
    assert (following.terms.race_id, following.terms.code, following.phase) == (
        "r2",
        race.terms.code,
        Phase.LOBBY,
    )
    assert following.commitment == hashlib.sha256(str(NEW_SEED).encode()).hexdigest()
    assert room.seq == last + 1 == following.events.seq, "the room's numbering goes on"
    assert room.phase == "lobby" and room.commitment is None and room.public
    assert [(s.player_id, s.ready, s.status) for s in room.seats] == [
        ("p1", False, "waiting"),
        ("p2", False, "waiting"),
        ("p3", False, "waiting"),
    ]
    assert room.host == "p1" and room.spectators == 1 and room.time_limit_s == 300
    assert room.winnable is False and room.deal_number is None
    assert following.events.since(last) == [room]


def test_racers_gone_from_the_room_lose_their_seats_and_the_asker_may_become_host() -> None:
    race = finished_race()
    race.leave("p1", T0 + 20)  # the host leaves the finished room
    race.disconnect("p3", T0 + 20)  # and a racer's connection drops
    following, out = rematch(race, "p2", race_id="r2", seed=NEW_SEED, algorithm=1, winnable=None)
    assert list(following.racers) == ["p2"] and following.host_id == "p2"
    following.join("p1", "Ann", T0 + 30)  # a free seat, like any other
    assert list(following.racers) == ["p2", "p1"]


def test_a_chosen_deal_keeps_its_number_and_shows_it_from_the_lobby() -> None:
    race = finished_race(deal_kind="number", seed=42)
    following, out = rematch(race, "p1", race_id="r2", seed=42, algorithm=1, winnable=None)
    (room,) = messages(out, RoomState)
    assert room.deal_kind == "number" and room.deal_number == "42"


@pytest.mark.parametrize(("who", "code"), [("p9", "not_in_room"), ("s1", "not_in_room")])
def test_only_a_seated_racer_may_ask(who: str, code: str) -> None:
    race = finished_race()
    race.spectate("s1", most=1)
    with pytest.raises(RaceError) as refused:
        rematch(race, who, race_id="r2", seed=NEW_SEED, algorithm=1, winnable=None)
    assert refused.value.code == code


def test_not_before_the_race_is_over_and_never_for_the_daily_deal() -> None:
    race = new_race()
    with pytest.raises(RaceError) as lobby:
        rematch(race, "p1", race_id="r2", seed=NEW_SEED, algorithm=1, winnable=None)
    assert lobby.value.code == "not_over"
    started(race, "p2")
    with pytest.raises(RaceError) as racing:
        rematch(race, "p1", race_id="r2", seed=NEW_SEED, algorithm=1, winnable=None)
    assert racing.value.code == "not_over"
    daily = new_race(deal_kind="daily", seats_max=1, countdown_s=0)
    daily.start("p1", T0)
    daily.move("p1", RESIGN, T0 + 1)
    assert daily.phase is Phase.FINISHED
    with pytest.raises(RaceError) as refused:
        rematch(daily, "p1", race_id="r2", seed=NEW_SEED, algorithm=1, winnable=None)
    assert refused.value.code == "no_rematch"


def test_a_secret_deals_number_is_in_the_room_once_the_race_is_over() -> None:
    race = new_race()
    assert room_state(race).deal_number is None
    started(race, "p2")
    assert room_state(race).deal_number is None
    race.move("p1", RESIGN, T0 + 5)
    race.move("p2", RESIGN, T0 + 5)
    assert room_state(race).deal_number == str(race.terms.seed)


# -- over a live connection ---------------------------------------------------------------------


async def race_to_the_end(*racers: RaceClient) -> RaceFinished:
    """Everyone ready, then everyone plays their game out; the result as the first saw it."""
    for racer in racers:
        await racer.ready()
    await asyncio.gather(*(play_to_end(racer) for racer in racers))
    results = [await racer.next_event(RaceFinished, timeout=20) for racer in racers]
    assert all(result == results[0] for result in results)
    return results[0]


def room_seqs(frames: list[str]) -> list[int]:
    return [
        frame["seq"]
        for frame in map(json.loads, frames)
        if frame["type"] in ROOM_EVENTS and frame.get("id") is None
    ]


ROOM_EVENTS = {"room", "countdown", "race_started", "progress", "race_finished"}


async def test_a_rematch_races_again_in_the_room_on_a_new_secret_deal(
    server: Server, sessions: Sessions
) -> None:
    ann, bob = await server.client("Ann"), await server.client("Bob")
    cy = await RaceClient.connect(server.url, record=True)
    await cy.hello(name="Cy")
    room = await ann.create_room("all-fours", seats=2)
    await bob.join(room.code)
    await cy.spectate(room.code)
    with pytest.raises(RequestRefused) as early:
        await ann.rematch()
    assert early.value.code == "not_over"
    first = await race_to_the_end(ann, bob)
    with pytest.raises(RequestRefused) as spectator:
        await cy.rematch()
    assert spectator.value.code == "not_in_room"

    await bob.rematch()
    lobby = await ann.next_event(RoomState)
    while lobby.phase != "lobby":
        lobby = await ann.next_event(RoomState)
    assert lobby.code == room.code and lobby.spectators == 1
    assert [(s.name, s.ready) for s in lobby.seats] == [("Ann", False), ("Bob", False)]
    second = await race_to_the_end(ann, bob)
    starts = [await cy.next_event(RaceStarted) for _ in range(2)]
    assert second.race_id != first.race_id
    assert starts[1].commitment != starts[0].commitment, "a new secret deal"
    for result in (first, second):  # each revealed seed is its own race's commitment
        assert result.seed is not None
        status, record = await server.http_get(f"/api/races/{result.race_id}")
        assert status == 200 and record["seed"] == result.seed
        assert record["commitment"] == hashlib.sha256(result.seed.encode()).hexdigest()
    assert [start.commitment for start in starts] == [
        hashlib.sha256(str(result.seed).encode()).hexdigest() for result in (first, second)
    ]
    async with sessions() as session:
        rows = (await session.scalars(select(RaceRow).where(RaceRow.code == room.code))).all()
    assert sorted(row.id for row in rows) == sorted([first.race_id, second.race_id])
    assert all(row.ended_at is not None for row in rows)
    seqs = room_seqs(cy.received or [])
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "consecutive across the rematch"


async def test_a_rematch_on_a_chosen_deal_keeps_its_number_and_a_racer_gone_is_unseated(
    server: Server,
) -> None:
    (ann, bob), code = await race_of(server, "all-fours", ["Ann", "Bob"])
    await asyncio.gather(play_to_end(ann), play_to_end(bob))
    await ann.next_event(RaceFinished, timeout=20)
    await bob.leave()
    await ann.rematch()
    lobby = await ann.next_event(RoomState)
    while lobby.phase != "lobby":
        lobby = await ann.next_event(RoomState)
    assert lobby.deal_kind == "number" and lobby.deal_number == str(DEAL)
    assert [s.name for s in lobby.seats] == ["Ann"]
    again = await bob.join(code)  # the freed seat
    assert [s.name for s in again.seats] == ["Ann", "Bob"] and again.deal_number == str(DEAL)
    await ann.ready()
    await bob.ready()
    assert (await bob.next_event(RaceStarted)).deal_number == str(DEAL)


async def test_the_daily_deal_has_no_rematch(server: Server) -> None:
    ann = await server.client("Ann")
    await ann.daily("all-fours")
    await ann.next_event(YourView)
    await ann.resign()
    await ann.next_event(RaceFinished)
    with pytest.raises(RequestRefused) as refused:
        await ann.rematch()
    assert refused.value.code == "no_rematch"


async def test_a_rematch_asked_through_another_worker(database_url: str, redis_url: str) -> None:
    async with two_workers(database_url, redis_url) as (first, second):
        ann, bob = await first.client("Ann"), await hopping(second, "Bob")
        room = await ann.create_room("all-fours", seats=2, public=True)
        await bob.join(room.code)
        watcher = await RaceClient.connect(second.url, follow_reconnect_to=False)
        await watcher.hello()
        await watcher.spectate(room.code)  # anonymous, through the hop
        earlier = await race_to_the_end(ann, bob)
        await bob.rematch()  # hops to the first worker, which holds the room
        lobby = await watcher.next_event(RoomState)
        while lobby.phase != "lobby":
            lobby = await watcher.next_event(RoomState)
        assert [s.name for s in lobby.seats] == ["Ann", "Bob"] and lobby.public
        later = await race_to_the_end(ann, bob)
        assert later.race_id != earlier.race_id
        assert (await watcher.next_event(RaceFinished)).race_id == earlier.race_id
        assert (await watcher.next_event(RaceFinished)).race_id == later.race_id


def test_with_the_host_and_the_asker_gone_the_first_racer_left_is_host() -> None:
    race = finished_race()
    race.leave("p1", T0 + 20)
    race.disconnect("p2", T0 + 20)  # the asker's connection dropped while the deal was drawn
    following, _ = rematch(race, "p2", race_id="r2", seed=NEW_SEED, algorithm=1, winnable=None)
    assert list(following.racers) == ["p3"] and following.host_id == "p3"
    race.disconnect("p3", T0 + 20)
    with pytest.raises(RaceError) as nobody:
        rematch(race, "p2", race_id="r3", seed=NEW_SEED, algorithm=1, winnable=None)
    assert nobody.value.code == "not_in_room"
