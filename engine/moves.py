"""Moves: small hashable values with a text form and a JSON form, both ways.

Text grammar (docs/moves.md)::

    move      = action | transfer
    action    = "resign" | "redeal" | "turn" | "afresh"
    transfer  = [card] ["x" count] source "->" target ["bottom"]

Examples: ``8H heap:3 -> foundation:2``, ``7S x3 corner:1 -> corner:4 bottom`` (the seven and
the two cards above it, order kept, put under corner 4), ``reserve:2 -> hand`` (a blind pick: no
card is named because none is known), ``redeal``. In a transfer the card named is the deepest
card moved, the one a player's hand would grab.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from engine.cards import Card
from engine.errors import InvalidMoveError
from engine.piles import PileId

ACTIONS = ("resign", "redeal", "turn", "afresh")
MOST_CARDS = 104
"""Two packs: no move moves more cards."""
_COUNT = re.compile(r"[xX]([0-9]+)")
"""``x3``: in ASCII digits (``str.isdigit`` and ``int`` also take ``²``, ``٣`` and the like)."""


@dataclass(frozen=True, slots=True)
class Move:
    source: PileId | None = None
    target: PileId | None = None
    card: Card | None = None
    count: int = 1
    bottom: bool = False
    action: str | None = None
    _text: str | None = field(default=None, init=False, repr=False, compare=False)
    """The text form, written on first use and kept: a server sends the text of every legal
    move after every move, and rule sets make the moves they list once and reuse them."""

    def __post_init__(self) -> None:
        if self.action is not None:
            if self.action not in ACTIONS:
                raise InvalidMoveError(f"{self.action!r} is not an action ({', '.join(ACTIONS)})")
            if self.source or self.target or self.card or self.count != 1 or self.bottom:
                raise InvalidMoveError(f"the action {self.action!r} takes no card or piles")
        elif self.source is None or self.target is None:
            raise InvalidMoveError("a move names a source and a target pile, or an action")
        elif not 1 <= self.count <= MOST_CARDS:
            raise InvalidMoveError(f"a move moves 1 to {MOST_CARDS} cards")

    @classmethod
    def act(cls, action: str) -> Move:
        return cls(action=action)

    @property
    def is_resign(self) -> bool:
        return self.action == "resign"

    def __str__(self) -> str:
        text = self._text
        if text is None:
            text = self._write()
            object.__setattr__(self, "_text", text)
        return text

    def _write(self) -> str:
        if self.action is not None:
            return self.action
        parts = []
        if self.card is not None:
            parts.append(str(self.card))
        if self.count != 1:
            parts.append(f"x{self.count}")
        parts += [str(self.source), "->", str(self.target)]
        if self.bottom:
            parts.append("bottom")
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Move:
        words = text.split()
        if len(words) == 1 and words[0].lower() in ACTIONS:
            return cls.act(words[0].lower())
        if "->" not in words:
            raise InvalidMoveError(
                f"{text!r} is not a move: write 'CARD SOURCE -> TARGET' (like '8H heap:3 -> "
                f"foundation:2') or one of {', '.join(ACTIONS)}"
            )
        arrow = words.index("->")
        before, after = words[:arrow], words[arrow + 1 :]
        bottom = bool(after) and after[-1].lower() == "bottom"
        if bottom:
            after = after[:-1]
        if len(before) not in (1, 2, 3) or len(after) != 1:
            raise InvalidMoveError(f"{text!r} is not a move: expected [CARD] [xN] SOURCE -> TARGET")
        source = PileId.parse(before[-1])
        card: Card | None = None
        count = 1
        for word in before[:-1]:
            if counted := _COUNT.fullmatch(word):
                digits = counted[1].lstrip("0") or "0"
                count = int(digits) if len(digits) <= len(str(MOST_CARDS)) else MOST_CARDS + 1
            elif card is None:
                card = Card.parse(word)
            else:
                raise InvalidMoveError(f"{text!r} is not a move: {word!r} is out of place")
        return cls(source, PileId.parse(after[0]), card, count, bottom)

    def to_json(self) -> dict[str, Any]:
        if self.action is not None:
            return {"action": self.action}
        data: dict[str, Any] = {"from": str(self.source), "to": str(self.target)}
        if self.card is not None:
            data["card"] = str(self.card)
        if self.count != 1:
            data["count"] = self.count
        if self.bottom:
            data["bottom"] = True
        return data

    @classmethod
    def from_json(cls, data: Any) -> Move:
        if isinstance(data, str):
            return cls.parse(data)
        if not isinstance(data, dict):
            raise InvalidMoveError("a move is a text like '8H heap:3 -> foundation:2' or an object")
        unknown = set(data) - {"action", "from", "to", "card", "count", "bottom"}
        if unknown:
            raise InvalidMoveError(f"unknown move fields: {', '.join(sorted(unknown))}")
        if "action" in data:
            if set(data) != {"action"} or not isinstance(data["action"], str):
                raise InvalidMoveError('an action move is just {"action": NAME}')
            return cls.act(data["action"])
        try:
            source, target = data["from"], data["to"]
            count = data.get("count", 1)
            bottom = data.get("bottom", False)
            card = data.get("card")
        except KeyError as missing:
            raise InvalidMoveError(f"a move needs the field {missing}") from None
        if not (
            isinstance(source, str)
            and isinstance(target, str)
            and (card is None or isinstance(card, str))
            and isinstance(count, int)
            and not isinstance(count, bool)
            and isinstance(bottom, bool)
        ):
            raise InvalidMoveError(
                "move fields: from, to and card are texts, count a whole "
                "number, bottom true or false"
            )
        return cls(
            PileId.parse(source),
            PileId.parse(target),
            None if card is None else Card.parse(card),
            count,
            bottom,
        )


_TRANSFERS: dict[tuple[str, str, str, int, bool], Move] = {}


def transfer(
    source: PileId, target: PileId, card: Card, count: int = 1, bottom: bool = False
) -> Move:
    """``Move(source, target, card, count, bottom)``, made once and reused (with its text): rule
    sets that list many such moves after every move take them from here. The two equal cards of
    two packs share their moves, as they share their text."""
    key = (source.text, target.text, card.text, count, bottom)
    move = _TRANSFERS.get(key)
    if move is None:
        move = _TRANSFERS[key] = Move(source, target, card, count, bottom)
    return move


RESIGN = Move.act("resign")
REDEAL = Move.act("redeal")
TURN = Move.act("turn")
AFRESH = Move.act("afresh")
REDEALS = (REDEAL, AFRESH)
"""The moves that deal the cards again: gathering and dealing (Four Corners, Cornerstones
(Arnold), Puss in the Corner, the Octagon's waste turned over) and All Fours' beginning afresh."""
