"""The compiled core's Four Corners (engine/solver/core/four_corners.c) beyond the generic test
that holds it against the engine move for move (test_solver_core.py): its proof of loss and its
dominance in the last deal, each against the plain search on small positions (docs/solver.md,
"The compiled core", "Four Corners"); its key, which forgets the next heap once a deal is
complete; its move orders."""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine.game import Game
from engine.registry import find_rule_set
from engine.solver import Budget, Result, compiled
from engine.solver.search import solve as python_solve

pytestmark = pytest.mark.skipif(
    "four-corners" not in compiled.RULE_SETS,
    reason="the compiled core is not built (pure-Python install)",
)
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = "SHDC"
HEAPS = [f"{side}:{row}" for side in ("left", "right") for row in range(1, 7)]
COMPLETE = (13, 1)
"""A suit all home: its ace foundation up to the king, its king foundation down to the ace."""


def card(rank: int, suit: int) -> str:
    return RANKS[rank - 1] + SUITS[suit]


def position(
    heaps: list[str],
    suits: dict[str, tuple[int, int]],
    *,
    deal: int = 3,
    next_heap: str = "left:1",
    stock: str = "",
    turned: str = "",
) -> Game:
    """A Four Corners position: ``heaps`` from left:1 on (bottom card first), and for each suit
    the top ranks of its ace and king foundations (suits not named are all home); ``stock``
    lists the next card to be turned last."""
    piles = {heap: heaps[index] if index < len(heaps) else "" for index, heap in enumerate(HEAPS)}
    for index, suit in enumerate(SUITS):
        ace, king = suits.get(suit, COMPLETE)
        piles[f"ace:{index + 1}"] = " ".join(card(rank, index) for rank in range(1, ace + 1))
        piles[f"king:{index + 1}"] = " ".join(card(rank, index) for rank in range(13, king - 1, -1))
    piles["stock"] = " ".join("#" + word for word in stock.split())
    piles["turned"] = turned
    return Game.from_position(
        {
            "format": "patience-race/position",
            "version": 1,
            "rule_set": "four-corners",
            "rules": 2,
            "moves": 0,
            "resigned": False,
            "piles": piles,
            "state": {"deal": deal, "next_heap": next_heap},
        }
    )


def walker(game: Game) -> Any:
    assert compiled.CORE is not None
    return compiled.CORE.Walker(game.name, *compiled.encode(game))


def random_last_deal(rng: random.Random, most: int) -> Game:
    """The last deal, complete, at random: for each suit at most ``most`` cards left, at
    foundation heights that may or may not have met, shuffled onto 2 to 6 heaps."""
    suits, left = {}, []
    for index, suit in enumerate(SUITS):
        out = rng.randint(0, most)
        ace = rng.randint(max(1, 13 - out), 13)
        king = 14 - min(13, 26 - out - ace)
        ace = 26 - out - (14 - king)
        suits[suit] = (ace, king)
        left += [
            card(rank, index)
            for rank in range(1, 14)
            for _ in range(2 - (rank <= ace) - (rank >= king))
        ]
    rng.shuffle(left)
    heaps: list[list[str]] = [[] for _ in HEAPS]
    used = rng.sample(range(len(HEAPS)), rng.randint(2, 6))
    for word in left:
        heaps[rng.choice(used)].append(word)
    return position([" ".join(heap) for heap in heaps], suits)


# -- the bound: a card that can never leave its heap ---------------------------------------------


@pytest.mark.parametrize(
    ("heaps", "spades", "dead", "result"),
    [
        # KS lies over the one queen left, which its ace foundation needs first: pinned.
        (["QS KS", "AS 2S"], (11, 3), True, Result.LOST),
        (["KS QS", "AS 2S"], (11, 3), False, Result.WON),
        # Across two heaps: KS waits for the QS under the AS, the AS for the 2S under the KS.
        (["2S KS", "QS AS"], (11, 3), True, Result.LOST),
        (["2S KS", "AS QS"], (11, 3), False, Result.WON),
        # Won by a move between heaps: JS onto QS, then 2S, AS, 10S home.
        (["10S AS", "2S JS", "QS", "KS"], (9, 3), False, Result.WON),
        # Lost, not pinned: KS may leave onto the QS, but then buries it (the bound lets it lean).
        (["JS AS", "2S KS", "QS"], (10, 3), False, Result.LOST),
    ],
)
def test_a_card_that_can_never_leave_its_heap_is_a_dead_end(
    heaps: list[str], spades: tuple[int, int], dead: bool, result: Result
) -> None:
    game = position(heaps, {"S": spades})
    assert walker(game).dead() is dead
    assert python_solve(game, Budget(nodes=50_000), table=False).result is result
    for reductions in (True, False):
        assert compiled.solve(game, variant=0, reductions=reductions).result is result


def test_the_bound_holds_only_in_the_last_deal() -> None:
    heaps = ["QS KS", "AS 2S"]
    assert walker(position(heaps, {"S": (11, 3)}, deal=3)).dead()
    assert not walker(position(heaps, {"S": (11, 3)}, deal=2)).dead()


# -- the dominance: a card home alone once its suit's foundations have met ----------------------


def test_a_move_home_is_played_alone_once_the_foundations_of_its_suit_have_met() -> None:
    spades = " ".join(card(rank, 0) for rank in range(1, 8))
    met = walker(position(["AS QS", "2S KS"], {"S": (11, 3)}))  # ace wants QS, king 2S
    apart = walker(position([spades, "KS QS JS 10S 9S", "8S", "8S"], {"S": (7, 9)}))  # both 8S
    before = walker(position(["AS QS", "2S KS"], {"S": (11, 3)}, deal=2))
    game = find_rule_set("four-corners")(0)
    for core, safe in ((met, True), (apart, False), (before, False)):
        moves = [compiled.to_move(game, move) for move in core.moves()]
        home = [
            index
            for index, move in enumerate(moves)
            if move.target is not None and move.target.kind in ("ace", "king")
        ]
        assert home and len(home) < len(moves)
        for index in range(len(moves)):
            assert core.safe(index) is (safe and index in home)


def test_a_move_home_before_the_foundations_meet_may_lose_the_win() -> None:
    """Why the dominance waits for the foundations to meet. Here spades' ace foundation wants
    the 5S, its king foundation the 7S (two ranks away), and two 5S top heaps: the one of left:1
    sent home loses, the one of left:2 wins. So "a card goes to its ace foundation when the king
    foundation of its suit is at least two ranks away" would lose this win."""
    game = position(["2S 7S 6S QS 7S 5S", "AS 4S JS 6S 5S", "KS 3S 9S 8S 10S"], {"S": (4, 8)})
    assert python_solve(game, Budget(nodes=10_000), table=False).result is Result.WON
    after = game.copy()
    after.play(after.legal_move_named("5S left:1 -> ace:1"))  # type: ignore[arg-type]
    assert python_solve(after, Budget(nodes=10_000), table=False).result is Result.LOST
    core = walker(game)
    assert not any(core.safe(index) for index in range(len(core.moves())))
    assert compiled.solve(game, variant=0).result is Result.WON


def test_the_bound_and_the_dominance_agree_with_the_plain_search() -> None:
    """Random small positions of the last deal: a position the bound calls lost is lost for
    the plain search (the engine's moves, no table, no bound, no dominance) and the core's
    search with and without its reductions agrees with the plain search wherever it decides."""
    rng = random.Random(24)
    seen: dict[tuple[bool, Result], int] = {}
    for _ in range(120):
        game = random_last_deal(rng, 3)
        dead = walker(game).dead()
        plain = python_solve(game, Budget(nodes=3_000), table=False)
        reduced = compiled.solve(game, variant=0)
        full = compiled.solve(game, variant=0, reductions=False)
        assert reduced.result is full.result
        if dead:
            assert reduced.result is Result.LOST
        if plain.is_decided:
            assert plain.result is reduced.result
            seen[dead, plain.result] = seen.get((dead, plain.result), 0) + 1
    assert seen.get((True, Result.LOST), 0) >= 15, seen
    assert seen.get((False, Result.LOST), 0) >= 2, seen  # lost, but no card pinned
    assert seen.get((False, Result.WON), 0) >= 30, seen


def test_the_reductions_agree_with_the_plain_core_search_on_larger_positions() -> None:
    """Larger positions, beyond the plain Python search: the core's search with its bound and
    dominance and without them (the table of positions seen only) give the same verdicts."""
    rng = random.Random(7)
    results = {Result.WON: 0, Result.LOST: 0}
    for _ in range(150):
        game = random_last_deal(rng, 6)
        reduced = compiled.solve(game, Budget(nodes=300_000), variant=0)
        full = compiled.solve(game, Budget(nodes=300_000), variant=0, reductions=False)
        if reduced.is_decided and full.is_decided:
            assert reduced.result is full.result
            results[full.result] += 1
    assert min(results.values()) >= 20, results


# -- the key -------------------------------------------------------------------------------------


def test_the_next_heap_counts_only_while_a_deal_is_in_progress() -> None:
    heaps = ["AS QS", "2S"]
    complete = [
        walker(position(heaps + ["KS"], {"S": (11, 3)}, next_heap=heap))
        for heap in ("left:1", "right:4")
    ]
    assert complete[0].key() == complete[1].key()
    assert complete[0].hash() == complete[1].hash()
    dealing = [
        walker(position(heaps, {"S": (11, 3)}, next_heap=heap, turned="KS"))
        for heap in ("left:1", "right:6")
    ]
    assert dealing[0].key() != dealing[1].key()


def test_a_move_runs_on_through_a_forced_redeal_and_its_deal() -> None:
    """The position after a move is the engine's, forced steps included: here the move home
    leaves nothing but a redeal (FC-14), whose deal sends every card home as it is turned for
    the corner left:1 (FC-5, FC-7): won."""
    game = position(["QS", "KS 2S AS"], {"S": (11, 3)}, deal=1)
    core = walker(game)
    texts = [str(compiled.to_move(game, move)) for move in core.moves()]
    move = "QS left:1 -> ace:1"
    assert move in texts
    game.play(game.legal_move_named(move))  # type: ignore[arg-type]
    core.play(texts.index(move))
    assert game.deal == 2
    assert core.won()
    assert compiled.decode(game, *core.export()) == compiled.engine_terms(
        game.position(), game.pile_ids
    )


def test_a_position_whose_heap_could_outgrow_the_core_is_refused() -> None:
    """A heap keeps at most 40 cards in the core: enough for any position of a game (at most 9
    dealt and 26 of one suit built on them), not for any position one can write down."""
    tall = "2S 4S 6S 8S 10S QS 2S 4S 6S 8S 10S QS 3S 5S 7S 9S"
    with pytest.raises(ValueError, match="grow"):
        walker(position([tall, "3S 5S 7S 9S JS JS AS KS"], {"S": (1, 13)}))
    walker(position([tall[3:], "2S 3S 5S 7S 9S JS JS AS KS"], {"S": (1, 13)}))


# -- move orders ---------------------------------------------------------------------------------


def test_every_order_tries_moves_home_first_and_the_redeal_last_but_variant_one() -> None:
    game = find_rule_set("four-corners")(3)
    core = walker(game)
    rng = random.Random(3)
    checked = 0
    for _ in range(200):
        moves = core.moves()
        if not moves:
            break
        for variant in range(3):
            ordered, orders = core.ordered(variant)
            ranked = sorted(zip(orders, range(len(ordered)), ordered, strict=True))
            kinds = [
                "redeal" if move[5] else "home" if move[1] >= 12 else "heap"
                for _, _, move in ranked
            ]
            if "home" in kinds:
                assert kinds[0] == "home"
            if "redeal" in kinds and variant != 1:
                assert kinds[-1] == "redeal"
            checked += len(kinds)
        index = rng.randrange(len(moves))
        game.play(compiled.to_move(game, moves[index]))
        core.play(index)
    assert checked > 100
