"""The rating core against values worked out by hand from the Plackett-Luce formulas.

The formulas (Weng and Lin 2011, algorithm 4, with openskill's handling of ties and its tau),
for racers i with ratings (mu_i, sigma_i) and places r(i), 1 best, tied racers sharing one:

    sigma_i^2 <- sigma_i^2 + tau^2                        (before anything else)
    c   = sqrt(sum_i (sigma_i^2 + beta^2))
    S_q = sum over s with r(s) >= r(q) of exp(mu_s / c)   (q and everyone placed below q)
    A_q = how many racers share q's place
    p_iq = exp(mu_i / c) / S_q
    Omega_i = sigma_i^2 / c * sum over q with r(q) <= r(i) of ([i = q] - p_iq) / A_q
    Delta_i = (sigma_i / c) * sigma_i^2 / c^2 * sum over q with r(q) <= r(i) of
              p_iq (1 - p_iq) / A_q
    mu_i' = mu_i + Omega_i,   sigma_i' = sigma_i * sqrt(max(1 - Delta_i, 1e-4))

with mu 25, sigma 25/3, beta 25/6 and tau 25/300. Written out below as plain arithmetic,
independent of openskill's code.
"""

from __future__ import annotations

import random
from dataclasses import replace
from math import exp, isclose, sqrt

import pytest

from server.core.ratings import (
    ESTABLISHED,
    HOUR_S,
    NEW,
    PROVISIONAL,
    Candidate,
    Rating,
    RatingRules,
    changes,
    rate,
    rated_ranking,
    roles,
    tied_ranks,
)
from wire.protocol import RankEntry
from wire.ratings import Rating as WireRating

BETA, TAU = 25 / 6, 25 / 300
DAY_S = 24 * HOUR_S


def entry(
    player: str, status: str, time_ms: int, home: int, reached_at_ms: int | None = None
) -> RankEntry:
    return RankEntry(
        rank=0,
        player_id=player,
        name=player,
        status=status,
        time_ms=time_ms,
        on_foundations=home,
        reached_at_ms=reached_at_ms,
        moves=10,
    )


RACE_1 = [
    entry("ann", "won", 90_000, 52, 90_000),
    entry("bob", "lost", 120_000, 20, 60_000),
    entry("cy", "resigned", 150_000, 20, 60_000),
]
"""Ann wins; Bob and Cy both got 20 cards home at 60 s: tied on every ranking term."""
RACE_2 = [entry("bob", "won", 80_000, 52, 80_000), entry("ann", "timed_out", 600_000, 30, 1)]
"""Then Bob beats Ann."""


def race_1_by_hand() -> tuple[Rating, Rating]:
    """Ann's and Bob's (= Cy's) ratings after race 1, everyone new.

    sigma^2 = (25/3)^2 + (1/12)^2 = 10001/144 = 69.451389; c^2 = 3 (10001/144 + 2500/144)
    = 37503/144, c = sqrt(37503)/12 = 16.138076. Every exp(mu/c) is the same e, so
    S_ann = 3e (everyone is placed at or below Ann), S_bob = S_cy = 2e; A_ann = 1,
    A_bob = A_cy = 2.

    Ann (place 1; only q = Ann): p = 1/3. Omega = sigma^2/c (1 - 1/3) = 2/3 sigma^2/c
    = 2.869049, mu' = 27.869049. Delta = (sigma/c)^3 (1/3)(2/3) = 2/9 (sigma/c)^3, with
    sigma/c = 0.516406: Delta = 0.030604, sigma' = 8.333750 * sqrt(0.969396) = 8.205243.

    Bob (place 2; q = Ann, Bob, Cy): q = Ann gives -1/3; q = Bob (1 - 1/2)/2 = 1/4;
    q = Cy -(1/2)/2 = -1/4. Omega = -1/3 sigma^2/c = -1.434524, mu' = 23.565476.
    Delta = (sigma/c)^3 (2/9 + (1/4)/2 + (1/4)/2) = 17/36 (sigma/c)^3 = 0.065034,
    sigma' = 8.333750 * sqrt(0.934966) = 8.058224.
    """
    sigma2 = (25 / 3) ** 2 + TAU**2
    assert isclose(sigma2, 10001 / 144)
    c = sqrt(3 * (sigma2 + BETA**2))
    assert isclose(c, sqrt(37503) / 12)
    sigma, ratio3 = sqrt(sigma2), (sqrt(sigma2) / c) ** 3
    ann = Rating(25 + 2 / 3 * sigma2 / c, sigma * sqrt(1 - 2 / 9 * ratio3))
    bob = Rating(25 - 1 / 3 * sigma2 / c, sigma * sqrt(1 - 17 / 36 * ratio3))
    return ann, bob


def two_racers_by_hand(winner: Rating, loser: Rating) -> tuple[Rating, Rating]:
    """A race of two, no tie: with p_w, p_l = exp(mu/c) / (exp(mu_w/c) + exp(mu_l/c)), the
    winner's sum has q = winner alone, the loser's q = winner (-p_l) and q = loser
    (p = 1, so 1 - 1 = 0):

        winner: Omega = sigma_w^2/c p_l,   Delta = (sigma_w/c)^3 p_w p_l
        loser:  Omega = -sigma_l^2/c p_l,  Delta = (sigma_l/c)^3 p_w p_l

    For race 2 (Bob 23.565476 / 8.058224 beats Ann 27.869049 / 8.205243): c = 12.922736,
    p_ann = 0.582495, p_bob = 0.417505, giving Bob 26.492745 / 7.817409 and
    Ann 24.834002 / 7.946105."""
    w2, l2 = winner.sigma**2 + TAU**2, loser.sigma**2 + TAU**2
    c = sqrt(w2 + l2 + 2 * BETA**2)
    ew, el = exp(winner.mu / c), exp(loser.mu / c)
    pw, pl = ew / (ew + el), el / (ew + el)
    return (
        Rating(winner.mu + w2 / c * pl, sqrt(w2) * sqrt(1 - (sqrt(w2) / c) ** 3 * pw * pl)),
        Rating(loser.mu - l2 / c * pl, sqrt(l2) * sqrt(1 - (sqrt(l2) / c) ** 3 * pw * pl)),
    )


def close(found: Rating, expected: Rating) -> bool:
    return isclose(found.mu, expected.mu, abs_tol=1e-6) and isclose(
        found.sigma, expected.sigma, abs_tol=1e-6
    )


def test_three_new_racers_with_a_tie_rate_as_worked_by_hand() -> None:
    ann, bob = race_1_by_hand()
    assert isclose(ann.mu, 27.869049, abs_tol=1e-6) and isclose(ann.sigma, 8.205243, abs_tol=1e-6)
    assert isclose(bob.mu, 23.565476, abs_tol=1e-6) and isclose(bob.sigma, 8.058224, abs_tol=1e-6)
    after = rate(RACE_1, {})
    assert close(after["ann"], ann) and close(after["bob"], bob) and close(after["cy"], bob)


def test_a_second_race_starts_from_the_first_ones_ratings() -> None:
    first = rate(RACE_1, {})
    bob, ann = two_racers_by_hand(first["bob"], first["ann"])
    assert isclose(bob.mu, 26.492745, abs_tol=1e-6) and isclose(bob.sigma, 7.817409, abs_tol=1e-6)
    assert isclose(ann.mu, 24.834002, abs_tol=1e-6) and isclose(ann.sigma, 7.946105, abs_tol=1e-6)
    second = rate(RACE_2, first)
    assert close(second["bob"], bob) and close(second["ann"], ann)


def test_ties_are_on_every_ranking_term_as_published() -> None:
    assert tied_ranks(RACE_1) == [1, 2, 2]
    winners = [
        entry("a", "won", 1000, 52, 1000),
        entry("b", "won", 1000, 52, 1000),
        entry("c", "won", 1001, 52, 1001),
        entry("d", "lost", 5000, 3, None),
        entry("e", "abandoned", 9000, 3, None),
        entry("f", "lost", 9000, 3, 50),
    ]
    assert tied_ranks(winners) == [1, 1, 3, 4, 4, 6]


def test_a_new_player_is_openskills_default_shown_as_a_provisional_1500() -> None:
    assert (NEW.mu, NEW.sigma, NEW.ordinal) == (25.0, 25 / 3, 0.0)
    assert str(NEW) == "1500?" and str(Rating(30.0, 3.0)) == "1700"
    assert str(Rating(24.0, 6.6)) == "1460?" and str(Rating(24.0, 6.5)) == "1460"
    assert NEW.wire().model_dump() == {
        "mu": 25.0,
        "sigma": 25 / 3,
        "ordinal": 0.0,
        "shown": 1500,
        "provisional": True,
    }
    forged = {"mu": 25.0, "sigma": 3.0, "ordinal": 16.0, "shown": 2900, "provisional": True}
    read = WireRating.model_validate(forged)
    assert (read.shown, read.provisional) == (1500, False), "computed again, not taken"


def shown_changes(ranking: list[RankEntry], current: dict[str, Rating]) -> dict[str, str]:
    after = rate(ranking, current)
    return {player: str(change) for player, change in changes(current, after).items()}


def test_two_new_players_who_tie_both_show_no_gain() -> None:
    """Issue 26: both resigned with no card home, and both were shown +0.8 (the ordinal)."""
    tie = [entry("a", "resigned", 4_000, 0), entry("b", "resigned", 9_000, 0)]
    assert shown_changes(tie, {}) == {"a": "1500? (+0)", "b": "1500? (+0)"}


def test_a_last_place_never_shows_a_gain() -> None:
    """Whatever the ratings before (a weak racer last behind strong ones, an uncertain one
    behind certain ones), the last place's shown rating does not rise; and whoever won the
    deal outright does not fall."""
    draw = random.Random(26)
    for _ in range(300):
        racers = [f"p{index}" for index in range(draw.randint(2, 8))]
        current = {
            player: Rating(draw.uniform(10, 40), draw.uniform(1, 25 / 3)) for player in racers
        }
        ranking = [
            entry(player, "lost", 60_000, 52 - place, 1000 * place)
            for place, player in enumerate(racers)
        ]
        moved = changes(current, rate(ranking, current))
        assert moved[racers[-1]].gained <= 0
        assert moved[racers[0]].gained >= 0


RULES = RatingRules(provisional_s=DAY_S, per_hour=3, longest_race_s=2 * HOUR_S)


def racer(
    player: str,
    address: str = "",
    age_s: float = 2 * DAY_S,
    recent: tuple[tuple[float, bool], ...] = (),
) -> Candidate:
    return Candidate(player, address or f"10.0.0.{len(player)}{player[0]}", age_s, recent)


@pytest.mark.parametrize(
    ("deal_kind", "racers", "rated"),
    [
        ("secret", 2, True),
        ("secret", 8, True),
        ("secret", 1, False),
        ("number", 3, False),
        ("daily", 3, False),
    ],
)
def test_only_secret_deals_of_two_or_more_rate_anyone(
    deal_kind: str, racers: int, rated: bool
) -> None:
    made = roles(deal_kind, [racer(f"p{n}", f"10.0.0.{n}") for n in range(racers)], RULES)
    assert set(made.values()) == ({ESTABLISHED} if rated else {None})


def test_a_race_opened_unrated_rates_nobody_even_on_a_secret_deal() -> None:
    made = roles("secret", [racer("ann", "10.0.0.1"), racer("bob", "10.0.0.2")], RULES, True)
    assert made == {"ann": None, "bob": None}


def test_racers_sharing_an_address_are_left_out_and_the_rest_rated() -> None:
    made = roles(
        "secret",
        [
            racer("ann", "10.0.0.1"),
            racer("bob", "10.0.0.1"),
            racer("cy", "10.0.0.2"),
            racer("di", "10.0.0.3"),
        ],
        RULES,
    )
    assert made == {"ann": None, "bob": None, "cy": ESTABLISHED, "di": ESTABLISHED}


def test_an_identity_younger_than_a_day_is_provisional() -> None:
    made = roles("secret", [racer("ann", age_s=DAY_S - 1), racer("bob", age_s=DAY_S)], RULES)
    assert made == {"ann": PROVISIONAL, "bob": ESTABLISHED}


def test_one_rated_race_at_a_time_and_so_many_an_hour() -> None:
    under_way = ((600.0, True),)
    three_this_hour = ((100.0, False), (1000.0, False), (3000.0, False))
    two_this_hour = ((100.0, False), (1000.0, False), (3700.0, False))
    made = roles(
        "secret",
        [
            racer("ann", recent=under_way),
            racer("bob", recent=three_this_hour),
            racer("cy", recent=two_this_hour),
            racer("di"),
        ],
        RULES,
    )
    assert made == {"ann": None, "bob": None, "cy": ESTABLISHED, "di": ESTABLISHED}


@pytest.mark.parametrize("bots", [("ann",), ("cy",), ("ann", "bob", "cy")])
def test_a_race_with_a_bot_in_it_rates_nobody(bots: tuple[str, ...]) -> None:
    """A bot is never rated, and the people it raced are not rated against each other either:
    the race says nothing of how people play (issue 27)."""
    made = roles(
        "secret",
        [replace(racer(player), bot=player in bots) for player in ("ann", "bob", "cy")],
        RULES,
    )
    assert made == {"ann": None, "bob": None, "cy": None}


def test_bots_race_each_other_unrated_on_any_deal() -> None:
    for deal_kind in ("secret", "number", "daily"):
        made = roles(deal_kind, [replace(racer(p), bot=True) for p in ("ann", "bob")], RULES)
        assert made == {"ann": None, "bob": None}


def test_a_racer_who_made_no_move_is_left_out_of_the_rating() -> None:
    """A resignation (or an abandoned seat, resigned for the racer) is counted among the
    moves, but is no move of one's own."""
    ann, bob = RACE_2[0], RACE_2[1]
    resigned = bob.model_copy(update={"status": "resigned", "moves": 1})
    abandoned = bob.model_copy(update={"status": "abandoned", "moves": 1})
    timed_out = bob.model_copy(update={"status": "timed_out", "moves": 0})
    both = {"bob": ESTABLISHED, "ann": ESTABLISHED}
    for idle in (resigned, abandoned, timed_out):
        assert rated_ranking([ann, idle], both) == []
    moved_once = bob.model_copy(update={"status": "resigned", "moves": 2})
    assert rated_ranking([ann, moved_once], both) == [ann, moved_once]


def test_provisional_racers_alone_are_not_rated_but_with_an_established_one_are() -> None:
    ann, bob, cy = RACE_1
    assert rated_ranking(RACE_1, {"ann": PROVISIONAL, "bob": PROVISIONAL, "cy": PROVISIONAL}) == []
    assert (
        rated_ranking(RACE_1, {"ann": PROVISIONAL, "bob": PROVISIONAL, "cy": ESTABLISHED}) == RACE_1
    )
    assert rated_ranking(RACE_1, {"ann": None, "bob": ESTABLISHED, "cy": PROVISIONAL}) == [bob, cy]
    assert rated_ranking(RACE_1, {"ann": ESTABLISHED}) == []


def test_a_race_of_one_is_not_rated() -> None:
    with pytest.raises(ValueError, match="two racers"):
        rate(RACE_1[:1], {})
