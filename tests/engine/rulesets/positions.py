"""Rule-set tests set up their situations as positions (docs/position.md), written as text.

``set_up`` takes the piles a test is about as card text, bottom card first (``"8H 9S"``, a
face-down card marked ``#``), and the rule set's state fields, and returns the game
``from_position`` sets up from them. A position holds every card of the pack(s), so the cards a
test does not name go, in pack order (spades, hearts, diamonds, clubs, ace to king), to the
bottom of the piles ``rest`` names, each up to the count given: the situations stay short to
write, and the cards that play no part in them lie where they do not play.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, TypeVar

from engine.cards import CARDS
from engine.game import RULES_VERSION, Game
from engine.position import FACE_DOWN, POSITION_FORMAT, POSITION_VERSION

G = TypeVar("G", bound=Game)


def set_up(
    rule_set: type[G],
    piles: dict[str, str],
    state: dict[str, Any],
    *,
    rest: dict[str, int | None] | None = None,
    face_down: frozenset[str] = frozenset(),
    rules: int = RULES_VERSION,
) -> G:
    """A ``rule_set`` game at the position of ``piles`` (pile id -> cards, bottom first; piles
    not named are empty) and ``state``. The cards not named fill the piles of ``rest`` in its
    order, each up to its count (None: all that are left), under what the pile holds, face
    down on the piles of ``face_down``."""
    texts = {str(pile): "" for pile in rule_set.pile_ids} | piles
    named = Counter(
        word.removeprefix(FACE_DOWN) for text in texts.values() for word in text.split()
    )
    left = []
    for card in CARDS.values():
        if card.pack == 0:
            left += [card.text] * max(0, rule_set.packs - named[card.text])
    for pile, count in (rest or {}).items():
        taken, left = (left, []) if count is None else (left[:count], left[count:])
        mark = FACE_DOWN if pile in face_down else ""
        texts[pile] = " ".join([*(mark + text for text in taken), *texts[pile].split()])
    game = rule_set.from_position(
        {
            "format": POSITION_FORMAT,
            "version": POSITION_VERSION,
            "rule_set": rule_set.name,
            "rules": rules,
            "moves": 0,
            "resigned": False,
            "piles": texts,
            "state": state,
        }
    )
    assert isinstance(game, rule_set)
    return game
