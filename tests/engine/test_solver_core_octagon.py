"""The Octagon in the compiled core (engine/solver/core/octagon.c, docs/solver.md "The Octagon"):
its key and the symmetries it applies, its bounds and its safe moves, each held against a search
that uses none of them. The generic test (test_solver_core.py) already holds its moves and
positions against the engine's.

Positions are set up as text (``Game.from_position``): a few suits left out of home, their cards
on the auxiliary heaps, the waste and the stock. Node budgets only, never times.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine.game import Game
from engine.players import GreedyPlayer
from engine.registry import find_rule_set
from engine.solver import Budget, Result, compiled, ordered_moves
from engine.solver.bounds import dead_end
from engine.solver.search import solve as python_solve

pytestmark = pytest.mark.skipif(
    compiled.CORE is None or "octagon" not in compiled.RULE_SETS,
    reason="the compiled core is not built (pure-Python install)",
)
RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
SUITS = "SHDC"


def octagon(
    heights: dict[str, tuple[int, int]],
    aux: list[str],
    waste: str = "",
    stock: str | None = None,
    deal: int = 1,
) -> Game:
    """An Octagon position: each suit of ``heights`` has its two foundations at those heights
    (foundation 2*suit+1, then 2*suit+2), every other suit is home; ``aux`` up to four heaps
    (bottom first), ``waste`` bottom first, ``stock`` in the order it is turned (by default
    the cards left, by suit and rank)."""
    piles = {}
    left: list[str] = []
    for index, suit in enumerate(SUITS):
        first, second = heights.get(suit, (13, 13))
        piles[f"foundation:{2 * index + 1}"] = " ".join(rank + suit for rank in RANKS[:first])
        piles[f"foundation:{2 * index + 2}"] = " ".join(rank + suit for rank in RANKS[:second])
        left += [
            RANKS[q - 1] + suit
            for q in range(min(first, second) + 1, 14)
            for _ in range(2 - (max(first, second) >= q))
        ]
    for index in range(4):
        piles[f"aux:{index + 1}"] = aux[index] if index < len(aux) else ""
    if stock is None:
        for card in " ".join([*aux, waste]).split():
            left.remove(card)
        stock = " ".join(left)
    piles["waste"] = waste
    piles["stock"] = " ".join("#" + card for card in reversed(stock.split()))
    return Game.from_position(
        {
            "format": "patience-race/position",
            "version": 1,
            "rule_set": "octagon",
            "rules": 2,
            "moves": 0,
            "resigned": False,
            "piles": piles,
            "state": {"deal": deal},
        }
    )


def walker(game: Game) -> object:
    assert compiled.CORE is not None
    return compiled.CORE.Walker("octagon", *compiled.encode(game))


def random_position(rng: random.Random, most: int = 18, heaps_only: bool = False) -> Game | None:
    """One to three suits part way home (their foundations apart or level), their other cards
    dealt at random to the heaps, the waste and the stock (``heaps_only``: few to the heaps, so
    that heaps empty and fill); any deal."""
    heights: dict[str, tuple[int, int]] = {}
    left: list[str] = []
    for suit in rng.sample(SUITS, rng.choice([1, 1, 2, 2, 3])):
        low = rng.randrange(1, 13) if rng.random() < 0.5 else rng.randrange(6, 13)
        high = rng.randrange(low, 14)
        low = min(low, 12)
        heights[suit] = (low, high) if rng.random() < 0.5 else (high, low)
        left += [RANKS[q - 1] + suit for q in range(low + 1, 14) for _ in range(2 - (high >= q))]
    if len(left) > most:
        return None
    rng.shuffle(left)
    heaps: list[list[str]] = [[], [], [], []]
    waste: list[str] = []
    stock: list[str] = []
    places = (
        [heaps[0], heaps[1], waste, waste, stock, stock, stock]
        if heaps_only
        else [*heaps, waste, stock, stock, stock]
    )
    for card in left:
        rng.choice(places).append(card)
    if waste and not all(heaps):
        return None  # an emptied heap is filled from the waste at once (OC-12)
    try:
        return octagon(
            heights,
            [" ".join(heap) for heap in heaps],
            " ".join(waste),
            " ".join(stock),
            rng.choice([1, 2, 3, 3]),
        )
    except ValueError:
        return None


# -- the key and its symmetries ------------------------------------------------------------


def test_mirror_images_give_one_key_and_one_hash() -> None:
    """A suit's two foundations in either order, and the heaps in any order, are one position
    for the table (engine/solver/symmetry.py's ``_octagon``); a different position is not."""
    one = octagon({"S": (3, 7), "H": (5, 5)}, ["8S 9S", "QH JH", "KS", "4S 6H"], "5S 10S")
    two = octagon({"S": (7, 3), "H": (5, 5)}, ["4S 6H", "KS", "8S 9S", "QH JH"], "5S 10S")
    other = octagon({"S": (7, 3), "H": (5, 5)}, ["4S 6H", "KS", "9S 8S", "QH JH"], "5S 10S")
    first, second, third = walker(one), walker(two), walker(other)
    assert first.key() == second.key() != third.key()  # type: ignore[attr-defined]
    assert first.hash() == second.hash() == second.rehash()  # type: ignore[attr-defined]
    assert first.hash() != third.hash()  # type: ignore[attr-defined]


def test_equal_heaps_do_not_cancel_in_the_hash() -> None:
    """Heaps are combined by a sum of mixed hashes, not XOR: two equal heaps still count."""
    pair = walker(octagon({"S": (9, 9)}, ["10S", "10S", "JS QS", "KS"], "", "JS QS KS"))
    none = walker(octagon({"S": (9, 9)}, ["", "", "JS QS", "KS"], "", "10S 10S JS QS KS"))
    assert pair.hash() != none.hash()  # type: ignore[attr-defined]


def test_mirror_moves_reach_one_key() -> None:
    """A card that fits both foundations of its suit: the two moves reach one key."""
    game = octagon(
        {"S": (4, 4)}, ["6S 5S", "KS", "QS", "JS"], "", "6S 7S 7S 8S 8S 9S 9S 10S 10S JS QS KS 5S"
    )
    keys = set()
    for move in game.legal_moves():
        if str(move).startswith("5S aux:1 -> foundation:"):
            core = walker(game)
            found = [str(compiled.to_move(game, each)) for each in core.moves()]  # type: ignore[attr-defined]
            core.play(found.index(str(move)))  # type: ignore[attr-defined]
            keys.add(core.key())  # type: ignore[attr-defined]
    assert len(keys) == 1


# -- move order ----------------------------------------------------------------------------


def test_variant_0_is_the_python_search_order() -> None:
    """Variant 0 orders moves exactly as engine/solver/search.py does for the Octagon (home
    first in the engine's order, then by how many moves home follow, then redeal); each variant
    orders all the moves."""
    for seed in range(3):
        game = find_rule_set("octagon")(seed)
        player = GreedyPlayer(random.Random(seed))
        for _ in range(120):
            if game.outcome().is_over:
                break
            core = walker(game)
            for variant in range(4):
                moves, orders = core.ordered(variant)  # type: ignore[attr-defined]
                texts = [
                    str(compiled.to_move(game, move))
                    for _, _, move in sorted(  # as search.c sorts
                        zip(orders, range(len(moves)), moves, strict=True)
                    )
                ]
                if variant == 0:
                    assert texts == [str(move) for move in ordered_moves(game)]
                else:
                    assert sorted(texts) == sorted(str(move) for move in ordered_moves(game))
            game.play(player.choose_in(game))


# -- bounds --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heights", "aux", "stock", "dead"),
    [
        ((11, 11), ["QS QS KS"], "KS", True),  # KS over both queens, both foundations at the jack
        ((9, 12), ["10S QS"], "JS KS KS", True),  # QS must go on the 9; the one 10 left is under it
        ((9, 12), ["QS 10S"], "JS KS KS", False),
        ((11, 11), ["QS KS"], "QS KS", False),  # one queen under the king, the other free
        ((10, 10), ["JS QS", "JS KS"], "QS KS", True),  # a cycle through two heaps
    ],
)
def test_the_python_bounds_hold_in_the_core(
    heights: tuple[int, int], aux: list[str], stock: str, dead: bool
) -> None:
    game = octagon({"S": heights}, aux, stock=stock)
    assert dead_end(game) is dead
    assert walker(game).dead() is dead  # type: ignore[attr-defined]
    plain = compiled.solve(game, Budget(nodes=100_000), reductions=False)
    assert plain.result is (Result.LOST if dead else Result.WON)


def test_the_waste_in_its_order_in_the_last_deal() -> None:
    """The last deal: the KD lies on the waste over the 6D, and goes nowhere (the diamonds'
    lower foundation is at the 5, nothing is built on a king, and no heap can empty while the
    6D is held under it). The Python race, which takes the waste as free, sees no loss; the
    core's race through the passes does. With a deal left, the 6D comes round again first."""
    heaps = ["8D 7D", "QD", "9D", "JD"]
    last = octagon({"D": (5, 13)}, heaps, "6D KD", "10D", deal=3)
    assert not dead_end(last)
    assert walker(last).dead()  # type: ignore[attr-defined]
    assert compiled.solve(last, Budget(nodes=100_000), reductions=False).result is Result.LOST
    first = octagon({"D": (5, 13)}, heaps, "6D KD", "10D", deal=2)
    assert not walker(first).dead()  # type: ignore[attr-defined]
    assert compiled.solve(first, Budget(nodes=100_000), reductions=False).result is Result.WON


def test_a_twin_above_on_the_same_heap_waits_for_the_lower_foundation() -> None:
    """Clubs at 10 and 6: of the two jacks on aux:1, the upper goes on the 10, the lower must
    wait for the other foundation to reach the 10, which needs the 8C under them. The Python
    bounds count a suit's foundations as one pile and see no loss."""
    game = octagon({"C": (10, 6)}, ["8C JC JC", "KC QC", "9C", "10C"], "KC 7C", "QC", deal=3)
    assert not dead_end(game)
    assert walker(game).dead()  # type: ignore[attr-defined]
    assert compiled.solve(game, Budget(nodes=100_000), reductions=False).result is Result.LOST


def test_the_core_proves_at_least_what_the_python_bounds_prove() -> None:
    rng = random.Random(5)
    both = tried = 0
    while tried < 300:
        game = random_position(rng, most=30)
        if game is None:
            continue
        tried += 1
        if dead_end(game):
            both += 1
            assert walker(game).dead(), game.position().to_json()  # type: ignore[attr-defined]
    assert both >= 20


# -- the bounds and the safe moves against the plain search --------------------------------


def agree(positions: list[Game], least: int) -> Counter[str]:
    """On each position the plain core search (no bound, no safe move) decides, the search with
    them agrees for every move order, and so does the Python plain search (no table, no bound,
    the engine's order) where it decides (up to 8 cards left); a position a bound calls dead is
    lost."""
    seen: Counter[str] = Counter()
    for game in positions:
        plain = compiled.solve(game, Budget(nodes=400_000), reductions=False)
        if not plain.is_decided:
            continue
        core = walker(game)
        if core.dead():  # type: ignore[attr-defined]
            assert plain.result is Result.LOST, game.position().to_json()
            seen["dead"] += 1
        safe = [
            index
            for index in range(len(core.moves()))  # type: ignore[attr-defined]
            if core.safe(index)
        ]  # type: ignore[attr-defined]
        seen["safe"] += bool(safe)
        for variant in range(4):
            reduced = compiled.solve(game, Budget(nodes=400_000), variant=variant)
            assert reduced.result in (plain.result, Result.UNKNOWN), game.position().to_json()
        if game.foundation_count() >= 104 - 8:  # the Python plain search: the path only
            python = python_solve(game, Budget(nodes=5_000), table=False)
            assert python.result in (plain.result, Result.UNKNOWN), game.position().to_json()
            seen["python"] += python.is_decided
        seen[str(plain.result)] += 1
    assert min(seen["won"], seen["lost"], seen["dead"], seen["safe"]) >= least, seen
    return seen


def test_reductions_agree_with_the_plain_search_on_small_positions() -> None:
    rng = random.Random(57)
    positions: list[Game] = []
    while len(positions) < 120:
        game = random_position(rng)
        if game is not None and game.legal_moves():
            positions.append(game)
    agree(positions, 10)


def test_reductions_agree_where_heaps_empty_and_fill() -> None:
    """Few cards on the heaps, so that heaps empty and are filled from the waste or by the next
    card turned (OC-12, OC-13): the moves home a fill could make unsafe."""
    rng = random.Random(13)
    positions: list[Game] = []
    while len(positions) < 120:
        game = random_position(rng, most=16, heaps_only=True)
        if game is not None and game.legal_moves():
            positions.append(game)
    agree(positions, 3)


def test_reductions_agree_late_in_real_deals() -> None:
    """Real deals: positions some moves before the end of wins the core found, and the greedy
    player's games played into their last deal."""
    positions: list[Game] = []
    for seed in (1, 2, 14, 25, 36, 47, 49, 60, 89, 99):
        line = compiled.solve(find_rule_set("octagon")(seed), Budget(nodes=30_000)).line
        for back in (5, 15, 40):
            game = find_rule_set("octagon")(seed)
            for move in line[: max(len(line) - back, 0)]:
                game.play(move)
            positions.append(Game.from_position(game.position()))
    for seed in range(20):
        game = find_rule_set("octagon")(seed)
        player = GreedyPlayer(random.Random(seed))
        while not game.outcome().is_over and (game.deal < 3 or len(game.stock) > 6):
            game.play(player.choose_in(game))
        if not game.outcome().is_over:
            positions.append(Game.from_position(game.position()))
    agree(positions, 2)


# -- safe moves ----------------------------------------------------------------------------


def safe_texts(game: Game) -> set[str]:
    core = walker(game)
    moves = core.moves()  # type: ignore[attr-defined]
    return {
        str(compiled.to_move(game, move)) for index, move in enumerate(moves) if core.safe(index)
    }  # type: ignore[attr-defined]


def test_a_heap_card_home_onto_the_lower_foundation_is_safe() -> None:
    """In any deal; not onto the higher foundation, and not when it empties its heap while a
    card could fill it."""
    game = octagon({"S": (5, 7)}, ["KS 6S", "QS 8S", "9S", "10S"], "JS")
    assert safe_texts(game) == {"6S aux:1 -> foundation:1"}
    alone = octagon({"S": (5, 7)}, ["6S", "QS 8S", "9S", "10S"], "JS")
    assert safe_texts(alone) == set()


def test_a_waste_card_home_is_safe_when_no_heap_can_empty_meanwhile() -> None:
    """Home from the waste: safe when no heap can empty before the card leaves the talon. In
    the last deal the waste under it stays there meanwhile; with a deal left it comes round
    again (here the other 8S, and all follows)."""
    heaps = ["KS JS", "KS 10S", "QS 9S", "QS 9S"]
    last = octagon({"S": (7, 7)}, heaps, "10S JS 8S 8S", deal=3)
    assert "8S waste -> foundation:1" in safe_texts(last)
    assert safe_texts(last) <= {"8S waste -> foundation:1", "8S waste -> foundation:2"}
    assert not safe_texts(octagon({"S": (7, 7)}, heaps, "10S JS 8S 8S", deal=2))
    held = octagon({"S": (7, 7)}, ["8S KS JS", "KS 10S", "QS 9S", "QS 9S"], "10S JS 8S", deal=2)
    assert "8S waste -> foundation:1" in safe_texts(held)
    emptying = octagon(
        {"S": (7, 7)}, ["KS JS", "KS 10S", "QS 9S", "9S"], "10S QS JS 8S", "8S", deal=3
    )
    assert not safe_texts(emptying)


def test_a_won_deal_replays_through_the_engine() -> None:
    game = find_rule_set("octagon")(1)
    verdict = compiled.solve(game, Budget(nodes=100_000))
    assert verdict.result is Result.WON  # compiled.solve has replayed the line already
    assert python_solve(game, Budget(nodes=100_000)).result is Result.WON
