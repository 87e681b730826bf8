"""The compiled core (engine/solver/core/) held against the engine, the way chess engines are
pinned by perft counts: over thousands of positions reached by random and greedy play in each
rule set the core knows, across deals and redeals, the core's legal moves equal the engine's
move for move (as text), the position after each move equals the engine's (its cards pile by
pile and its state, through the engine's position form), the hash kept by the moves equals the
hash worked out afresh, and the core says won exactly when the engine does. A position loaded
in the middle of a game (from the engine's position) walks on the same.

Skipped, with the reason, where the core is not built (the pure-Python install).
"""

from __future__ import annotations

import random

import pytest

from engine.game import Game
from engine.players import GreedyPlayer, RandomPlayer
from engine.registry import find_rule_set
from engine.solver import compiled
from engine.view import EventKind, Status

pytestmark = pytest.mark.skipif(
    compiled.CORE is None, reason="the compiled core is not built (pure-Python install)"
)
RULE_SETS = sorted(compiled.RULE_SETS)
DEALS = 24
STEPS = 400
"""Per deal and player: enough to reach the last deal in every heap game."""


def walker(game: Game) -> object:
    assert compiled.CORE is not None
    return compiled.CORE.Walker(game.name, *compiled.encode(game))


def check_same(game: Game, core: object) -> list[str]:
    """Assert the core's position and moves are the engine's; return the core's move texts."""
    engine_moves = sorted(str(move) for move in game.legal_moves() if not move.is_resign)
    core_moves = [str(compiled.to_move(game, move)) for move in core.moves()]  # type: ignore[attr-defined]
    where = f"{game.name} seed {game.seed} after {len(game.history)} moves"
    assert sorted(core_moves) == engine_moves, where
    assert compiled.decode(game, *core.export()) == compiled.engine_terms(  # type: ignore[attr-defined]
        game.position(), game.pile_ids
    ), where
    assert core.hash() == core.rehash(), where  # type: ignore[attr-defined]
    assert core.won() == (game.outcome().status is Status.WON), where  # type: ignore[attr-defined]
    return core_moves


@pytest.mark.parametrize("rule_set", RULE_SETS)
@pytest.mark.parametrize("player", [RandomPlayer, GreedyPlayer], ids=["random", "greedy"])
def test_the_core_moves_as_the_engine_does(rule_set: str, player: type) -> None:
    positions = 0
    redeals = 0
    for seed in range(DEALS):
        game = find_rule_set(rule_set)(seed)
        core = walker(game)
        chooser = player(random.Random(seed))
        for step in range(STEPS):
            core_moves = check_same(game, core)
            positions += 1
            if not core_moves:
                break
            move = chooser.choose_in(game)
            if move.is_resign:
                break
            events = game.play(move)
            redeals += any(event.kind is EventKind.REDEAL for event in events)  # forced ones too
            core.play(core_moves.index(str(move)))  # type: ignore[attr-defined]
            if step % 97 == 96:  # load the engine's position afresh mid-game, and walk on
                core = walker(game)
    assert positions >= DEALS * 20
    assert redeals > 0 or rule_set == "cornerstones", (  # CS-21: Cornerstones has none
        "the walks never reached a redeal"
    )


@pytest.mark.parametrize("rule_set", RULE_SETS)
def test_every_move_order_is_a_permutation_of_the_moves(rule_set: str) -> None:
    game = find_rule_set(rule_set)(7)
    core = walker(game)
    rng = random.Random(7)
    for _ in range(150):
        moves = core.moves()  # type: ignore[attr-defined]
        if not moves:
            break
        for variant in range(3):
            ordered, _ = core.ordered(variant)  # type: ignore[attr-defined]
            assert sorted(ordered, key=repr) == sorted(moves, key=repr)  # redeal: None piles
        index = rng.randrange(len(moves))
        game.play(compiled.to_move(game, moves[index]))
        core.play(index)  # type: ignore[attr-defined]
