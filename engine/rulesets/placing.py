"""What Hidden Cards and All Fours share: heaps named by value, and placing a card under its heap.

In both games heap:n is the heap of value n (ace 1, ..., queen 12; king 13 in All Fours). A card
is *placed* when the player slips it under the heap of its value; the placed cards of a heap lie
at its bottom, the cards dealt to it and not yet taken above them. A placed card is home for
good: nothing moves it again (docs/rules/hidden-cards.md, docs/rules/all-fours.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.cards import RANK_NAMES, Card, ordered_pack
from engine.moves import Move
from engine.piles import PileId, numbered
from engine.view import Event, EventKind, Slot

HEAPS = numbered("heap", 13)
"""heap:1 .. heap:13; ``HEAPS[rank - 1]`` is the heap of a card's value."""


def deal_in_rounds(stock: Sequence[Card], piles: int) -> list[list[Card]]:
    """One card on each pile in turn, round after round, until the stock is out.

    Card ``i`` goes to pile ``i % piles``; each pile is listed bottom (first dealt) to top.
    """
    return [list(stock[index::piles]) for index in range(piles)]


def heap_slots(count: int) -> tuple[Slot, ...]:
    """Heaps 1..6 in a top row and 7..12 in a row beneath, left to right (Cadogan No. 10's two
    rows of six); a thirteenth heap, if any, below them at the left. Heaps are fanned downwards
    so every card in them can be seen; each is labelled with its value: ``heap:1 (A)``."""
    return tuple(
        Slot(HEAPS[index], index // 6, index % 6, "down", f"{HEAPS[index]} ({RANK_NAMES[index]})")
        for index in range(count)
    )


def placing(card: Card, source: PileId) -> Move:
    """The move that slips ``card`` from ``source`` under the heap of its value."""
    return Move(source, HEAPS[card.rank - 1], card, bottom=True)


_PLACED = {
    card: Event(EventKind.PLACED, f"{card} placed under {HEAPS[card.rank - 1]}", (card,))
    for card in ordered_pack(1)
}


def placed_event(card: Card) -> Event:
    """``6H placed under heap:6`` (made once per card: events are built in the hot path)."""
    return _PLACED[card]


def wrong_card(card: Card, move: Move, where: str, expected: Move) -> str | None:
    """Why ``move`` names no card or another card when the card to move is ``card``, which
    lies ``where`` (``the top card of heap:1``) and goes by ``expected``; None if it names it."""
    if move.card is None:
        return f"name the card you move: {expected}"
    if move.card != card:
        return f"{where} is {card}, not {move.card}"
    return None


def misplacement(card: Card, move: Move, source: PileId) -> str:
    """Why ``move``, which names ``card`` on ``source`` but is not the placing of it, does not
    slip it under the heap of its value."""
    home = HEAPS[card.rank - 1]
    if move.count != 1:
        return "cards are placed one at a time"
    if move.target != home:
        return f"{card} goes under {home}, the heap of its value"
    return f"{card} is slipped under {home}, not laid on top: write {placing(card, source)}"


def placed_line(placed: Sequence[int]) -> str:
    """A note counting the cards placed under each heap, which lie at its bottom:
    ``placed under: heap:1 x1, heap:6 x2`` (a person at the table remembers what they placed)."""
    counts = [f"{HEAPS[index]} x{count}" for index, count in enumerate(placed) if count]
    return "placed under: " + (", ".join(counts) or "none yet")
