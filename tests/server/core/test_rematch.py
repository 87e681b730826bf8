"""A rematch (``server.core.rematch``, ``server.core.offer``): the offer and its answers, who may
make it and what the next race keeps, on their own; then over live connections, on both
databases."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest
from sqlalchemy import select

from clients.sdk import RaceClient, RequestRefused
from engine.moves import RESIGN
from server.core.offer import Offer
from server.core.race import Phase, Race, RaceError
from server.core.rematch import answer, racer_gone, rematch
from server.core.room_view import room_state
from server.storage.models import RaceRow
from tests.server.cluster.test_bus import hopping, two_workers
from tests.server.core.test_race import T0, messages, new_race, race_terms, started
from tests.server.test_server import DEAL, Server, Sessions, play_to_end, race_of
from wire.protocol import (
    RaceFinished,
    RaceStarted,
    RematchOffer,
    Resume,
    Resynced,
    RoomState,
    YourView,
)

NEW_SEED = 77


def finished_race(**options: object) -> Race:
    race = new_race(seats_max=3, **options)
    started(race, "p2", "p3")
    for player in ("p1", "p2", "p3"):
        race.move(player, RESIGN, T0 + 10)
    assert race.phase is Phase.FINISHED
    return race


def agreed_by(race: Race, *players: str) -> Offer:
    """The offer the first of ``players`` makes, accepted by the others in turn: agreed."""
    agreed = None
    for player in players:
        assert agreed is None, "agreed before everyone answered"
        _, agreed = answer(race, player, accept=True)
    assert agreed is not None
    return agreed


def next_race(race: Race, offer: Offer, seed: int = NEW_SEED, **options: object) -> Race:
    following, _ = rematch(race, offer, race_id="r2", seed=seed, algorithm=1, winnable=None)
    return following


# -- the offer ----------------------------------------------------------------------------------


def test_an_offer_waits_for_every_racer_in_the_room_then_is_agreed() -> None:
    race = finished_race()
    race.spectate("s1", most=1)
    said, agreed = answer(race, "p2", accept=True)
    (made,) = messages(said, RematchOffer)
    assert (made.accepted, made.waiting, made.declined_by) == (["p2"], ["p1", "p3"], None)
    assert agreed is None and made.seq == race.events.seq
    pending = room_state(race).rematch
    assert pending is not None and (pending.accepted, pending.waiting) == (["p2"], ["p1", "p3"])
    said, agreed = answer(race, "p3", accept=True)
    assert [(m.accepted, m.waiting) for m in messages(said, RematchOffer)] == [
        (["p2", "p3"], ["p1"])
    ]
    assert agreed is None, "one racer still to answer"
    said, agreed = answer(race, "p1", accept=True)
    assert [(m.accepted, m.waiting) for m in messages(said, RematchOffer)] == [
        (["p2", "p3", "p1"], [])
    ]
    assert agreed is not None and agreed.accepted == ("p2", "p3", "p1")
    assert room_state(race).rematch is None, "no longer open: the rematch is being made"


def test_accepting_twice_says_nothing_more() -> None:
    race = finished_race()
    answer(race, "p1", accept=True)
    seq = race.events.seq
    assert answer(race, "p1", accept=True) == ([], None)
    assert race.events.seq == seq


def test_a_decline_ends_the_offer_and_anyone_may_offer_again() -> None:
    race = finished_race()
    answer(race, "p1", accept=True)
    answer(race, "p2", accept=True)
    said, agreed = answer(race, "p3", accept=False)
    (ended,) = messages(said, RematchOffer)
    assert ended.declined_by == "p3" and agreed is None
    assert race.offer is None and room_state(race).rematch is None
    said, _ = answer(race, "p3", accept=True)  # a new offer: everyone is asked again
    (made,) = messages(said, RematchOffer)
    assert (made.accepted, made.waiting, made.declined_by) == (["p3"], ["p1", "p2"], None)


def test_a_decline_with_no_offer_open_changes_nothing() -> None:
    race = finished_race()
    seq = race.events.seq
    assert answer(race, "p2", accept=False) == ([], None)
    assert race.events.seq == seq and race.offer is None


@pytest.mark.parametrize("goes", ["leave", "disconnect"])
def test_a_waiting_racer_who_goes_lets_the_others_proceed(goes: str) -> None:
    race = finished_race()
    answer(race, "p1", accept=True)
    answer(race, "p2", accept=True)
    getattr(race, goes)("p3", T0 + 20)
    said, agreed = racer_gone(race, "p3")
    (offer,) = messages(said, RematchOffer)
    assert (offer.accepted, offer.waiting) == (["p1", "p2"], [])
    assert agreed is not None
    assert list(next_race(race, agreed).racers) == ["p1", "p2"], "not seated again"


def test_an_accepting_racer_who_goes_is_not_counted_and_the_last_ends_the_offer() -> None:
    race = finished_race()
    answer(race, "p1", accept=True)
    answer(race, "p2", accept=True)
    race.leave("p1", T0 + 20)
    said, agreed = racer_gone(race, "p1")
    assert [(m.accepted, m.waiting) for m in messages(said, RematchOffer)] == [(["p2"], ["p3"])]
    race.disconnect("p2", T0 + 21)
    said, agreed = racer_gone(race, "p2")
    (ended,) = messages(said, RematchOffer)
    assert (ended.accepted, ended.waiting, ended.declined_by) == ([], ["p3"], "p2")
    assert agreed is None and race.offer is None


def test_a_racer_the_offer_does_not_concern_going_says_nothing() -> None:
    race = finished_race()
    race.disconnect("p3", T0 + 15)  # gone before the offer: not asked
    answer(race, "p1", accept=True)
    race.spectate("s1", most=1)
    race.leave("s1", T0 + 20)
    assert racer_gone(race, "s1") == ([], None)
    assert race.offer is not None and race.offer.waiting == ("p2",)


def test_a_racer_back_after_the_offer_was_made_may_accept_it() -> None:
    race = finished_race()
    race.disconnect("p3", T0 + 15)
    answer(race, "p1", accept=True)
    race.reconnect("p3", T0 + 16)
    _, agreed = answer(race, "p3", accept=True)
    assert agreed is None, "p2 is still asked"
    _, agreed = answer(race, "p2", accept=True)
    assert agreed is not None and list(next_race(race, agreed).racers) == ["p1", "p2", "p3"]


def test_alone_in_the_room_the_offer_is_agreed_at_once() -> None:
    race = finished_race()
    race.leave("p2", T0 + 20)
    race.disconnect("p3", T0 + 20)
    said, agreed = answer(race, "p1", accept=True)
    (offer,) = messages(said, RematchOffer)
    assert (offer.accepted, offer.waiting) == (["p1"], []) and agreed is not None


def test_offer_values_say_where_they_are() -> None:
    offer = Offer.made("a", ["a", "b"])
    assert offer.open and not offer.agreed and offer.concerns("b")
    assert offer.accept("b").agreed and not offer.accept("b").open
    declined = offer.decline("b")
    assert not declined.open and not declined.agreed and declined.declined_by == "b"
    assert Offer.made("a", ["a"]).agreed


# -- the next race ------------------------------------------------------------------------------


def test_the_next_race_keeps_the_room_and_its_racers_not_ready_on_a_new_deal() -> None:
    race = finished_race(time_limit_s=300, public=True, winnable=True)
    race.spectate("s1", most=1)
    offer = agreed_by(race, "p2", "p1", "p3")
    last = race.events.seq
    following, out = rematch(race, offer, race_id="r2", seed=NEW_SEED, algorithm=1, winnable=False)
    (room,) = messages(out, RoomState)
    assert (following.terms.race_id, following.terms.code, following.phase) == (
        "r2",
        race.terms.code,
        Phase.LOBBY,
    )
    assert following.commitment == hashlib.sha256(str(NEW_SEED).encode()).hexdigest()
    assert room.seq == last + 1 == following.events.seq, "the room's numbering goes on"
    assert room.phase == "lobby" and room.commitment is None and room.public
    assert room.rematch is None
    assert [(s.player_id, s.ready, s.status) for s in room.seats] == [
        ("p1", False, "waiting"),
        ("p2", False, "waiting"),
        ("p3", False, "waiting"),
    ]
    assert room.host == "p1" and room.spectators == 1 and room.time_limit_s == 300
    assert room.winnable is False and room.deal_number is None
    assert following.events.since(last) == [room]


def test_racers_gone_from_the_room_lose_their_seats_and_the_maker_may_become_host() -> None:
    race = finished_race()
    race.leave("p1", T0 + 20)  # the host leaves the finished room
    race.disconnect("p3", T0 + 20)  # and a racer's connection drops
    following = next_race(race, agreed_by(race, "p2"))
    assert list(following.racers) == ["p2"] and following.host_id == "p2"
    following.join("p1", "Ann", T0 + 30)  # a free seat, like any other
    assert list(following.racers) == ["p2", "p1"]


def test_a_chosen_deal_keeps_its_number_and_shows_it_from_the_lobby() -> None:
    race = finished_race(deal_kind="number", seed=42)
    offer = agreed_by(race, "p1", "p2", "p3")
    following, out = rematch(race, offer, race_id="r2", seed=42, algorithm=1, winnable=None)
    (room,) = messages(out, RoomState)
    assert room.deal_kind == "number" and room.deal_number == "42"


@pytest.mark.parametrize(("who", "code"), [("p9", "not_in_room"), ("s1", "not_in_room")])
def test_only_a_seated_racer_may_offer_or_answer(who: str, code: str) -> None:
    race = finished_race()
    race.spectate("s1", most=1)
    for accept in (True, False):
        with pytest.raises(RaceError) as refused:
            answer(race, who, accept)
        assert refused.value.code == code


def test_not_before_the_race_is_over_and_never_for_the_daily_deal() -> None:
    race = new_race()
    with pytest.raises(RaceError) as lobby:
        answer(race, "p1", accept=True)
    assert lobby.value.code == "not_over"
    started(race, "p2")
    with pytest.raises(RaceError) as racing:
        answer(race, "p1", accept=True)
    assert racing.value.code == "not_over"
    daily = new_race(deal_kind="daily", seats_max=1, countdown_s=0)
    daily.start("p1", T0)
    daily.move("p1", RESIGN, T0 + 1)
    assert daily.phase is Phase.FINISHED
    with pytest.raises(RaceError) as refused:
        answer(daily, "p1", accept=True)
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


ROOM_EVENTS = {"room", "countdown", "race_started", "progress", "race_finished", "rematch_offer"}


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
    offer = await ann.next_event(RematchOffer)
    assert (offer.accepted, offer.waiting) == ([bob.player_id], [ann.player_id])
    await ann.rematch()
    lobby = await ann.next_lobby()
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
    await ann.rematch()  # alone in the room: at once
    lobby = await ann.next_lobby()
    assert lobby.deal_kind == "number" and lobby.deal_number == str(DEAL)
    assert [s.name for s in lobby.seats] == ["Ann"]
    again = await bob.join(code)  # the freed seat
    assert [s.name for s in again.seats] == ["Ann", "Bob"] and again.deal_number == str(DEAL)
    await ann.ready()
    await bob.ready()
    assert (await bob.next_event(RaceStarted)).deal_number == str(DEAL)


async def room_resynced(client: RaceClient, code: str) -> RoomState:
    """The room as a full resync (``resume`` from seq 0) gives it to ``client``."""
    resynced = await client.request(Resume(type="resume", code=code, last_seq=0))
    assert isinstance(resynced, Resynced) and resynced.full
    return RoomState.model_validate(resynced.missed[0])


async def test_three_racers_must_all_accept_and_the_room_sees_each_answer(
    server: Server,
) -> None:
    (ann, bob, cy), code = await race_of(server, "all-fours", ["Ann", "Bob", "Cy"])
    await asyncio.gather(*(play_to_end(racer) for racer in (ann, bob, cy)))
    await cy.next_event(RaceFinished, timeout=20)
    await ann.rematch()
    await bob.rematch()
    answers = [await cy.next_event(RematchOffer) for _ in range(2)]
    assert [(offer.accepted, offer.waiting) for offer in answers] == [
        ([ann.player_id], [bob.player_id, cy.player_id]),
        ([ann.player_id, bob.player_id], [cy.player_id]),
    ]
    await cy.rematch()
    lobby = await ann.next_lobby()
    assert [s.name for s in lobby.seats] == ["Ann", "Bob", "Cy"] and lobby.rematch is None


async def test_a_decline_ends_the_offer_and_nobody_is_moved(server: Server) -> None:
    (ann, bob), code = await race_of(server, "all-fours", ["Ann", "Bob"])
    await asyncio.gather(play_to_end(ann), play_to_end(bob))
    await bob.next_event(RaceFinished, timeout=20)
    await ann.rematch()
    await bob.decline_rematch()
    offers = [await ann.next_event(RematchOffer) for _ in range(2)]
    assert offers[-1].declined_by == bob.player_id
    room = await room_resynced(bob, code)
    assert room.phase == "finished" and room.rematch is None
    await bob.rematch()  # a new offer
    assert (await ann.next_event(RematchOffer)).accepted == [bob.player_id]


async def test_a_waiting_racer_who_leaves_lets_the_others_race_again(server: Server) -> None:
    (ann, bob, cy), code = await race_of(server, "all-fours", ["Ann", "Bob", "Cy"])
    await asyncio.gather(*(play_to_end(racer) for racer in (ann, bob, cy)))
    await ann.next_event(RaceFinished, timeout=20)
    await ann.rematch()
    await bob.rematch()
    await cy.leave()
    lobby = await ann.next_lobby()
    assert [s.name for s in lobby.seats] == ["Ann", "Bob"]
    offers = [await bob.next_event(RematchOffer) for _ in range(3)]
    assert (offers[-1].accepted, offers[-1].waiting) == ([ann.player_id, bob.player_id], [])


async def test_an_open_offer_is_in_the_room_on_a_resync(server: Server) -> None:
    (ann, bob), code = await race_of(server, "all-fours", ["Ann", "Bob"])
    await asyncio.gather(play_to_end(ann), play_to_end(bob))
    await bob.next_event(RaceFinished, timeout=20)
    await ann.rematch()
    room = await room_resynced(bob, code)
    assert room.rematch is not None
    assert (room.rematch.accepted, room.rematch.waiting) == ([ann.player_id], [bob.player_id])


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
        assert (await watcher.next_event(RaceFinished)).race_id == earlier.race_id
        await bob.rematch()  # hops to the first worker, which holds the room
        assert (await watcher.next_event(RematchOffer)).waiting == [ann.player_id]
        await ann.rematch()
        lobby = await watcher.next_lobby()
        assert [s.name for s in lobby.seats] == ["Ann", "Bob"] and lobby.public
        later = await race_to_the_end(ann, bob)
        assert later.race_id != earlier.race_id
        assert (await watcher.next_event(RaceFinished)).race_id == later.race_id


def test_with_the_host_and_the_maker_gone_the_first_racer_left_is_host() -> None:
    race = finished_race()
    offer = agreed_by(race, "p2", "p1", "p3")
    race.leave("p1", T0 + 20)
    race.disconnect("p2", T0 + 20)  # the maker's connection dropped while the deal was drawn
    following = next_race(race, offer)
    assert list(following.racers) == ["p3"] and following.host_id == "p3"
    race.disconnect("p3", T0 + 20)
    with pytest.raises(RaceError) as nobody:
        next_race(race, offer)
    assert nobody.value.code == "not_in_room"


def test_the_rematch_keeps_every_racers_bot_mark() -> None:
    race = Race(race_terms(seats_max=2), host_id="p1", host_name="Bot", host_bot=True)
    race.join("p2", "Bob", T0)
    started(race)
    for player in ("p1", "p2"):
        race.move(player, RESIGN, T0 + 10)
    following = next_race(race, agreed_by(race, "p2", "p1"))
    assert {player: racer.bot for player, racer in following.racers.items()} == {
        "p1": True,
        "p2": False,
    }
