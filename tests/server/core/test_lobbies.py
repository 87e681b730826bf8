"""The list of open public rooms (``server.core.lobbies``): which races ``entry`` lists and how,
and the order ``in_turn`` gives: each address's newest lobby first, at most ``LISTED``."""

from __future__ import annotations

from typing import Any

from server.core.lobbies import LISTED, entry, in_turn
from server.core.race import Phase, Race
from tests.server.core.test_race import new_race

T0 = 1_000_000.0


def lobby(public: bool = True, seats_max: int = 3) -> Race:
    return new_race(
        "octagon", seed=7, deal_kind="number", seats_max=seats_max, time_limit_s=300, public=public
    )


def test_a_public_lobby_with_a_free_seat_is_listed_with_its_host_and_seats() -> None:
    race = lobby()
    race.join("p2", "Bob", T0)
    assert entry(race) == {
        "code": "ABCD1234",
        "rule_set": "octagon",
        "host": "Ann",
        "racers": 2,
        "seats": 3,
        "deal_kind": "number",
        "time_limit_s": 300,
    }


def test_a_private_lobby_is_not_listed() -> None:
    assert entry(lobby(public=False)) is None


def test_a_full_lobby_is_not_listed() -> None:
    race = lobby(seats_max=2)
    race.join("p2", "Bob", T0)
    assert entry(race) is None


def test_a_race_in_its_countdown_or_racing_is_not_listed() -> None:
    race = lobby()
    race.start("p1", T0)
    assert race.phase is Phase.COUNTDOWN and entry(race) is None
    race.tick(T0 + race.terms.countdown_s)
    assert race.phase is Phase.RACING and entry(race) is None


def test_a_lobby_its_host_has_left_is_listed_under_the_next_host() -> None:
    race = lobby()
    race.join("p2", "Bob", T0)
    race.leave("p1", T0 + 1)
    listed = entry(race)
    assert listed is not None and (listed["host"], listed["racers"]) == ("Bob", 1)


def test_a_lobby_everyone_has_left_is_not_listed() -> None:
    race = lobby()
    race.leave("p1", T0 + 1)
    assert race.racers == {} and entry(race) is None


def listing(name: str) -> dict[str, Any]:
    return {"code": name}


def codes(listed: list[dict[str, Any]]) -> list[str]:
    return [item["code"] for item in listed]


def test_newest_first_within_a_turn_and_each_addresss_second_newest_after() -> None:
    listed = [
        (1.0, "a", listing("a-old")),
        (2.0, "b", listing("b-old")),
        (3.0, "a", listing("a-new")),
        (4.0, "b", listing("b-new")),
        (0.5, "c", listing("c-only")),
    ]
    assert codes(in_turn(listed)) == ["b-new", "a-new", "c-only", "b-old", "a-old"]


def test_one_address_with_many_lobbies_cannot_fill_the_list() -> None:
    flood = [(100.0 + n, "flooder", listing(f"flood-{n}")) for n in range(2 * LISTED)]
    honest = [(float(n), f"address-{n}", listing(f"honest-{n}")) for n in range(LISTED - 1)]
    shown = codes(in_turn(flood + honest))
    assert len(shown) == LISTED
    assert shown[0] == f"flood-{2 * LISTED - 1}", "the flooder's newest comes first"
    assert shown[1:] == [f"honest-{n}" for n in range(LISTED - 2, -1, -1)], "every honest room"


def test_the_list_shows_at_most_listed_rooms() -> None:
    listed = [(float(n), f"address-{n}", listing(f"room-{n}")) for n in range(LISTED + 5)]
    shown = codes(in_turn(listed))
    assert len(shown) == LISTED
    assert shown == [f"room-{n}" for n in range(LISTED + 4, 4, -1)], "the oldest five left out"


def test_an_empty_list_stays_empty() -> None:
    assert in_turn([]) == []
