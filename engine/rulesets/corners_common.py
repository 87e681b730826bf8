"""The table the Four Corners games share: four-corners, cornerstones and cornerstones-arnold.

Twelve piles lie in two columns of six, ``left:1..6`` and ``right:1..6`` (row 1 at the top); the
top and bottom pile of each column are its corners. Between the columns, in rows 2 to 5, lie
eight foundations: ``ace:1..4``, each built up from an ace, and ``king:1..4``, each built down
from a king, the ace and the king foundation of a row holding the same suit. ``stock`` holds the
cards not yet dealt, face down; ``turned`` holds a card just turned while it waits for the player
to choose its foundation. The games differ in their deal order, in where a turned card may go
home, and in how the piles build on each other.

In the rule modules a foundation is a number ``f``: 0..3 for ``ace:1..4``, 4..7 for
``king:1..4``, so foundation ``f`` lies in foundation row ``f % 4`` and the ace and king
foundations of row ``r`` are ``r`` and ``r + 4``.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.cards import ACE, KING, Card, Suit
from engine.moves import Move
from engine.piles import PileId, numbered
from engine.view import Event, EventKind, PileState, Slot

LEFT = numbered("left", 6)
RIGHT = numbered("right", 6)
ACES = numbered("ace", 4)
KINGS = numbered("king", 4)
FOUNDATIONS = ACES + KINGS
FOUNDATION_INDEX = {place: index for index, place in enumerate(FOUNDATIONS)}
STOCK = PileId("stock")
TURNED = PileId("turned")
TABLE_PILES = frozenset((*LEFT, *RIGHT, *FOUNDATIONS, STOCK, TURNED))
SUIT_NAMES = {Suit.S: "spades", Suit.H: "hearts", Suit.D: "diamonds", Suit.C: "clubs"}
START = (ACE,) * 4 + (KING,) * 4
STEP = (1,) * 4 + (-1,) * 4
"""Ace foundations start with an ace and build up, king foundations with a king and build down."""


def next_rank(foundation: Sequence[Card], place: int) -> int:
    """The rank foundation ``place`` takes next: its ace or king while it is empty, else one
    above (an ace foundation) or below (a king foundation) its top card; 14 or 0 once it is
    complete, which no card has."""
    return foundation[-1].rank + STEP[place] if foundation else START[place]


def is_corner(row: int) -> bool:
    """Whether the pile in ``row`` (0..5, top to bottom) of a column is a corner."""
    return row in (0, 5)


def layout(corner: str, row_suits: Sequence[Suit] = ()) -> tuple[Slot, ...]:
    """Where the piles lie: rows 0..5 top to bottom; columns 0..3 the left piles, the ace
    foundations, the king foundations, the right piles; stock and turned below the foundations.
    Corner piles are labelled with ``corner`` ("corner left:1"), foundations with the suit of
    their row when it is fixed ("ace:1 S up")."""
    slots = []
    for row in range(6):
        for pile, col in ((LEFT[row], 0), (RIGHT[row], 3)):
            slots.append(
                Slot(pile, row, col, label=f"{corner} {pile}" if is_corner(row) else str(pile))
            )
    for row in range(4):
        suit = f" {row_suits[row]}" if row_suits else ""
        slots.append(Slot(ACES[row], row + 1, 1, label=f"{ACES[row]}{suit} up"))
        slots.append(Slot(KINGS[row], row + 1, 2, label=f"{KINGS[row]}{suit} down"))
    return (*slots, Slot(STOCK, 5, 1), Slot(TURNED, 5, 2))


def gather(piles: list[list[Card]]) -> list[Card]:
    """Pick the piles up in the order given, without shuffling, and return them as a face-down
    stock to deal again: the lowest card of the first pile is dealt first (so lies last), the
    top card of the last pile dealt last. The piles are left empty."""
    gathered = [card for pile in piles for card in pile]
    for pile in piles:
        pile.clear()
    return gathered[::-1]


_DEALT: dict[tuple[Card, int, PileId], Event] = {}


def dealt_event(card: Card, pile: PileId) -> Event:
    """``8H dealt to left:3``, made once for each physical card and pile and kept: a deal
    reports every card, and a redeal deals up to a hundred in one move."""
    key = (card, card.pack, pile)
    event = _DEALT.get(key)
    if event is None:
        event = _DEALT[key] = Event(EventKind.DEALT, f"{card} dealt to {pile}", (card,))
    return event


def pile_state(pile: PileId, cards: Sequence[Card]) -> PileState:
    """A pile in the full state: all face up but the stock (the rules pages' "what you see")."""
    return PileState.closed(pile, cards) if pile == STOCK else PileState.open(pile, cards)


def unknown_pile(move: Move) -> str | None:
    """Why ``move`` names a pile that is not on this table; None if both piles are."""
    for pile in (move.source, move.target):
        if pile not in TABLE_PILES:
            return (
                f"there is no pile {pile} in this game: the piles are left:1..6 and "
                f"right:1..6, the foundations ace:1..4 and king:1..4"
            )
    return None


def mishandled(move: Move, top: Card) -> str | None:
    """Why ``move`` of ``top``, the top card of its source, is refused for how it handles the
    card, whatever the rules of the game: it names no card or another, moves several, slips the
    card under a pile, or puts it back where it is. None if it handles it right."""
    if move.card is None:
        return f"name the card you move: {top} {move.source} -> {move.target}"
    if move.card != top:
        where = (
            "the card waiting in turned"
            if move.source == TURNED
            else (f"the top card of {move.source}")
        )
        return f"{where} is {top}, not {move.card}"
    if move.count != 1:
        return "cards move one at a time"
    if move.bottom:
        return "a card goes on top of a pile, never under it"
    if move.source == move.target:
        return f"{top} is already on {move.target}"
    return None
