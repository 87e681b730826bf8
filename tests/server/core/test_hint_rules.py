"""Who may have a hint (``server.core.hint_rules.refusal``): a racer alone on a chosen deal
number, racing; every other case refused with the reason, checked in the module's order."""

from __future__ import annotations

from engine.moves import RESIGN
from server.core.hint_rules import refusal
from server.core.race import Phase, Race
from server.core.terms import DealKind
from tests.server.core import test_race
from wire.protocol import ErrorCode

T0 = 1_000_000.0


def new_race(deal_kind: DealKind = "number", seats_max: int = 2) -> Race:
    return test_race.new_race(
        "octagon", seed=7, deal_kind=deal_kind, seats_max=seats_max, countdown_s=0
    )


def racing(race: Race) -> Race:
    race.start("p1", T0)
    race.tick(T0)
    assert race.phase is Phase.RACING
    return race


def refused_with(race: Race, player_id: str = "p1") -> tuple[ErrorCode, str]:
    refused = refusal(race, player_id)
    assert refused is not None
    return refused.code, refused.message


def test_a_racer_alone_on_a_chosen_deal_number_may_have_a_hint() -> None:
    assert refusal(racing(new_race()), "p1") is None


def test_someone_without_a_seat_is_refused_as_not_in_the_room() -> None:
    race = racing(new_race())
    race.spectate("s1", most=5)
    assert refused_with(race, "s1")[0] is ErrorCode.NOT_IN_ROOM


def test_no_hints_on_the_daily_deal_even_alone_and_before_it_starts() -> None:
    code, message = refused_with(new_race("daily", seats_max=1))
    assert code is ErrorCode.NO_HINTS and "daily" in message


def test_no_hints_in_a_race_with_others_even_on_a_deal_number() -> None:
    race = new_race()
    race.join("p2", "Bob", T0)
    code, message = refused_with(racing(race))
    assert code is ErrorCode.NO_HINTS and "others" in message


def test_no_hints_on_a_secret_deal_and_the_refusal_says_how_to_have_them() -> None:
    code, message = refused_with(racing(new_race("secret")))
    assert code is ErrorCode.NO_HINTS and "secret" in message and "deal number" in message


def test_no_hint_before_the_race_starts() -> None:
    assert refused_with(new_race())[0] is ErrorCode.NOT_RACING


def test_no_hint_once_the_racers_game_is_over() -> None:
    race = racing(new_race())
    race.move("p1", RESIGN, T0 + 1)
    assert race.racers["p1"].finished
    assert refused_with(race)[0] is ErrorCode.NOT_RACING
