"""The legal moves a rule set works out from the last list (``Game._moves_after``) are exactly
those it lists in full (``Game._moves``), in the same order, after every move of many games:
random play to the end under every rules version, with moves undone (``pop``), games copied,
and games set up from positions on the way."""

from __future__ import annotations

import random

import pytest

from engine.game import RULES_VERSIONS, Game
from engine.moves import RESIGN
from engine.registry import RULE_SET_NAMES, find_rule_set

GAMES = 40
MOST_MOVES = 400


class Counting:
    """Wraps a game's ``_moves_after`` to count the lists it worked out."""

    def __init__(self, game: Game) -> None:
        self.worked_out = 0
        self.declined = 0
        inner = game._moves_after

        def counted(earlier, changed):  # type: ignore[no-untyped-def]
            moves = inner(earlier, changed)
            if moves is None:
                self.declined += 1
            else:
                self.worked_out += 1
            return moves

        game._moves_after = counted  # type: ignore[method-assign]


def check_list(game: Game) -> None:
    """What the game lists now equals the rule set's full list."""
    listed = game.legal_moves()
    full = [] if game.resigned or game.is_won() else game._moves()
    assert listed == ([*full, RESIGN] if full else []), (game.history[-3:], listed, full)


@pytest.mark.parametrize("rules", RULES_VERSIONS)
@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_moves_worked_out_from_the_last_list_are_the_full_list(name: str, rules: int) -> None:
    rule_set = find_rule_set(name)
    rng = random.Random(f"{name}-{rules}")
    worked_out = declined = 0
    for _ in range(GAMES):
        game = rule_set(rng.randrange(1 << 32), rules=rules)
        counting = Counting(game)
        for _ in range(MOST_MOVES):
            check_list(game)
            moves = [move for move in game.legal_moves() if not move.is_resign]
            if not moves:
                break
            game.play(rng.choice(moves))
            roll = rng.random()
            if roll < 0.05 and len(game.history) > 1:
                game.pop()  # the list is then the one the undo record kept
                check_list(game)
            elif roll < 0.08:
                copy = game.copy()  # a copy works out its own list from the shared one
                del copy.__dict__["_moves_after"]  # (not the counter, bound to ``game``)
                check_list(copy)
            elif roll < 0.10:
                from_position = type(game).from_position(game.position())
                check_list(from_position)
        worked_out += counting.worked_out
        declined += counting.declined
    if rule_set._moves_after is not Game._moves_after:
        # A rule set that works its lists out so takes the shortcut on most moves.
        assert worked_out > 2 * declined, (worked_out, declined)
    else:
        assert worked_out == 0
