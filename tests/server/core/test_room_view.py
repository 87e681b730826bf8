"""What a player may ask of a race without changing it (``server.core.room_view``)."""

from __future__ import annotations

from server.core.room_view import catch_up_state, legal_move_named, own_view, room_state
from tests.server.core.test_race import T0, new_race, started
from wire.protocol import RaceFinished, RoomState


def test_the_room_state_is_numbered_as_the_latest_event_and_changes_nothing() -> None:
    race = new_race()
    race.join("p2", "Bob", T0)
    seq = race.events.seq
    state = room_state(race, "req")
    assert (state.id, state.seq, [seat.player_id for seat in state.seats]) == (
        "req",
        seq,
        ["p1", "p2"],
    )
    assert race.events.seq == seq


def test_a_racer_has_a_view_of_their_game_once_dealt_and_nobody_else_has_one() -> None:
    race = new_race()
    assert own_view(race, "p1") is None, "nothing is dealt in the lobby"
    started(race, "p2")
    view = own_view(race, "p1", "v1")
    assert view is not None and view.id == "v1"
    assert own_view(race, "stranger") is None


def test_a_move_named_in_text_is_found_only_for_a_racer_while_racing() -> None:
    race = new_race()
    assert legal_move_named(race, "p1", "resign") is None
    started(race, "p2")
    game = race.racers["p1"].game
    assert game is not None
    text = str(game.legal_moves()[0])
    assert legal_move_named(race, "p1", text) == game.legal_moves()[0]
    assert legal_move_named(race, "stranger", text) is None
    race.resign("p1", T0 + 5)
    race.resign("p2", T0 + 6)
    assert legal_move_named(race, "p1", text) is None, "the race is over"


def test_one_who_missed_too_much_gets_the_room_and_once_over_the_result() -> None:
    race = new_race()
    (room,) = catch_up_state(race)
    assert isinstance(room, RoomState)
    started(race, "p2")
    race.resign("p1", T0 + 5)
    race.resign("p2", T0 + 6)
    room, result = catch_up_state(race)
    assert isinstance(room, RoomState) and room.phase == "finished"
    assert isinstance(result, RaceFinished)
