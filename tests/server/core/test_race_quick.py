"""A quick race's room in the race state machine: only the invited sit, nobody starts it, the
countdown begins once all have joined or at ``join_by`` with those who came."""

from __future__ import annotations

import pytest

from server.core.race import Phase, Race, RaceError
from tests.server.core.test_race import T0, messages, race_terms
from wire.protocol import Countdown, ErrorCode, RoomState

JOIN_S = 10.0
COUNTDOWN_S = 5.0


def quick_race(*invited: str) -> Race:
    return Race(
        race_terms(quick="rated", countdown_s=COUNTDOWN_S, seats_max=len(invited)),
        host_id=invited[0],
        host_name="",
        invited=invited,
        join_by=T0 + JOIN_S,
    )


def test_a_quick_room_opens_with_nobody_seated_and_says_it_is_quick() -> None:
    race = quick_race("p1", "p2")
    assert race.racers == {}
    assert race.snapshot(None, 0).quick == "rated"


def test_only_the_invited_may_sit() -> None:
    race = quick_race("p1", "p2")
    with pytest.raises(RaceError) as refused:
        race.join("stranger", "Zed", T0)
    assert refused.value.code is ErrorCode.NOT_INVITED
    race.spectate("stranger", 10)
    assert "stranger" in race.spectators


def test_the_countdown_begins_once_every_invited_player_has_joined() -> None:
    race = quick_race("p1", "p2", "p3")
    race.join("p1", "Ann", T0)
    assert not messages(race.join("p2", "Bob", T0 + 1), Countdown)
    said = race.join("p3", "Cy", T0 + 2)
    [countdown] = messages(said, Countdown)
    assert countdown.seconds == COUNTDOWN_S
    assert race.phase is Phase.COUNTDOWN
    race.tick(T0 + 2 + COUNTDOWN_S)
    assert race.phase is Phase.RACING
    assert set(race.racers) == {"p1", "p2", "p3"}


def test_at_join_by_the_countdown_begins_with_those_who_came() -> None:
    race = quick_race("p1", "p2", "p3")
    race.join("p1", "Ann", T0)
    race.join("p3", "Cy", T0 + 1)
    assert race.next_deadline() == T0 + JOIN_S
    assert race.tick(T0 + JOIN_S - 0.1) == []
    said = race.tick(T0 + JOIN_S)
    assert messages(said, Countdown)
    race.tick(T0 + JOIN_S + COUNTDOWN_S)
    assert race.phase is Phase.RACING
    assert set(race.racers) == {"p1", "p3"}


def test_a_quick_room_nobody_came_to_waits_without_a_deadline() -> None:
    race = quick_race("p1", "p2")
    assert race.next_deadline() is None
    assert race.tick(T0 + 10 * JOIN_S) == []
    assert race.phase is Phase.LOBBY


def test_nobody_starts_a_quick_race_and_ready_does_not_begin_its_countdown() -> None:
    race = quick_race("p1", "p2", "p3")
    race.join("p1", "Ann", T0)
    race.join("p2", "Bob", T0)
    with pytest.raises(RaceError) as refused:
        race.start("p1", T0)
    assert refused.value.code is ErrorCode.NOT_HOST
    race.ready("p1", True, T0)
    said = race.ready("p2", True, T0)
    assert messages(said, RoomState) and not messages(said, Countdown)
    assert race.phase is Phase.LOBBY
