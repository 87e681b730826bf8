"""What a player sees, what happened, how far they are: small values with text and JSON forms.

The full state of a game (``PileState``, with hidden cards) never leaves the engine except through
``Game.full_state`` for debugging and verification and ``Game.position`` for solvers and tests
(docs/position.md). ``View`` is built from it by one function,
``PileState.seen``, so no rule set can leak a face-down card into a view by accident.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any

from engine.cards import Card
from engine.moves import Move
from engine.piles import PileId


class Status(Enum):
    IN_PROGRESS = "in_progress"
    WON = "won"
    LOST = "lost"
    RESIGNED = "resigned"

    def __str__(self) -> str:
        return self.value.replace("_", " ")


@dataclass(frozen=True, slots=True)
class Outcome:
    status: Status
    reason: str

    @property
    def is_over(self) -> bool:
        return self.status is not Status.IN_PROGRESS

    def __str__(self) -> str:
        return f"{self.status}: {self.reason}" if self.reason else str(self.status)

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status.value, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Progress:
    """Cards on foundations (or, in the placing games, cards in their place) out of the total."""

    on_foundations: int
    total: int
    moves: int

    def __str__(self) -> str:
        return f"{self.on_foundations}/{self.total} cards home after {self.moves} moves"

    def to_json(self) -> dict[str, int]:
        return {"on_foundations": self.on_foundations, "total": self.total, "moves": self.moves}


class EventKind(StrEnum):
    """What an event says happened: one kind for one thing in every rule set (docs/moves.md,
    "Events"). Kinds are for programs (tests, a client that animates); a person reads the
    event's text."""

    LAYOUT = "layout"
    """Cards taken out of the pack and laid out before the deal (the aces as foundations)."""
    DEALT = "dealt"
    """The engine dealt cards to a pile."""
    TURNED = "turned"
    """The engine turned a face-down card face up: from the stock, or on a heap."""
    CHOOSE = "choose"
    """The card just turned fits more than one foundation: the player chooses."""
    DEAL_COMPLETE = "deal-complete"
    """The stock is dealt out."""
    HOME = "home"
    """Cards went to a foundation, by a move or by the engine."""
    MOVED = "moved"
    """The player moved cards onto another pile that is not a foundation."""
    PLACED = "placed"
    """A card went to the one place it belongs in the placing games: under the heap of its
    value, or a king to the king row."""
    TAKEN = "taken"
    """A face-down reserve card was taken into the hand."""
    FILLED = "filled"
    """An emptied pile was filled by the engine."""
    SEVEN = "seven"
    """A seven was placed: transfers between corner heaps are open."""
    DECLINED = "declined"
    """The player declined the transfers still open."""
    REDEAL = "redeal"
    """The cards were gathered (or the waste turned over) to be dealt again."""
    AFRESH = "afresh"
    """All Fours: the player began afresh from the first heap not yet complete."""
    STANDSTILL = "standstill"
    """All Fours: the heap to turn from has no face-down card left."""
    RESIGNED = "resigned"


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened on the table, as a person would say it ("8H dealt to heap:3").

    ``cards`` lists the cards the event shows; they are face up by then (tests check this).
    """

    kind: EventKind
    text: str
    cards: tuple[Card, ...] = ()

    def __str__(self) -> str:
        return self.text

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "text": self.text}


@dataclass(frozen=True, slots=True)
class PileState:
    """A pile in the full state: its cards bottom to top, and which of them are face up."""

    pile: PileId
    cards: tuple[Card, ...]
    face_up: tuple[bool, ...]

    @classmethod
    def open(cls, pile: PileId, cards: Sequence[Card]) -> PileState:
        return cls(pile, tuple(cards), (True,) * len(cards))

    @classmethod
    def closed(cls, pile: PileId, cards: Sequence[Card]) -> PileState:
        return cls(pile, tuple(cards), (False,) * len(cards))

    def seen(self) -> PileView:
        # Most piles are all face up or all face down (a stock of eighty cards, say): those
        # need no card-by-card look, and the server makes views of changed piles on every move.
        if all(self.face_up):
            return PileView(self.pile, self.cards)
        if not any(self.face_up):
            return PileView(self.pile, (None,) * len(self.cards))
        return PileView(
            self.pile,
            tuple(card if up else None for card, up in zip(self.cards, self.face_up, strict=True)),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "pile": str(self.pile),
            "cards": [
                {"card": str(card), "id": card.id, "face_up": up}
                for card, up in zip(self.cards, self.face_up, strict=True)
            ],
        }


@dataclass(frozen=True, slots=True)
class PileView:
    """A pile as a player sees it: bottom to top, ``None`` for each face-down card."""

    pile: PileId
    cards: tuple[Card | None, ...]

    @property
    def top(self) -> Card | None:
        return self.cards[-1] if self.cards else None

    def __str__(self) -> str:
        shown = " ".join("##" if card is None else str(card) for card in self.cards)
        return f"{self.pile}: {shown or '-'}"

    def to_json(self) -> list[str | None]:
        # ``card.text``, not ``str(card)``: the server writes the piles a move changed, a stock
        # of eighty cards among them, after every move.
        return [None if card is None else card.text for card in self.cards]


@dataclass(frozen=True, slots=True)
class View:
    rule_set: str
    piles: tuple[PileView, ...]
    legal_moves: tuple[Move, ...]
    outcome: Outcome
    progress: Progress
    notes: tuple[str, ...]

    def pile(self, pile: PileId) -> PileView:
        for pile_view in self.piles:
            if pile_view.pile == pile:
                return pile_view
        raise KeyError(str(pile))

    def visible_cards(self) -> list[Card]:
        return [card for pile in self.piles for card in pile.cards if card is not None]

    def __str__(self) -> str:
        lines = [str(pile) for pile in self.piles]
        lines += list(self.notes)
        lines.append(f"{self.progress}; {self.outcome}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "rule_set": self.rule_set,
            "piles": {str(pile.pile): pile.to_json() for pile in self.piles},
            "legal_moves": [str(move) for move in self.legal_moves],
            "outcome": self.outcome.to_json(),
            "progress": self.progress.to_json(),
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True)
class Slot:
    """Where a pile lies on the table, for clients that draw it: a grid cell, and how its cards
    are spread ("none": squared, only the top shows; "down"/"right": fanned that way)."""

    pile: PileId
    row: int
    col: int
    spread: str = "none"
    label: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "pile": str(self.pile),
            "row": self.row,
            "col": self.col,
            "spread": self.spread,
            "label": self.label,
        }
