"""The solver's proofs of loss without search (engine/solver/bounds.py), against the plain
search that proves nothing without searching: on small Octagon positions made for the purpose
(every suit home but spades, a few spades left on the auxiliary heaps, the waste and the stock),
a position the bound calls lost is lost for the plain search too, and the search with the bound
agrees with the plain search on every position both decide."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from engine.game import Game
from engine.registry import find_rule_set
from engine.solver import Budget, Result, check_line
from engine.solver.bounds import dead_end, octagon_reach
from engine.solver.bounds import octagon_buried as simple_bound
from engine.solver.search import solve

RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]


def octagon(low: int, high: int, aux: list[str], waste: str = "", stock: str = "") -> Game:
    """An Octagon position: spades foundations at ranks ``low`` and ``high``, every other suit
    home; the spades left on ``aux`` (up to four heaps, bottom first), ``waste``, ``stock``."""
    piles = {
        "foundation:1": " ".join(rank + "S" for rank in RANKS[:low]),
        "foundation:2": " ".join(rank + "S" for rank in RANKS[:high]),
    }
    for index, suit in enumerate("HDC"):
        piles[f"foundation:{3 + 2 * index}"] = " ".join(rank + suit for rank in RANKS)
        piles[f"foundation:{4 + 2 * index}"] = piles[f"foundation:{3 + 2 * index}"]
    for index in range(4):
        piles[f"aux:{index + 1}"] = aux[index] if index < len(aux) else ""
    piles["waste"] = waste
    piles["stock"] = " ".join("#" + card for card in stock.split())
    return Game.from_position(
        {
            "format": "patience-race/position",
            "version": 1,
            "rule_set": "octagon",
            "rules": 2,
            "moves": 0,
            "resigned": False,
            "piles": piles,
            "state": {"deal": 1},
        }
    )


@pytest.mark.parametrize(
    ("low", "high", "aux", "stock", "dead"),
    [
        (11, 11, ["QS QS KS"], "KS", True),  # KS over both queens, both foundations at the jack
        (9, 12, ["10S QS"], "JS KS KS", True),  # QS must go on the 9; the one 10 left is under it
        (9, 12, ["QS 10S"], "JS KS KS", False),
        (11, 11, ["QS KS"], "QS KS", False),  # one queen under the king, the other free
    ],
)
def test_a_card_over_every_card_it_needs_is_a_dead_end(
    low: int, high: int, aux: list[str], stock: str, dead: bool
) -> None:
    game = octagon(low, high, aux, stock=stock)
    plain = solve(game, Budget(nodes=100_000), table=False)
    assert dead_end(game) is dead
    assert plain.result is (Result.LOST if dead else Result.WON)
    assert solve(game).result is plain.result


def random_position(rng: random.Random) -> Game | None:
    if rng.random() < 0.7:
        low, high = sorted(rng.sample(range(6, 13), 2))
    else:
        low = high = rng.randrange(6, 13)
    left = [f"{RANKS[q - 1]}S" for q in range(low + 1, 14) for _ in range(2 - (high >= q))]
    rng.shuffle(left)
    heaps: list[list[str]] = [[], [], [], []]
    waste: list[str] = []
    stock: list[str] = []
    for card in left:
        rng.choice([heaps[0], heaps[1], heaps[2], heaps[3], waste, stock, stock]).append(card)
    if waste and not all(heaps):
        return None
    try:
        return octagon(
            low, high, [" ".join(heap) for heap in heaps], " ".join(waste), " ".join(stock)
        )
    except ValueError:
        return None


def agrees_with_the_plain_search(
    positions: Callable[[random.Random], Game | None], seed: int
) -> None:
    """On 80 random positions the plain search decides (no table, no bound), the solver with
    its bounds gives the same verdict; every position a bound calls dead is lost; and each
    verdict (and a dead end) comes up at least 3 times, so the check is not vacuous."""
    rng = random.Random(seed)
    seen = {"dead": 0, "won": 0, "lost": 0}
    tried = 0
    while tried < 80:
        game = positions(rng)
        if game is None:
            continue
        tried += 1
        plain = solve(game, Budget(nodes=30_000), table=False)
        if not plain.is_decided:
            continue
        bounded = solve(game, Budget(nodes=300_000))
        assert bounded.result is plain.result, game.position().to_json()
        if dead_end(game):
            assert plain.result is Result.LOST
            seen["dead"] += 1
        if bounded.result is Result.WON:
            check_line(game, bounded.line)
        seen[str(plain.result)] += 1
    assert min(seen.values()) >= 3, seen


def test_the_bound_never_calls_a_position_lost_that_the_plain_search_wins() -> None:
    agrees_with_the_plain_search(random_position, 57)


def test_octagon_deals_proved_lost_at_once_find_no_win_without_the_bound() -> None:
    """Whole deals: the few of deals 0..199 the bound calls lost at the deal are searched
    without it for a while; no win turns up (a weak check: it cannot prove them lost)."""
    dead = [seed for seed in range(200) if dead_end(find_rule_set("octagon")(seed))]
    assert dead
    for seed in dead[:4]:
        game = find_rule_set("octagon")(seed)
        assert solve(game).result is Result.LOST
        assert solve(game, Budget(nodes=3000), bounds=False).result is not Result.WON


def test_a_cycle_through_two_heaps_is_a_dead_end() -> None:
    """aux:1 holds a JS under a QS, aux:2 the other JS under a KS: a jack goes home only after
    the QS or the KS, and each of those needs a jack first. No heap shows it alone (the simple
    bound says nothing); the race to the foundations (``octagon_reach``) does."""
    stuck = octagon(10, 10, ["JS QS", "JS KS"], stock="QS KS")
    assert octagon_reach(stuck) and not simple_bound(stuck)
    assert solve(stuck, Budget(nodes=100_000), table=False).result is Result.LOST
    verdict = solve(stuck)
    assert verdict.result is Result.LOST and verdict.effort.nodes == 0
    free = octagon(10, 10, ["JS QS", "QS KS"], stock="JS KS")
    assert not octagon_reach(free) and not dead_end(free)
    assert solve(free, Budget(nodes=100_000), table=False).result is Result.WON


def puss(
    heights: tuple[int, int, int, int],
    corners: list[list[str]],
    loose: list[str],
    free: tuple[int, ...] = (),
) -> Game:
    """A Puss in the Corner position in the second pass: foundation:1..4 (spades, hearts,
    diamonds, clubs aces) built in their own suit to ``heights``; ``corners`` bottom first;
    ``loose`` the turned card then the stock, in the order they are turned."""
    piles = {
        f"foundation:{index + 1}": " ".join(rank + suit for rank in RANKS[:height])
        for index, (suit, height) in enumerate(zip("SHDC", heights, strict=True))
    }
    for index in range(4):
        piles[f"corner:{index + 1}"] = " ".join(corners[index]) if index < len(corners) else ""
    piles["turned"] = loose[0] if loose else ""
    piles["stock"] = " ".join("#" + card for card in reversed(loose[1:]))
    return Game.from_position(
        {
            "format": "patience-race/position",
            "version": 1,
            "rule_set": "puss-in-the-corner",
            "rules": 2,
            "moves": 0,
            "resigned": False,
            "piles": piles,
            "state": {"pass": 2, "transfer_corners": list(free), "seven": None},
        }
    )


def random_puss(rng: random.Random) -> Game | None:
    heights = tuple(rng.randrange(8, 14) for _ in range(4))
    left = [
        f"{RANKS[q - 1]}{suit}"
        for suit, height in zip("SHDC", heights, strict=True)
        for q in range(height + 1, 14)
    ]
    rng.shuffle(left)
    corners: list[list[str]] = [[], [], [], []]
    loose: list[str] = []
    for card in left:
        (rng.choice(corners) if rng.random() < 0.6 else loose).append(card)
    try:
        return puss(heights, corners, loose)  # type: ignore[arg-type]
    except ValueError:
        return None


def test_puss_bound_agrees_with_the_plain_search_in_the_last_pass() -> None:
    agrees_with_the_plain_search(random_puss, 11)


def test_puss_bound_waits_for_the_last_seven() -> None:
    """KS on a corner over both queens of its colour (QS, QC): dead, unless a seven is still to
    come, whose transfers could dig a queen out."""
    stuck = puss((11, 13, 13, 11), [["QS", "QC", "KS"]], ["KC"])
    assert dead_end(stuck)
    assert solve(stuck, Budget(nodes=100_000), table=False).result is Result.LOST
    with_seven = puss((11, 13, 13, 6), [["QS", "QC", "KS"]], ["7C", "KC", "8C", "9C", "10C", "JC"])
    assert not dead_end(with_seven)
    assert solve(with_seven, Budget(nodes=100_000)).result is Result.WON
