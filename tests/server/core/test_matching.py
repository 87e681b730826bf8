"""The quick race's matcher (``server.core.matching``): the window's steps, the both-windows
rule, gathering up to 8, groups formed when full or after ``GATHER_S``, nobody twice, the
practice bot's due time; the time is a fake clock's."""

from __future__ import annotations

import pytest

from server.core.matching import (
    GATHER_S,
    GROUP_MAX,
    WAVE_S,
    Seeker,
    bot_due,
    fit,
    wave,
    window,
)
from tests.fakeclock import FakeClock


def seeker(
    name: str, rating: int, since: float, rated: bool = True, bot_after_s: int | None = None
) -> Seeker:
    return Seeker(name, name, rating, rated, since, bot_after_s)


def ids(groups: list[list[Seeker]]) -> list[list[str]]:
    return [[s.player_id for s in group] for group in groups]


@pytest.mark.parametrize(
    ("waited_s", "accepted"),
    [
        (0.0, 100),
        (5.0, 100),
        (9.9, 100),
        (10.0, 150),
        (14.9, 150),
        (15.0, 200),
        (40.0, 450),
        (45.0, 500),
        (59.9, 500),
        (60.0, None),
        (600.0, None),
    ],
)
def test_the_window_is_100_for_10_s_then_widens_by_50_every_5_s_to_500_then_anyone_after_a_minute(
    waited_s: float, accepted: int | None
) -> None:
    assert window(waited_s) == accepted


def test_two_seekers_fit_only_within_both_windows() -> None:
    clock = FakeClock()
    patient = seeker("patient", 1500, clock.now)
    clock.advance(30)  # the patient one accepts +-350 now
    newcomer = seeker("newcomer", 1650, clock.now)  # who accepts +-100
    assert not fit(patient, newcomer, clock.now)
    clock.advance(10)  # +-450 and +-150
    assert fit(patient, newcomer, clock.now)


def test_the_unrated_queue_has_no_window() -> None:
    now = FakeClock().now
    assert fit(seeker("a", 900, now, rated=False), seeker("b", 2400, now, rated=False), now)


def test_a_pair_waits_for_more_racers_until_its_oldest_has_waited_gather_s() -> None:
    clock = FakeClock()
    pair = [seeker("a", 1500, clock.now), seeker("b", 1520, clock.advance(1))]
    clock.advance(WAVE_S)
    assert wave(pair, clock.now) == []
    clock.advance(GATHER_S - 1 - WAVE_S)
    assert ids(wave(pair, clock.now)) == [["a", "b"]]


def test_those_pressing_within_seconds_race_together_not_in_pairs() -> None:
    clock = FakeClock()
    seekers = [seeker(name, 1500 + 10 * i, clock.advance(1)) for i, name in enumerate("abcd")]
    clock.advance(GATHER_S)
    assert ids(wave(seekers, clock.now)) == [["a", "b", "c", "d"]]


def test_a_group_is_formed_at_once_when_it_has_eight_and_the_ninth_waits() -> None:
    now = FakeClock().now
    seekers = [seeker(f"p{i}", 1500 + i, now + i / 10) for i in range(GROUP_MAX + 1)]
    groups = wave(seekers, now + 1)
    assert ids(groups) == [[f"p{i}" for i in range(GROUP_MAX)]]


def test_the_closest_ratings_are_gathered_first_and_everyone_fits_everyone() -> None:
    clock = FakeClock()
    oldest = seeker("oldest", 1500, clock.now)
    near = seeker("near", 1560, clock.now + 1)
    far_side = seeker("far_side", 1420, clock.now + 2)  # fits oldest (80), not near (140)
    clock.advance(GATHER_S)
    # near is the closest to the oldest, gathered first; far_side would fit the oldest alone
    groups = wave([oldest, near, far_side], clock.now)
    assert ids(groups) == [["oldest", "near"]]


def test_nobody_is_in_two_groups_and_a_seeker_named_twice_counts_once() -> None:
    clock = FakeClock()
    low = [seeker(f"low{i}", 1000 + i, clock.now) for i in range(3)]
    high = [seeker(f"high{i}", 2000 + i, clock.now) for i in range(3)]
    clock.advance(GATHER_S)
    groups = wave([*low, *high, low[0]], clock.now)
    assert sorted(ids(groups)) == [["high0", "high1", "high2"], ["low0", "low1", "low2"]]
    everyone = [s.player_id for group in groups for s in group]
    assert len(everyone) == len(set(everyone)) == 6


def test_a_lone_seeker_is_never_a_group() -> None:
    clock = FakeClock()
    alone = [seeker("alone", 1500, clock.now)]
    clock.advance(10 * GATHER_S)
    assert wave(alone, clock.now) == []


def test_far_ratings_meet_once_both_accept_anyone() -> None:
    clock = FakeClock()
    pair = [seeker("low", 800, clock.now), seeker("high", 2600, clock.now)]
    clock.advance(59)
    assert wave(pair, clock.now) == []
    clock.advance(1)
    assert ids(wave(pair, clock.now)) == [["high", "low"]]  # (of one age: by id)


def test_the_practice_bot_is_due_after_the_seconds_the_seeker_gave() -> None:
    clock = FakeClock()
    seekers = [seeker("bot30", 1500, clock.now, bot_after_s=30), seeker("never", 1500, clock.now)]
    clock.advance(29)
    assert bot_due(seekers, clock.now) == []
    clock.advance(1)
    assert [s.player_id for s in bot_due(seekers, clock.now)] == ["bot30"]
