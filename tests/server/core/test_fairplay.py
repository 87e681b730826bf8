"""The fair-play signals and their verdict (server/core/fairplay.py): pure."""

from __future__ import annotations

import math

import pytest

from engine.registry import find_rule_set
from engine.solver import Budget, Result, solve
from server.core.fairplay import (
    FAST_REPLY_MS,
    MIN_JUDGED,
    MIN_TIMED_MOVES,
    Agreement,
    Signals,
    agreement_of,
    check_racer,
    judge,
    timing,
    with_agreement,
)

WINNABLE_OCTAGON = 1
"""An Octagon deal the solver wins at once (checked by the test that uses it)."""


def steady(count: int, every_ms: int) -> list[int]:
    return [every_ms * (n + 1) for n in range(count)]


def test_each_reply_is_timed_from_the_previous_move_and_the_first_from_the_start() -> None:
    signals = timing([100, 1100, 1200, 3200])  # intervals 100, 1000, 100, 2000
    assert signals.moves == 4
    assert signals.fast_share == 0.5
    assert signals.median_ms == 550
    assert signals.interval_cv == pytest.approx(
        math.sqrt((700**2 + 200**2 + 700**2 + 1200**2) / 4) / 800
    )


def test_a_reply_at_exactly_the_fast_limit_is_fast() -> None:
    assert timing([FAST_REPLY_MS, FAST_REPLY_MS + FAST_REPLY_MS + 1]).fast_share == 0.5


def test_no_move_measures_nothing() -> None:
    assert timing([]) == Signals(0, None, None, None)
    assert timing([500]).interval_cv is None


def test_replies_in_the_round_trip_are_flagged() -> None:
    verdict = judge(timing([n * 20 + (n % 3) * 30 for n in range(1, 41)]))
    assert verdict.flagged and "fast_replies" in verdict.reasons


def test_a_steady_pace_is_flagged_however_slow() -> None:
    verdict = judge(timing(steady(40, 1000)))
    assert verdict.reasons == ("even_intervals",)


def test_timing_counts_only_from_enough_moves() -> None:
    assert not judge(timing(steady(MIN_TIMED_MOVES - 1, 10))).flagged
    assert judge(timing(steady(MIN_TIMED_MOVES, 10))).flagged


HUMAN_INTERVALS = [900, 2400, 1300, 700, 4100, 1600, 1100, 3000, 800, 1900] * 3


def human_times() -> list[int]:
    return [sum(HUMAN_INTERVALS[: n + 1]) for n in range(len(HUMAN_INTERVALS))]


def test_varied_human_intervals_are_not_flagged() -> None:
    assert not judge(timing(human_times())).flagged


def test_agreement_counts_only_from_enough_positions() -> None:
    human = timing(human_times())
    assert not judge(with_agreement(human, Agreement(MIN_JUDGED - 1, MIN_JUDGED - 1, 19))).flagged
    assert judge(with_agreement(human, Agreement(MIN_JUDGED, MIN_JUDGED, MIN_JUDGED))).reasons == (
        "solver_agreement",
    )
    assert not judge(with_agreement(human, Agreement(40, 40, 30))).flagged


def test_signals_round_trip_through_json() -> None:
    signals = with_agreement(timing([100, 1100, 1200]), Agreement(3, 2, 1))
    assert Signals.from_json(signals.to_json()) == signals
    assert (signals.judged, signals.agreement, signals.kept) == (3, 1 / 3, 2 / 3)


def test_the_solvers_own_line_agrees_at_every_open_position() -> None:
    game = find_rule_set("octagon")(WINNABLE_OCTAGON)
    verdict = solve(game, Budget(seconds=5))
    assert verdict.result is Result.WON
    line = [str(move) for move in verdict.line]
    found = agreement_of("octagon", WINNABLE_OCTAGON, game.algorithm, game.rules, line, 10)
    assert found.judged > 0
    assert found.followed == found.kept == found.judged


def test_a_racer_checked_from_stored_moves_gives_json_signals() -> None:
    game = find_rule_set("octagon")(WINNABLE_OCTAGON)
    line = [str(move) for move in solve(game, Budget(seconds=5)).line]
    stored = [(text, 1000 * (n + 1)) for n, text in enumerate(line)]
    signals = Signals.from_json(
        check_racer("octagon", WINNABLE_OCTAGON, game.algorithm, game.rules, stored, 10)
    )
    assert signals.moves == len(line)
    assert signals.agreement == 1.0
    assert judge(signals).flagged
