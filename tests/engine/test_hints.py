"""Hints (engine.hints): the first move of a winning line, "no win", or "unknown"."""

from __future__ import annotations

from engine.hints import hint
from engine.registry import find_rule_set
from engine.solver import Budget, Result

WON_SEED, LOST_SEED = 2, 1
"""Hidden Cards deals the solver decides in milliseconds (tests/engine/solver_cases.json)."""


def test_following_every_hint_wins_a_winnable_deal() -> None:
    game = find_rule_set("hidden-cards")(WON_SEED)
    while not game.outcome().is_over:
        given = hint(game, Budget(nodes=20_000))
        assert given.result is Result.WON and given.move is not None
        assert given.move in game.legal_moves(), "a move the player can make now"
        game.play(given.move)
    assert game.outcome().status.value == "won"
    assert hint(game).message() == "the game is won"


def test_a_hint_from_a_lost_deal_says_no_win_is_possible() -> None:
    given = hint(find_rule_set("hidden-cards")(LOST_SEED), Budget(nodes=20_000))
    assert given.result is Result.LOST and given.move is None
    assert "no win is possible from here any more" in str(given)
    assert "full knowledge" in str(given)


def test_a_hint_whose_budget_runs_out_says_unknown() -> None:
    given = hint(find_rule_set("four-corners")(0), Budget(nodes=1))
    assert given.result is Result.UNKNOWN and given.move is None
    assert given.message().startswith("unknown")


def test_asking_leaves_the_game_as_it_was() -> None:
    game = find_rule_set("cornerstones-arnold")(3)
    before = game.state_key()
    hint(game, Budget(nodes=500))
    assert game.state_key() == before and not game.history
