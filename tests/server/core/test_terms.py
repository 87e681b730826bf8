"""A race's terms (``server.core.terms``): the limits measured from the start, and what of the
deal the race's messages may show."""

from __future__ import annotations

import pytest

from server.core.terms import MAX_RACE_S, RaceTerms
from tests.server.core.test_race import race_terms


def terms(**options: object) -> RaceTerms:
    return race_terms("octagon", seed=42, seats_max=2, **options)


def test_a_race_ends_at_its_time_limit_or_its_longest_whichever_is_sooner() -> None:
    assert terms(time_limit_s=300).limit(1000.0) == 1300.0
    assert terms().limit(1000.0) == 1000.0 + MAX_RACE_S
    assert terms(time_limit_s=10_000, max_race_s=600).limit(0.0) == 600.0


def test_a_chosen_number_is_shown_from_the_start_and_a_secret_seed_only_at_the_end() -> None:
    number, secret = terms(deal_kind="number"), terms(deal_kind="secret")
    assert number.race_started(1, 5, "c").deal_number == "42"
    assert secret.race_started(1, 5, "c").deal_number is None
    assert secret.race_finished(2, []).seed == "42"


def test_a_daily_deal_shows_its_seed_in_no_message() -> None:
    daily = terms(deal_kind="daily")
    assert not daily.reveals_seed
    assert daily.race_started(1, 5, "c").deal_number is None
    assert daily.race_finished(2, []).seed is None


def test_every_racer_is_dealt_the_same_game_which_keeps_no_undo() -> None:
    first, second = terms().new_game(), terms().new_game()
    assert first.view() == second.view()
    move = first.legal_moves()[0]
    first.play(move)
    with pytest.raises(IndexError, match="undo=False"):
        first.pop()
