"""What every rule set gets from the ``Game`` base class."""

from __future__ import annotations

import random

import pytest

from engine.moves import REDEALS, RESIGN, Move
from engine.players import GreedyPlayer
from engine.registry import RULE_SET_NAMES, find_rule_set
from engine.view import EventKind, Status


@pytest.mark.parametrize("rule_set", RULE_SET_NAMES)
def test_a_game_dealt_without_its_opening_events_is_the_same_game(rule_set: str) -> None:
    kept = find_rule_set(rule_set)(11)
    light = find_rule_set(rule_set)(11, keep_opening=False)
    assert kept.opening_events and light.opening_events == []
    assert light.table() == kept.table() and light.view() == kept.view()
    assert light.legal_moves() == kept.legal_moves()


@pytest.mark.parametrize("rule_set", RULE_SET_NAMES)
def test_changed_piles_are_those_changed_since_last_asked(rule_set: str) -> None:
    """Moves made without asking add up; asking again at once finds nothing new."""
    game = find_rule_set(rule_set)(11)
    dealt = game.table()
    assert game.changed_piles() == []
    for _ in range(3):
        if not game.outcome().is_over:
            game.play(game.legal_moves()[0])
    now = game.table()
    assert game.changed_piles() == [
        pile for old, pile in zip(dealt, now, strict=True) if old != pile
    ]
    assert game.changed_piles() == []


@pytest.mark.parametrize("rule_set", RULE_SET_NAMES)
def test_a_legal_move_is_found_by_its_text_and_nothing_else_is(rule_set: str) -> None:
    """``legal_move_named`` gives the listed move itself for its exact text; a text written
    otherwise (another case), or of a move not listed, gives None, and ``Move.parse`` is left
    to read it."""
    game = find_rule_set(rule_set)(5)
    chooser = random.Random(5)
    for _ in range(40):
        legal = game.legal_moves()
        if not legal:
            break
        for move in legal:
            assert game.legal_move_named(str(move)) is move
            if str(move) != str(move).lower():
                assert game.legal_move_named(str(move).lower()) is None
                assert Move.parse(str(move).lower()) == move
        assert game.legal_move_named("AS nowhere:9 -> heap:1") is None
        game.play(chooser.choice([move for move in legal if move != RESIGN] or legal))
    if game.legal_moves():
        game.play(RESIGN)
    assert game.legal_move_named("resign") is None


@pytest.mark.parametrize("rule_set", RULE_SET_NAMES)
def test_pop_undoes_a_resignation(rule_set: str) -> None:
    game = find_rule_set(rule_set)(11)
    before = game.position()
    game.play(RESIGN)
    assert game.outcome().status is Status.RESIGNED
    assert game.pop() == RESIGN
    assert game.position() == before and game.outcome().status is Status.IN_PROGRESS


@pytest.mark.parametrize("rule_set", ["four-corners", "puss-in-the-corner", "octagon"])
def test_pop_undoes_the_forced_redeal_that_followed_a_move(rule_set: str) -> None:
    """RULINGS principle 6: a move that leaves only the redeal brings it in the same step."""
    for seed in range(200):
        game = find_rule_set(rule_set)(seed)
        player = GreedyPlayer(random.Random(seed))
        while not game.outcome().is_over:
            before, legal = game.position(), game.legal_moves()
            move = player.choose_in(game)
            events = game.play(move)
            if move not in REDEALS and EventKind.REDEAL in [event.kind for event in events]:
                assert game.pop() == move
                assert game.position() == before and game.legal_moves() == legal
                return
    pytest.fail(f"no forced redeal in 200 {rule_set} deals")


def test_a_copy_and_its_original_undo_on_their_own() -> None:
    game = find_rule_set("octagon")(11)
    for _ in range(5):
        game.play(game.legal_moves()[0])
    clone = game.copy()
    at_five = game.position()
    while clone.history:
        clone.pop()
    assert (
        game.position() == at_five and clone.position() == find_rule_set("octagon")(11).position()
    )
    game.pop()
    assert clone.position() != game.position()


def test_a_game_made_without_undo_keeps_no_records() -> None:
    game = find_rule_set("hidden-cards")(11, undo=False)
    game.play(game.legal_moves()[0])
    with pytest.raises(IndexError, match="undo=False"):
        game.pop()
