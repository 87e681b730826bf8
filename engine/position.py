"""Positions: a game's complete state as a value with a JSON form and a text form, both ways.

What FEN is to chess (docs/position.md): a test states the situation it needs instead of
searching for a seed that reaches it, and a solver or a bug report writes down where it is::

    {"format": "patience-race/position", "version": 1, "rule_set": "octagon", "rules": 2,
     "moves": 0, "resigned": false,
     "piles": {"foundation:1": "AS", ..., "stock": "#3C #KD ...", "waste": ""},
     "state": {"deal": 1}}

A pile is its cards bottom to top, separated by spaces, each face-down card marked ``#``.
``state`` holds what the piles do not show, named by each rule set. This module reads and writes
the form; ``Game.position`` and ``Game.from_position`` (engine/game.py) check it against a rule
set: every pile there, every card of the pack(s) once per pack, the state's fields and ranges, and
face-up flags as the rules show them. A position holds face-down cards: it is for solvers, tests
and debugging, never for a player's eyes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.cards import Card, Suit
from engine.errors import EngineError, InvalidPositionError
from engine.piles import PileId
from engine.view import PileState

POSITION_FORMAT = "patience-race/position"
POSITION_VERSION = 1
FACE_DOWN = "#"
"""The mark before a face-down card in a pile's text: ``#8H``."""
_FIELDS = ("format", "version", "rule_set", "rules", "moves", "resigned", "piles", "state")


@dataclass(frozen=True)
class Position:
    """A game's complete state: every pile with every card and its face-up flag, in table
    order, and the rule set's counters (``state``, JSON values). ``moves`` counts the moves made
    to reach it, as ``Game.progress`` does. Two positions are equal when their cards are, pack
    aside: the two equal cards of two packs are interchangeable (RULINGS, "Cards and deals")."""

    rule_set: str
    rules: int
    moves: int
    resigned: bool
    piles: tuple[PileState, ...]
    state: dict[str, Any]

    def pile(self, pile: PileId) -> PileState:
        for state in self.piles:
            if state.pile == pile:
                return state
        raise KeyError(str(pile))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": POSITION_FORMAT,
            "version": POSITION_VERSION,
            "rule_set": self.rule_set,
            "rules": self.rules,
            "moves": self.moves,
            "resigned": self.resigned,
            "piles": {pile.pile.text: _pile_text(pile) for pile in self.piles},
            "state": self.state,
        }

    def __str__(self) -> str:
        return json.dumps(self.to_json())

    @classmethod
    def parse(cls, text: str) -> Position:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise InvalidPositionError(f"a position is a JSON object: {error}") from None
        return cls.from_json(data)

    @classmethod
    def from_json(cls, data: Any) -> Position:
        """Read the form; what it says is checked against its rule set by
        ``Game.from_position``."""
        if not isinstance(data, dict):
            raise InvalidPositionError("a position is a JSON object")
        if data.get("format") != POSITION_FORMAT or data.get("version") != POSITION_VERSION:
            raise InvalidPositionError(
                f"not a position: expected format {POSITION_FORMAT!r} version {POSITION_VERSION}"
            )
        missing = [name for name in _FIELDS if name not in data]
        unknown = sorted(set(data) - set(_FIELDS))
        if missing or unknown:
            raise InvalidPositionError(
                f"a position has the fields {', '.join(_FIELDS)} "
                f"(missing: {', '.join(missing) or 'none'}; unknown: "
                f"{', '.join(unknown) or 'none'})"
            )
        rule_set, rules, moves = data["rule_set"], data["rules"], data["moves"]
        resigned, piles, state = data["resigned"], data["piles"], data["state"]
        if not (
            isinstance(rule_set, str)
            and _is_int(rules)
            and _is_int(moves)
            and moves >= 0
            and isinstance(resigned, bool)
        ):
            raise InvalidPositionError(
                "rule_set is a text, rules and moves whole numbers "
                "(moves 0 or more), resigned true or false"
            )
        if not isinstance(piles, dict) or not isinstance(state, dict):
            raise InvalidPositionError("piles and state are JSON objects")
        return cls(
            rule_set,
            rules,
            moves,
            resigned,
            tuple(_read_pile(name, text) for name, text in piles.items()),
            state,
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _pile_text(pile: PileState) -> str:
    return " ".join(
        card.text if up else FACE_DOWN + card.text
        for card, up in zip(pile.cards, pile.face_up, strict=True)
    )


def _read_pile(name: Any, text: Any) -> PileState:
    try:
        pile = PileId.parse(name)
    except EngineError as error:
        raise InvalidPositionError(f"piles: {error}") from None
    if not isinstance(text, str):
        raise InvalidPositionError(f'piles: {pile} is a text of cards, like "AS 2S #KD"')
    cards, face_up = [], []
    for word in text.split():
        down = word.startswith(FACE_DOWN)
        try:
            cards.append(Card.parse(word[1:] if down else word))
        except EngineError as error:
            raise InvalidPositionError(f"piles: {pile}: {error}") from None
        face_up.append(not down)
    return PileState(pile, tuple(cards), tuple(face_up))


class StateReader:
    """Reads a position's ``state`` for a rule set's ``Game._restore``: each getter takes one
    field and refuses a missing one, or one of the wrong type or out of range; ``finish``
    refuses fields no getter took."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.state = state
        self.taken: set[str] = set()

    def _take(self, key: str) -> Any:
        if key not in self.state:
            raise InvalidPositionError(f"state: {key} is missing")
        self.taken.add(key)
        return self.state[key]

    def number(self, key: str, low: int, high: int) -> int:
        value = self._take(key)
        if not (_is_int(value) and low <= value <= high):
            raise InvalidPositionError(
                f"state: {key} is a whole number {low}..{high}, not {value!r}"
            )
        return int(value)

    def numbers(self, key: str, highs: Sequence[int]) -> list[int]:
        """One whole number 0..``highs[i]`` for each ``i``."""
        value = self._take(key)
        if not (
            isinstance(value, list)
            and len(value) == len(highs)
            and all(_is_int(item) for item in value)
        ):
            raise InvalidPositionError(f"state: {key} is a list of {len(highs)} whole numbers")
        for index, (item, high) in enumerate(zip(value, highs, strict=True)):
            if not 0 <= item <= high:
                raise InvalidPositionError(f"state: {key}[{index}] is 0..{high}, not {item}")
        return list(value)

    def flag(self, key: str) -> bool:
        value = self._take(key)
        if not isinstance(value, bool):
            raise InvalidPositionError(f"state: {key} is true or false, not {value!r}")
        return value

    def pile(self, key: str, choices: Sequence[PileId]) -> int:
        """The index in ``choices`` of the pile named."""
        return self._index(key, self._take(key), choices)

    def piles(self, key: str, choices: Sequence[PileId]) -> list[int]:
        value = self._take(key)
        if not isinstance(value, list):
            raise InvalidPositionError(f"state: {key} is a list of piles")
        indexes = [self._index(key, item, choices) for item in value]
        if len(set(indexes)) != len(indexes):
            raise InvalidPositionError(f"state: {key} names a pile twice")
        return indexes

    @staticmethod
    def _index(key: str, value: Any, choices: Sequence[PileId]) -> int:
        names = [pile.text for pile in choices]
        if value not in names:
            raise InvalidPositionError(f"state: {key} is one of {', '.join(names)}, not {value!r}")
        return names.index(value)

    def card(self, key: str) -> Card | None:
        """A card's text, or null."""
        value = self._take(key)
        if value is None:
            return None
        try:
            return Card.parse(value if isinstance(value, str) else "")
        except EngineError:
            raise InvalidPositionError(
                f"state: {key} is a card (like 7H) or null, not {value!r}"
            ) from None

    def suits(self, key: str, count: int) -> list[Suit | None]:
        """``count`` suit letters (S, H, D, C), each or null."""
        value = self._take(key)
        if not (
            isinstance(value, list)
            and len(value) == count
            and all(
                item is None or (isinstance(item, str) and item in Suit.__members__)
                for item in value
            )
        ):
            raise InvalidPositionError(
                f"state: {key} is a list of {count} suits (S, H, D, C) or nulls"
            )
        return [None if item is None else Suit[item] for item in value]

    def finish(self) -> None:
        unknown = sorted(set(self.state) - self.taken)
        if unknown:
            raise InvalidPositionError(f"state: unknown fields {', '.join(unknown)}")


def at_most(pile: PileId, cards: Sequence[Card], most: int) -> None:
    """Refuse a pile that holds more cards than the rules ever put there."""
    if len(cards) > most:
        raise InvalidPositionError(
            f"piles: {pile} holds at most {most} card{'s' if most != 1 else ''}, not {len(cards)}"
        )


def starts_with_ace(pile: PileId, cards: Sequence[Card]) -> None:
    """Refuse a foundation that the rules start with an ace but that has none at its bottom."""
    if not cards or cards[0].rank != 1:
        raise InvalidPositionError(
            f"piles: {pile} is a foundation laid out with an ace at its bottom"
        )
