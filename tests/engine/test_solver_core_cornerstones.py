"""The compiled core's Cornerstones and Cornerstones (Arnold) (engine/solver/core/cornerstones.c,
docs/solver.md "Cornerstones and Cornerstones (Arnold)"): its proof of loss (the relaxed race)
and its safe move (a pinned card home) against the plain searches on small last-deal positions
made for the purpose, its key, its forced redeal, and its move orders. Node budgets only.

Skipped, with the reason, where the core is not built (the pure-Python install).
"""

from __future__ import annotations

import random

import pytest

from engine.game import Game
from engine.registry import find_rule_set
from engine.solver import Budget, Result, compiled
from engine.solver.search import ordered_moves
from engine.solver.search import solve as python_solve

pytestmark = pytest.mark.skipif(
    compiled.CORE is None, reason="the compiled core is not built (pure-Python install)"
)
RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
PILES = [f"right:{row}" for row in range(1, 7)] + [f"left:{row}" for row in range(1, 7)]
RULE_SETS = ["cornerstones", "cornerstones-arnold"]


def last_deal(rule_set: str, lines: list[tuple[str, int, int]], piles: dict[str, str]) -> Game:
    """A position of the last deal, complete: line n holds ``lines[n-1]`` = (suit, cards on its
    ace place, cards on its king place); ``piles`` the cards left, bottom first."""
    table = {pile: piles.get(pile, "") for pile in PILES}
    for line, (suit, ace, king) in enumerate(lines, start=1):
        table[f"ace:{line}"] = " ".join(rank + suit for rank in RANKS[:ace])
        table[f"king:{line}"] = " ".join(rank + suit for rank in RANKS[::-1][:king])
    table["stock"] = table["turned"] = ""
    redeals = 2 if rule_set == "cornerstones-arnold" else 0
    return Game.from_position(
        {
            "format": "patience-race/position",
            "version": 1,
            "rule_set": rule_set,
            "rules": 2,
            "moves": 0,
            "resigned": False,
            "piles": table,
            "state": {
                "next_pile": "right:1",
                "redeals_used": redeals,
                "line_suits": [suit for suit, _, _ in lines],
            },
        }
    )


def random_last_deal(rng: random.Random, rule_set: str, cards: int, piles: int) -> Game:
    """``cards`` cards left (at most 24 of a suit), dealt at random onto ``piles`` piles."""
    counts = [0] * 4
    for _ in range(cards):
        counts[rng.choice([suit for suit in range(4) if counts[suit] < 24])] += 1
    heights = []
    for count in counts:  # ace + king = 26 - count, each 1..13
        ace = rng.randint(max(1, 13 - count), min(13, 25 - count))
        heights.append((ace, 26 - count - ace))
    suits = rng.sample("SHDC", 4)
    left = [
        RANKS[rank - 1] + suit
        for suit, (ace, king) in zip(suits, heights, strict=True)
        for rank in range(1, 14)
        for _ in range(2 - (rank <= ace) - (rank >= 14 - king))
    ]
    rng.shuffle(left)
    chosen = rng.sample(PILES, piles)
    layout: dict[str, list[str]] = {pile: [] for pile in chosen}
    for card in left:
        layout[rng.choice(chosen)].append(card)
    return last_deal(
        rule_set,
        [(suit, ace, king) for suit, (ace, king) in zip(suits, heights, strict=True)],
        {pile: " ".join(cards) for pile, cards in layout.items()},
    )


def walker(game: Game) -> object:
    assert compiled.CORE is not None
    return compiled.CORE.Walker(game.name, *compiled.encode(game))


def core_result(game: Game, reductions: bool) -> Result:
    return compiled.solve(game, Budget(nodes=2_000_000), reductions=reductions).result


# -- the relaxed race, a proof of loss -----------------------------------------------------


def done(suit: str) -> tuple[str, int, int]:
    """A line whose suit is all home."""
    return suit, 13, 13


@pytest.mark.parametrize(
    ("lines", "piles", "dead"),
    [
        # Hearts need the 2 before the ace: the ace on the 2, nowhere else to go.
        ([done("C"), ("H", 13, 11), done("D"), done("S")], {"right:4": "2H AH"}, True),
        ([done("C"), ("H", 13, 11), done("D"), done("S")], {"right:4": "AH 2H"}, False),
        # The 10 of hearts is wanted first, under the king, and no queen is left to put the king on.
        ([done("C"), ("H", 9, 13), done("D"), done("S")], {"left:1": "10H JH QH KH"}, True),
        # Each king waits for the queen under the other: neither moves, and the 9 and the jack
        # the foundations want lie beneath them.
        (
            [done("C"), ("H", 10, 13), done("D"), ("S", 8, 13)],
            {"right:3": "JS QH KS", "left:3": "9S 10S JH QS KH"},
            True,
        ),
        (
            [done("C"), ("H", 10, 13), done("D"), ("S", 8, 13)],
            {"right:3": "KS QS JS QH", "left:3": "KH JH 10S 9S"},
            False,
        ),
    ],
)
def test_cs_a_position_the_relaxed_race_cannot_finish_is_lost(
    lines: list[tuple[str, int, int]], piles: dict[str, str], dead: bool
) -> None:
    for rule_set in RULE_SETS:
        game = last_deal(rule_set, lines, piles)
        assert walker(game).dead() is dead  # type: ignore[attr-defined]
        plain = python_solve(game, Budget(nodes=200_000), table=False).result
        assert plain is (Result.LOST if dead else Result.WON)
        assert core_result(game, True) is plain


def test_cs_no_bound_before_the_last_deal() -> None:
    game = last_deal(
        "cornerstones-arnold",
        [done("C"), ("H", 13, 11), done("D"), done("S")],
        {"right:4": "2H AH"},
    )
    position = game.position().to_json()
    position["state"]["redeals_used"] = 1  # a redeal left: it deals the two cards again
    earlier = Game.from_position(position)
    assert not walker(earlier).dead()  # type: ignore[attr-defined]
    assert python_solve(earlier, Budget(nodes=10_000), table=False).result is Result.WON


# -- the bound and the safe move against the plain searches -------------------------------


def test_cs_reductions_agree_with_the_plain_searches_on_small_last_deals() -> None:
    """Random last-deal positions of 3 to 10 cards: the search with the bound and the safe move,
    the compiled search without them and the Python plain search (no table, the engine's
    order, where it finishes) give one verdict."""
    rng = random.Random(24)
    seen = {Result.WON: 0, Result.LOST: 0}
    dead = safe = 0
    for _ in range(80):
        game = random_last_deal(rng, rng.choice(RULE_SETS), rng.randint(3, 10), rng.randint(1, 4))
        reduced, full = core_result(game, True), core_result(game, False)
        plain = python_solve(game, Budget(nodes=20_000), table=False).result
        assert reduced is full, game.position().to_json()
        assert plain in (full, Result.UNKNOWN), game.position().to_json()
        seen[full] += 1
        core = walker(game)
        dead += core.dead()  # type: ignore[attr-defined]
        safe += any(
            core.safe(index)  # type: ignore[attr-defined]
            for index in range(len(core.moves()))
        )  # type: ignore[attr-defined]
    assert min(seen.values()) >= 15 and dead >= 10 and safe >= 5, (seen, dead, safe)


def test_cs_each_proof_and_each_safe_move_holds_on_larger_last_deals() -> None:
    """Random last-deal positions of 6 to 22 cards on 1 to 6 piles: where the race says lost, the
    search without reductions finds no win; after a safe move, a won position is still won."""
    rng = random.Random(2024)
    proved = kept = 0
    for _ in range(200):
        game = random_last_deal(rng, rng.choice(RULE_SETS), rng.randint(6, 22), rng.randint(1, 6))
        core = walker(game)
        full = core_result(game, False)
        if full is Result.UNKNOWN:  # rare: too big for the budget
            continue
        if core.dead():  # type: ignore[attr-defined]
            assert full is Result.LOST, game.position().to_json()
            proved += 1
        moves = core.moves()  # type: ignore[attr-defined]
        for index, move in enumerate(moves):
            if core.safe(index) and full is Result.WON:  # type: ignore[attr-defined]
                after = game.copy()
                after.play(compiled.to_move(game, move))
                assert core_result(after, False) is Result.WON, game.position().to_json()
                kept += 1
    assert proved >= 40 and kept >= 10, (proved, kept)


CLUBS_DOWN = [("C", 13, 8), done("H"), done("D"), done("S")]
"""Clubs crossed: the king place wants the 5, 4, 3, 2 and ace left, in that order."""
CLUBS_IN = [("C", 4, 8), done("H"), done("D"), done("S")]
"""Clubs not met: the ace place wants a 5, the king place a 5 too."""
LATE_CLUBS = "AC 2C 3C 7C 8C 9C 10C JC QC KC"


@pytest.mark.parametrize(
    ("lines", "piles", "move", "safe"),
    [
        # The 5 is pinned (the one 4 and the one 6 left lie beneath it), its twin home.
        (CLUBS_DOWN, {"right:2": "4C 5C", "left:5": "AC 2C 3C"}, "5C right:2 -> king:1", True),
        # The 4 lies elsewhere: something may go on the 5.
        (CLUBS_DOWN, {"right:2": "5C", "left:5": "AC 2C 3C 4C"}, "5C right:2 -> king:1", False),
        # Its twin lies beneath it: safe; on another pile, it may go home first: not safe.
        (CLUBS_IN, {"right:2": "5C 4C 6C 5C", "left:5": LATE_CLUBS}, "5C right:2 -> ace:1", True),
        (
            CLUBS_IN,
            {"right:2": "4C 6C 5C", "left:5": "5C " + LATE_CLUBS},
            "5C right:2 -> ace:1",
            False,
        ),
    ],
)
def test_cs_a_pinned_card_goes_home_alone(
    lines: list[tuple[str, int, int]], piles: dict[str, str], move: str, safe: bool
) -> None:
    for rule_set in RULE_SETS:
        game = last_deal(rule_set, lines, piles)
        core = walker(game)
        moves = [str(compiled.to_move(game, move)) for move in core.moves()]  # type: ignore[attr-defined]
        assert core.safe(moves.index(move)) is safe  # type: ignore[attr-defined]


def test_cs_no_safe_move_before_the_last_deal() -> None:
    game = last_deal("cornerstones-arnold", CLUBS_DOWN, {"right:2": "4C 5C", "left:5": "AC 2C 3C"})
    position = game.position().to_json()
    position["state"]["redeals_used"] = 1
    core = walker(Game.from_position(position))
    assert not any(
        core.safe(index)  # type: ignore[attr-defined]
        for index in range(len(core.moves()))
    )  # type: ignore[attr-defined]


# -- the key, the forced redeal, the move orders ------------------------------------------


def test_cs_the_key_is_the_position() -> None:
    """Two orders of the same moves reach one key and hash; another position has another key."""
    game = find_rule_set("cornerstones")(3)
    while game.turned:  # type: ignore[attr-defined]
        game.play(game.legal_moves()[0])
    core = walker(game)
    moves = [compiled.to_move(game, move) for move in core.moves()]  # type: ignore[attr-defined]
    pairs = [
        (a, b)
        for a in moves
        for b in moves
        if {a.source, a.target}.isdisjoint({b.source, b.target})
    ]
    assert pairs
    first, second = pairs[0]
    keys = []
    for line in ((first, second), (second, first)):
        replay = game.copy()
        for move in line:
            replay.play(move)
        core = walker(replay)
        keys.append((core.key(), core.hash(), core.rehash()))  # type: ignore[attr-defined]
    assert keys[0] == keys[1] and keys[0][1] == keys[0][2]
    once = game.copy()
    once.play(first)
    assert walker(once).key() != keys[0][0]  # type: ignore[attr-defined]


def test_ca_a_redeal_that_is_all_there_is_left_to_do_is_made_in_the_same_move() -> None:
    """CA-2: after the last play of a deal, the core deals again within the move, as the engine."""
    game = last_deal(
        "cornerstones-arnold",
        [done("C"), ("H", 12, 11), done("D"), done("S")],
        {"right:4": "2H AH", "left:2": "KH"},
    )
    position = game.position().to_json()
    position["state"]["redeals_used"] = 0
    game = Game.from_position(position)
    core = walker(game)
    moves = [str(compiled.to_move(game, move)) for move in core.moves()]  # type: ignore[attr-defined]
    move = "KH left:2 -> ace:2"  # then the ace is on the 2 it waits for, and nothing moves
    game.play(game.legal_move_named(move))  # type: ignore[arg-type]
    core.play(moves.index(move))  # type: ignore[attr-defined]
    assert game.redeals_used == 1 and game.is_won()  # type: ignore[attr-defined]
    assert compiled.decode(game, *core.export()) == compiled.engine_terms(  # type: ignore[attr-defined]
        game.position(), game.pile_ids
    )


@pytest.mark.parametrize("rule_set", RULE_SETS)
def test_cs_variant_1_is_the_python_search_order(rule_set: str) -> None:
    """Variant 1 orders the moves as engine/solver/search.py does (``ordered_moves``)."""
    rng = random.Random(5)
    for seed in range(3):
        game = find_rule_set(rule_set)(seed)
        core = walker(game)
        for _ in range(150):
            moves = core.moves()  # type: ignore[attr-defined]
            if not moves:
                break
            ordered, orders = core.ordered(1)  # type: ignore[attr-defined]
            ranked = [
                move
                for _, move in sorted(zip(orders, ordered, strict=True), key=lambda pair: pair[0])
            ]
            assert [str(compiled.to_move(game, move)) for move in ranked] == [
                str(move) for move in ordered_moves(game)
            ]
            index = rng.randrange(len(moves))
            game.play(compiled.to_move(game, moves[index]))
            core.play(index)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("rule_set", "seed", "variant", "nodes"),
    [
        ("cornerstones", 10, 0, 932),
        ("cornerstones", 0, 1, 406),
        ("cornerstones-arnold", 0, 0, 3240),
        ("cornerstones-arnold", 8, 2, 167),
    ],
)
def test_cs_deals_won_in_a_pinned_number_of_nodes(
    rule_set: str, seed: int, variant: int, nodes: int
) -> None:
    """Deterministic given the order: the same win in the same number of nodes everywhere
    (the line is replayed through the engine by ``compiled.solve``)."""
    verdict = compiled.solve(find_rule_set(rule_set)(seed), Budget(nodes=100_000), variant=variant)
    assert verdict.result is Result.WON
    assert verdict.effort.nodes == nodes
