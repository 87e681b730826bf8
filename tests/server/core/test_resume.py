"""A race rebuilt from what was stored (``server.core.resume.resume_race``): the racers' moves
replayed with their times reach the race as it was played live; everyone counts as away from
the rebuilding; a race that never started reopens its lobby; its room events are numbered on
above any number of its earlier life."""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine.moves import RESIGN, Move
from engine.players import GreedyPlayer
from server.core.race import Phase, Race
from server.core.resume import resume_race
from server.core.room_view import own_view, room_state
from server.core.views import pile_model
from tests.server.core import test_race
from tests.server.core.test_race import T0, race_terms
from wire.protocol import MoveAccepted


def settings(rule_set: str = "octagon", **options: object) -> dict[str, Any]:
    """``resume_race``'s terms and host for these tests: ``test_race``'s, hosted by Ann."""
    return {"terms": race_terms(rule_set, **options), "host_id": "p1", "host_name": "Ann"}


def new_race(rule_set: str = "octagon", **options: object) -> Race:
    return test_race.new_race(rule_set, **options)


def same_moves(rule_set: str, count: int) -> list[Move]:
    """The first ``count`` moves a greedy player makes on the deal."""
    trial = race_terms(rule_set).new_game()
    moves = []
    player = GreedyPlayer(random.Random(5))
    while len(moves) < count and not trial.outcome().is_over:
        move = player.choose_in(trial)
        trial.play(move)
        moves.append(move)
    return moves


def test_a_race_resumed_from_its_stored_moves_is_the_race_played_live() -> None:
    live = new_race()
    live.join("p2", "Bob", T0)
    live.start("p1", T0)
    live.tick(T0 + live.terms.countdown_s)
    start = live.started_at
    assert start is not None
    stored: dict[str, list[tuple[str, int]]] = {"p1": [], "p2": []}
    for index, move in enumerate(same_moves("octagon", 5)):
        said = live.move("p1", move, start + 2 + index * 1.5)
        stored["p1"] += [(made.text, made.at_ms) for made in said.moves]
    said = live.move("p2", RESIGN, start + 4)
    stored["p2"] += [(made.text, made.at_ms) for made in said.moves]

    resumed = resume_race(
        started_at=start,
        racers=[
            (player_id, live.racers[player_id].name, stored[player_id]) for player_id in stored
        ],
        now=start + 30,
        **settings(),
    )
    assert resumed.phase is Phase.RACING and resumed.started_at == start
    for player_id, racer in live.racers.items():
        again = resumed.racers[player_id]
        assert own_view(resumed, player_id) == own_view(live, player_id)
        assert (again.status, again.finished_at, again.move_times) == (
            racer.status,
            racer.finished_at,
            racer.move_times,
        )
        assert (again.reached, again.reached_at) == (racer.reached, racer.reached_at)


def test_a_racer_whose_stored_moves_ended_their_game_is_finished_at_the_last_one() -> None:
    first = same_moves("octagon", 1)[0]
    race = resume_race(
        started_at=T0,
        racers=[("p1", "Ann", [(str(first), 1000), (str(RESIGN), 2500)])],
        now=T0 + 30,
        **settings(),
    )
    ann = race.racers["p1"]
    assert (ann.status, ann.finished_at) == ("resigned", T0 + 2.5)
    said = race.catch_up(T0 + 30)
    assert race.phase is Phase.FINISHED and said.ended is not None
    assert said.ended.ended_at == T0 + 2.5, "the race ended when its last racer finished"


def test_everyone_counts_as_away_since_the_rebuilding() -> None:
    race = resume_race(
        started_at=T0,
        racers=[("p1", "Ann", []), ("p2", "Bob", [])],
        now=T0 + 30,
        **settings(grace_s=60),
    )
    assert [(r.connected, r.away_since) for r in race.racers.values()] == [(False, T0 + 30)] * 2
    assert [r.status for r in race.racers.values()] == ["racing", "racing"]
    assert race.next_deadline() == T0 + 90, "the grace period runs from the rebuilding"


def test_a_race_never_started_reopens_its_lobby_with_the_host_alone_and_away() -> None:
    race = resume_race(started_at=None, racers=[("p2", "Bob", [])], now=T0, **settings())
    assert race.phase is Phase.LOBBY and race.started_at is None
    assert list(race.racers) == ["p1"]
    host = race.racers["p1"]
    assert (host.name, host.connected, host.away_since, host.game) == ("Ann", False, T0, None)


def test_room_events_are_numbered_on_above_any_number_of_the_earlier_life() -> None:
    race = resume_race(started_at=T0, racers=[("p1", "Ann", [])], now=T0 + 30, **settings())
    latest = round((T0 + 30) * 1000)
    assert race.events.seq == latest
    assert race.events.since(4000) is None, "a client of the earlier life gets the room afresh"
    race.reconnect("p1", T0 + 31)
    assert race.events.seq == latest + 1


def test_a_restored_race_carries_each_racers_idle_while_on_from_their_stored_moves() -> None:
    first = same_moves("octagon", 1)[0]
    start = T0  # as app.restore_race sets it: the clock carries on from the last stored move
    race = resume_race(
        started_at=start,
        racers=[("p1", "Ann", [(str(first), 100_000)]), ("p2", "Bob", [])],
        now=start + 100,
        **settings(idle_s=600),
    )
    race.catch_up(start + 100)
    race.reconnect("p1", start + 100)
    race.reconnect("p2", start + 100)
    assert race.next_deadline() == start + 600  # Bob, who never moved
    race.tick(start + 600)
    assert race.racers["p2"].status == "abandoned" and not race.racers["p1"].finished
    assert race.next_deadline() == start + 700  # Ann, from her stored move


@pytest.mark.parametrize("rule_set", ["four-corners", "octagon", "all-fours"])
def test_a_restored_racers_next_move_sends_only_the_piles_that_move_changed(rule_set: str) -> None:
    """The stored moves are replayed; what they changed is not sent again with the next move
    (a racer who comes back gets their whole view)."""
    *stored, next_move = same_moves(rule_set, 6)
    race = resume_race(
        started_at=T0,
        racers=[("p1", "Ann", [(str(move), 1000 * index) for index, move in enumerate(stored)])],
        now=T0 + 10,
        **settings(rule_set, seats_max=2),
    )
    race.catch_up(T0 + 10)
    game = race.racers["p1"].game
    assert game is not None
    before = game.table()
    acks = [o.message for o in race.move("p1", next_move, T0 + 11)]
    (ack,) = [message for message in acks if isinstance(message, MoveAccepted)]
    expected = [
        pile_model(pile.seen())
        for old, pile in zip(before, game.table(), strict=True)
        if old != pile
    ]
    assert ack.changed == expected and expected


def test_a_resumed_race_keeps_its_bots_marked() -> None:
    resumed = resume_race(
        started_at=T0,
        racers=[("p1", "Ann", []), ("p2", "Bot", [])],
        now=T0 + 30,
        bots={"p2"},
        **settings(),
    )
    assert {player: racer.bot for player, racer in resumed.racers.items()} == {
        "p1": False,
        "p2": True,
    }
    lobby = resume_race(started_at=None, racers=[], now=T0, bots={"p1"}, **settings())
    assert [seat.bot for seat in room_state(lobby).seats] == [True]
