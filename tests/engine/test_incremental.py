"""The legal moves a rule set works out from the last list (``Game._moves_after``) are exactly
those it lists in full (``Game._moves``), in the same order, after every move of many games:
random play to the end under every rules version, with moves undone (``pop``), games copied,
and games set up from positions on the way."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine.game import RULES_VERSIONS, Game
from engine.moves import RESIGN, Move
from engine.piles import PileId
from engine.registry import RULE_SET_NAMES, find_rule_set

GAMES = 40
MOST_MOVES = 400


def counting(rule_set: type[Game], monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts the lists the rule set's ``_moves_after`` works out and declines, patched on the
    class (an attribute on a game would be taken for rule-set state by its undo records)."""
    counts: Counter[str] = Counter()
    inner = rule_set._moves_after

    def counted(game: Game, earlier: list[Move], changed: set[PileId]) -> list[Move] | None:
        moves = inner(game, earlier, changed)
        counts["declined" if moves is None else "worked out"] += 1
        return moves

    monkeypatch.setattr(rule_set, "_moves_after", counted)
    return counts


def check_list(game: Game) -> None:
    """What the game lists now equals the rule set's full list."""
    listed = game.legal_moves()
    full = [] if game.resigned or game.is_won() else game._moves()
    assert listed == ([*full, RESIGN] if full else []), (game.history[-3:], listed, full)


@pytest.mark.parametrize("rules", RULES_VERSIONS)
@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_moves_worked_out_from_the_last_list_are_the_full_list(
    name: str, rules: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rule_set = find_rule_set(name)
    implements = rule_set._moves_after is not Game._moves_after
    counts = counting(rule_set, monkeypatch)
    rng = random.Random(f"{name}-{rules}")
    for _ in range(GAMES):
        game = rule_set(rng.randrange(1 << 32), rules=rules)
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
                check_list(game.copy())  # a copy works out its own list from the shared one
            elif roll < 0.10:
                from_position = type(game).from_position(game.position())
                check_list(from_position)
    if implements:  # the shortcut is taken on most moves
        assert counts["worked out"] > 2 * counts["declined"], counts
    else:
        assert counts["worked out"] == 0
