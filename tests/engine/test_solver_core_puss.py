"""Puss in the Corner in the compiled core (engine/solver/core/puss_in_the_corner.c): its key
and hash under the symmetries of engine/solver/symmetry.py, its bound (proofs of loss, also
while transfers can still come) and its safe moves, each held against the plain searches on
small positions (docs/solver.md, "The compiled core", "Puss in the Corner"). Node budgets only.

Skipped, with the reason, where the core is not built (the pure-Python install).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine.game import Game
from engine.registry import find_rule_set
from engine.solver import compiled
from engine.solver.search import check_line
from engine.solver.search import solve as python_solve
from engine.solver.verdict import Budget, Result

pytestmark = pytest.mark.skipif(
    compiled.CORE is None or "puss-in-the-corner" not in compiled.RULE_SETS,
    reason="the compiled core is not built (pure-Python install)",
)

NAME = "puss-in-the-corner"
RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
BLACK, RED = "SC", "HD"
VARIANTS = 4


def foundations(
    heights: tuple[int, int, int, int],
    rng: random.Random | None = None,
) -> tuple[dict[str, str], list[str]]:
    """foundation:1..4 (the aces of spades, hearts, diamonds, clubs) at ``heights``, each
    rank's card of the colour drawn from either suit (by ``rng``; the foundation's own suit
    first without one); and the cards left out, in no order."""
    piles = {}
    out = []
    for colour, (first, second) in ((BLACK, (0, 3)), (RED, (1, 2))):
        pile: dict[int, list[str]] = {
            first: [RANKS[0] + "SHDC"[first]],
            second: [RANKS[0] + "SHDC"[second]],
        }
        high, low = (first, second) if heights[first] >= heights[second] else (second, first)
        for rank in range(2, 14):
            suits = list(colour)
            if rng is not None:
                rng.shuffle(suits)
            elif "SHDC"[high] != suits[0]:
                suits.reverse()
            for place in (high, low):
                if rank <= heights[place]:
                    pile[place].append(RANKS[rank - 1] + suits.pop(0))
            out += [RANKS[rank - 1] + suit for suit in suits]
        for place in (first, second):
            piles[f"foundation:{place + 1}"] = " ".join(pile[place])
    return piles, out


def puss(
    heights: tuple[int, int, int, int],
    corners: list[list[str]],
    loose: list[str],
    *,
    number: int = 2,
    free: tuple[int, ...] = (),
    seven: str | None = None,
) -> Game:
    """A position: foundations at ``heights`` (see ``foundations``); ``corners`` bottom first;
    ``loose`` the turned card then the stock in the order they are turned (no turned card when
    transfers are open); pass ``number``; ``free`` the corners open to a transfer (1..4)."""
    return position(foundations(heights)[0], corners, loose, number, free, seven)


def position(
    piles: dict[str, str],
    corners: list[list[str]],
    loose: list[str],
    number: int,
    free: tuple[int, ...] = (),
    seven: str | None = None,
) -> Game:
    piles = dict(piles)
    for index in range(4):
        piles[f"corner:{index + 1}"] = " ".join(corners[index]) if index < len(corners) else ""
    turned = [] if free else loose[:1]
    stock = loose if free else loose[1:]
    piles["turned"] = " ".join(turned)
    piles["stock"] = " ".join("#" + card for card in reversed(stock))
    return Game.from_position(
        {
            "format": "patience-race/position",
            "version": 1,
            "rule_set": NAME,
            "rules": 2,
            "moves": 0,
            "resigned": False,
            "piles": piles,
            "state": {
                "pass": number,
                "transfer_corners": [f"corner:{i}" for i in free],
                "seven": seven,
            },
        }
    )


def walker(game: Game) -> Any:
    assert compiled.CORE is not None
    return compiled.CORE.Walker(NAME, *compiled.encode(game))


def random_puss(rng: random.Random, most: int = 8, lowest: int = 6) -> Game:
    """A small position: at most ``most`` cards left out (sevens among them when ``lowest``
    is 6), on the corners and in the stock, in the first or the second pass, now and then
    with transfers open."""
    while True:
        heights = (
            rng.randrange(lowest, 14),
            rng.randrange(lowest, 14),
            rng.randrange(lowest, 14),
            rng.randrange(lowest, 14),
        )
        piles, out = foundations(heights, rng)
        if 0 < len(out) <= most:
            break
    rng.shuffle(out)
    corners: list[list[str]] = [[], [], [], []]
    loose: list[str] = []
    for card in out:
        (rng.choice(corners) if rng.random() < 0.6 else loose).append(card)
    free: tuple[int, ...] = ()
    if rng.random() < 0.25 and any(corners):
        free = (1, 2, 3, 4) if rng.random() < 0.5 else tuple(sorted(rng.sample(range(1, 5), 2)))
        if not any(corners[index - 1] for index in free):
            free = ()
    return position(piles, corners, loose, rng.choice((1, 2)), free)


# -- the key and the hash ----------------------------------------------------------------------


def test_mirror_images_in_the_last_pass_have_one_key_and_one_hash() -> None:
    """Corners renamed (the open ones along), the two foundations of a colour swapped (their
    suits mixed: only heights count, PC-5) and the seven forgotten: one key and one hash in the
    second pass; in the first pass the corners' order counts (PC-14 gathers corner:1 first)."""
    piles = {
        "foundation:1": run("S", "S", 8),
        "foundation:4": run("C", "C", 10),
        "foundation:2": run("H", "H", 7),
        "foundation:3": run("D", "D", 11),
    }
    mirror = {
        "foundation:1": run("S", "C", 10),
        "foundation:4": run("C", "S", 8),
        "foundation:2": run("H", "D", 11),
        "foundation:3": run("D", "H", 7),
    }
    corners = [["9S", "JH"], [], ["10H", "QC", "8H"], ["KS"]]
    renamed = [corners[2], corners[3], [], corners[0]]
    loose = ["QS", "KD", "JC", "10S", "JS", "KC", "9H", "QH", "KH", "QD"]
    one = walker(position(piles, corners, loose, 2, free=(1, 3), seven="7S"))
    other = walker(position(mirror, renamed, loose, 2, free=(1, 4), seven="7H"))
    assert one.key() == other.key() and one.hash() == other.hash()
    assert one.hash() == one.rehash() and other.hash() == other.rehash()
    moved = walker(position(mirror, renamed, loose, 2, free=(2, 4)))
    assert moved.key() != one.key()
    first = walker(position(piles, corners, loose, 1))
    first_renamed = walker(position(piles, renamed, loose, 1))
    assert first.key() != first_renamed.key()


def run(ace: str, suit: str, height: int) -> str:
    """A foundation: the ace of ``ace``, then ``suit`` up to ``height``."""
    return " ".join(["A" + ace] + [rank + suit for rank in RANKS[1:height]])


def test_equal_keys_have_equal_hashes_along_random_walks() -> None:
    """Walks that favour transfers (under a heap too): the kept hash equals the one worked out
    afresh, and positions met with one key always have one hash."""
    rng = random.Random(24)
    hashes: dict[bytes, int] = {}
    for seed in range(12):
        game = find_rule_set(NAME)(seed)
        core = walker(game)
        while moves := core.moves():
            transfers = [
                i
                for i, move in enumerate(moves)
                if move[5] == 0 and 4 <= move[0] <= 7 and 4 <= move[1] <= 7
            ]
            index = (
                rng.choice(transfers)
                if transfers and rng.random() < 0.8
                else (rng.randrange(len(moves)))
            )
            core.play(index)
            assert core.hash() == core.rehash()
            assert hashes.setdefault(core.key(), core.hash()) == core.hash()


# -- the bound ---------------------------------------------------------------------------------


def test_a_card_over_both_cards_it_needs_is_dead_without_a_seven_to_come() -> None:
    """KS over both black queens, no seven to come: dead; with a seven to come, a transfer can
    dig a queen out (and the plain search wins)."""
    stuck = puss((11, 13, 13, 11), [["QS", "QC", "KS"]], ["KC"])
    assert walker(stuck).dead()
    assert python_solve(stuck, Budget(nodes=100_000), table=False).result is Result.LOST
    with_seven = puss((11, 13, 13, 6), [["QS", "QC", "KS"]], ["7C", "KC", "8C", "9C", "10C", "JC"])
    assert not walker(with_seven).dead()
    assert compiled.solve(with_seven, Budget(nodes=100_000)).result is Result.WON


def test_more_cuts_needed_than_transfers_to_come_is_dead() -> None:
    """Three heaps each with a card over both cards of a rank it needs: three cuts, and the
    one seven to come gives two transfers; the plain search agrees it is lost."""
    corners = [["8S", "8C", "9S"], ["10S", "10C", "JS"], ["QS", "QC", "KS"]]
    game = puss((6, 13, 13, 7), corners, ["7S", "9C", "JC", "KC"])
    assert walker(game).dead()
    assert compiled.solve(game, Budget(nodes=3_000_000), reductions=False).result is Result.LOST
    easier = puss(
        (6, 13, 13, 7), [corners[0], corners[1], ["QS", "KS", "QC"]], ["7S", "9C", "JC", "KC"]
    )
    assert not walker(easier).dead()
    assert compiled.solve(easier, Budget(nodes=3_000_000), reductions=False).result is Result.WON


# -- safe moves ---------------------------------------------------------------------------------


def safe_texts(game: Game) -> set[str]:
    core = walker(game)
    return {
        str(compiled.to_move(game, move))
        for index, move in enumerate(core.moves())
        if core.safe(index)
    }


def test_a_card_home_is_safe_when_the_other_foundation_of_its_colour_is_as_high() -> None:
    """9S home onto the 8 while the other black foundation is at 8 or above: safe; while it is
    lower, the other 9 might want that foundation first: not safe. Before the last pass a
    seven home is not safe (gathered, it would open transfers again)."""
    both = puss(
        (8, 13, 13, 8), [["9S"], ["10C"]], ["10S", "9C", "JS", "JC", "QS", "QC", "KS", "KC"]
    )
    assert safe_texts(both) == {"9S corner:1 -> foundation:1", "9S corner:1 -> foundation:4"}
    lower = puss(
        (8, 13, 13, 6),
        [["9S"], ["7C"]],
        ["8C", "9C", "10S", "10C", "JS", "JC", "QS", "QC", "KS", "KC"],
    )
    assert safe_texts(lower) == {"7C corner:2 -> foundation:4"}
    sevens = [["7S"], ["8C"]]
    rest = ["7C", "8S", "9S", "9C", "10S", "10C", "JS", "JC", "QS", "QC", "KS", "KC"]
    first = puss((6, 13, 13, 6), sevens, rest, number=1)
    assert safe_texts(first) == set()
    last = puss((6, 13, 13, 6), sevens, rest, number=2)
    assert "7S corner:1 -> foundation:1" in safe_texts(last)


def test_reductions_agree_with_the_plain_searches_on_small_positions() -> None:
    """Small positions in either pass, now and then with transfers open: the core with its
    bound and safe moves, the core's plain search (full table, no bound, no safe move) and,
    where it finishes, the engine's plain search (no table) give one verdict; each verdict,
    a dead position and a safe move come up, so the check is not vacuous."""
    rng = random.Random(11)
    seen = {"won": 0, "lost": 0, "dead": 0, "safe": 0, "python": 0}
    for _ in range(150):
        game = random_puss(rng)
        plain = compiled.solve(game, Budget(nodes=2_000_000), reductions=False)
        if plain.result is Result.UNKNOWN:
            continue
        reduced = compiled.solve(game, Budget(nodes=2_000_000))
        where = game.position().to_json()
        assert reduced.result is plain.result, where
        core = walker(game)
        if core.dead():
            assert plain.result is Result.LOST, where
            seen["dead"] += 1
        seen["safe"] += any(core.safe(index) for index in range(len(core.moves())))
        if reduced.result is Result.WON:
            check_line(game, reduced.line)
        python = python_solve(game, Budget(nodes=20_000), table=False)
        if python.result is not Result.UNKNOWN:
            assert python.result is plain.result, where
            seen["python"] += 1
        seen[str(plain.result)] += 1
    assert min(seen.values()) >= 5, seen


# -- move orders and whole deals ----------------------------------------------------------------


def test_every_variant_orders_a_permutation_of_the_moves_home_first() -> None:
    rng = random.Random(3)
    for seed in (3, 8):
        game = find_rule_set(NAME)(seed)
        core = walker(game)
        while moves := core.moves():
            for variant in range(VARIANTS):
                ordered, orders = core.ordered(variant)
                assert sorted(ordered, key=repr) == sorted(moves, key=repr)
                home = [
                    order
                    for move, order in zip(ordered, orders, strict=True)
                    if move[5] == 0 and move[1] < 4
                ]
                others = [
                    order
                    for move, order in zip(ordered, orders, strict=True)
                    if not (move[5] == 0 and move[1] < 4)
                ]
                assert not home or not others or max(home) < min(others)
            core.play(rng.randrange(len(moves)))


@pytest.mark.parametrize("variant", range(VARIANTS))
def test_deals_are_won_and_replayed_by_every_variant(variant: int) -> None:
    """Deals 0..5, a node budget each: won, the line replayed through the engine."""
    for seed in range(6):
        game = find_rule_set(NAME)(seed)
        verdict = compiled.solve(game, Budget(nodes=300_000), variant=variant)
        assert verdict.result is Result.WON, (variant, seed)
