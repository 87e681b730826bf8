"""Hints (engine.hints): the first move of a winning line, "no win", or "unknown"."""

from __future__ import annotations

from engine.hints import Foresight, hint, verdict_for_log
from engine.moves import Move
from engine.registry import find_rule_set
from engine.replay import MoveLog
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


def test_foresight_a_loss_holds_for_every_later_position_and_a_line_while_followed() -> None:
    seen = Foresight()
    assert seen.known([]) is None
    seen.learn(["a", "b"], Result.WON, ["c", "d"])
    assert [seen.known(moves) for moves in (["a", "b"], ["a", "b", "c"], ["a", "b", "c", "d"])] == [
        Result.WON
    ] * 3
    assert seen.known(["a", "b", "x"]) is None, "off the line: nothing known"
    assert seen.known(["a"]) is None, "before the line: nothing known"
    seen.learn(["a", "b", "x"], Result.LOST)
    assert seen.known(["a", "b", "x", "y", "z"]) is Result.LOST
    assert seen.known(["a", "b", "c"]) is Result.WON
    seen.learn(["a", "b", "x", "y"], Result.UNKNOWN)
    assert seen.known(["a", "b", "x", "y"]) is Result.LOST


def test_verdict_for_log_gives_the_line_the_server_keeps_to_itself() -> None:
    game = find_rule_set("hidden-cards")(WON_SEED)
    game.play(game.legal_moves()[0])
    found = verdict_for_log(MoveLog.of(game).to_json(), 5.0)
    assert found["result"] == "won" and found["line"]
    for move in found["line"]:
        game.play(Move.parse(move))
    assert game.outcome().status.value == "won"
    assert verdict_for_log(
        MoveLog.of(find_rule_set("hidden-cards")(LOST_SEED)).to_json(), None
    ) == {"result": "lost", "line": []}
