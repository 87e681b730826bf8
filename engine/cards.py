"""Cards, suits and ranks.

A card's text form is its rank then its suit: ``AS``, ``10H``, ``QD``. In two-pack games the two
equal cards are interchangeable for the rules (RULINGS, "Cards and deals"), so cards compare and
hash by rank and suit alone; each physical card still carries its pack and a stable ``id``
(0..103), which is what the no-card-lost checks and the full state use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from engine.errors import InvalidMoveError

RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
ACE, KING = 1, 13


class Suit(Enum):
    """The four suits, in the order of an ordered pack: spades, hearts, diamonds, clubs."""

    S = 0
    H = 1
    D = 2
    C = 3

    @property
    def is_red(self) -> bool:
        return self in (Suit.H, Suit.D)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Card:
    rank: int
    suit: Suit
    pack: int = field(default=0, compare=False)
    text: str = field(init=False, repr=False, compare=False)
    """The text form, made once (every card there is, is made once: ``CARDS``)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", RANK_NAMES[self.rank - 1] + self.suit.name)

    def __hash__(self) -> int:
        """The text's hash (kept by the string): cards equal by rank and suit have one text.
        Cheaper than hashing the rank and the suit (an enum) on every look-up."""
        return hash(self.text)

    @property
    def id(self) -> int:
        """Stable physical id: position in the ordered packs (see docs/deals.md)."""
        return self.pack * 52 + self.suit.value * 13 + self.rank - 1

    @property
    def is_red(self) -> bool:
        return self.suit.is_red

    def same_colour(self, other: Card) -> bool:
        return self.suit.is_red == other.suit.is_red

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``AS``, ``10H``, ``TH`` (T for ten), case-insensitively, in ASCII only (upper
        case would make ``S`` of the long s ``ſ``)."""
        cleaned = text.strip().upper()
        if len(cleaned) < 2 or not text.isascii():
            raise InvalidMoveError(f"{text!r} is not a card (write it like AS, 10H, QD)")
        rank_text, suit_text = cleaned[:-1], cleaned[-1]
        if rank_text == "T":
            rank_text = "10"
        if rank_text not in RANK_NAMES or suit_text not in Suit.__members__:
            raise InvalidMoveError(f"{text!r} is not a card (write it like AS, 10H, QD)")
        return CARDS[(RANK_NAMES.index(rank_text) + 1, Suit[suit_text], 0)]


def ordered_pack(packs: int) -> list[Card]:
    """The ordered pack(s): pack 0 then pack 1, each S, H, D, C, each A..K (docs/deals.md)."""
    return [
        CARDS[(rank, suit, pack)]
        for pack in range(packs)
        for suit in Suit
        for rank in range(ACE, KING + 1)
    ]


CARDS: dict[tuple[int, Suit, int], Card] = {
    (rank, suit, pack): Card(rank, suit, pack)
    for pack in range(2)
    for suit in Suit
    for rank in range(ACE, KING + 1)
}
CARD_BY_ID: tuple[Card, ...] = tuple(ordered_pack(2))
