"""Hidden Cards (Lady Cadogan's Illustrated Games of Patience, No. 10).

One pack. Twelve heaps of four, dealt face up in two rows of six (heap:1..12 are the heaps of
ace..queen), and a reserve of four cards face down. Starting with the top card of heap 1, the
player slips each card taken under the heap of its value and then takes the top card of the heap
just fed. A king goes to the king row below the heaps and the player takes, blind, one of the
reserve cards instead, which is placed the same way. Won when every heap holds four cards of its
own value and the four kings lie in the king row.

Rule ids (HC-n) are those of docs/rules/hidden-cards.md; RULINGS.md section "hidden-cards".
Heap indexes 0..11 are heap:1..12. The cards placed under a heap lie at its bottom and are
counted in ``self.placed``; the cards above them are the ones dealt to it and not yet taken.
"""

from __future__ import annotations

from typing import Any, ClassVar

from engine.cards import KING, Card
from engine.game import Game
from engine.moves import Move
from engine.piles import PileId, numbered
from engine.rulesets.placing import (
    HEAPS,
    deal_in_rounds,
    heap_slots,
    misplacement,
    placed_event,
    placed_line,
    placing,
)
from engine.view import Event, PileState, Slot

VALUE_HEAPS = HEAPS[:12]
"""heap:1 (aces) .. heap:12 (queens); the kings have the king row instead (HC-1)."""
RESERVE = numbered("reserve", 4)
RESERVE_INDEX: dict[PileId | None, int] = {pile: index for index, pile in enumerate(RESERVE)}
HAND = PileId("hand")
KINGS = PileId("kings")
PILE_NAMES = "heap:1..heap:12, reserve:1..reserve:4, hand, kings"
KNOWN_PILES = frozenset({*VALUE_HEAPS, *RESERVE, HAND, KINGS})
TAKE = tuple(Move(pile, HAND) for pile in RESERVE)
"""Taking a reserve card into the hand: blind, so the move names no card (HC-8)."""


def _king_move(card: Card, source: PileId) -> Move:
    return Move(source, KINGS, card)


class HiddenCards(Game):
    name = "hidden-cards"
    title = "Hidden Cards"
    source = "Lady Adelaide Cadogan, Illustrated Games of Patience, No. 10: Hidden Cards"
    packs = 1
    total_cards = 52
    layout: ClassVar[tuple[Slot, ...]] = (
        *heap_slots(12),
        *(Slot(pile, index // 2, 6 + index % 2, "none", str(pile))
          for index, pile in enumerate(RESERVE)),
        Slot(KINGS, 2, 0, "right", "kings"),
        Slot(HAND, 2, 6, "none", "hand"),
    )

    # -- state and dealing -----------------------------------------------------------------

    def _setup(self, taken_out: list[Card], stock: list[Card]) -> list[Event]:
        rounds = deal_in_rounds(stock, 13)  # HC-2: twelve heaps, then the reserve, each round
        self.heaps: list[list[Card]] = rounds[:12]
        self.placed: list[int] = [0] * 12
        """How many cards at the bottom of each heap the player has placed there (HC-16)."""
        self.reserve: list[list[Card]] = [[card] for card in rounds[12]]
        self.hand: list[Card] = []
        """The reserve card just taken, face up, until it is placed (HC-8)."""
        self.kings: list[Card] = []
        self.current = 0
        """The heap whose top card is the next to move: heap 1 first (HC-4), then the heap
        just fed (HC-6)."""
        self.owed = False
        """A king has gone to the king row and a reserve card is to be taken (HC-8)."""
        self.home = 0
        """Cards placed under their heap plus kings in the king row (HC-15)."""
        events = [Event("dealt", f"{pile} dealt face up: {' '.join(map(str, cards))}",
                        tuple(cards)) for pile, cards in zip(VALUE_HEAPS, self.heaps, strict=True)]
        events.append(Event("dealt", "four cards dealt face down to the reserve"))
        return events

    # -- the interface -----------------------------------------------------------------------

    def _moves(self) -> list[Move]:
        if self.hand:
            return [self._placing(self.hand[0], HAND)]
        if self.owed:  # HC-8; none left: HC-13
            return [TAKE[index] for index, pile in enumerate(self.reserve) if pile]
        heap = self.heaps[self.current]
        if len(heap) == self.placed[self.current]:  # HC-12: no unplaced card to take
            return []
        return [self._placing(heap[-1], VALUE_HEAPS[self.current])]

    def _apply(self, move: Move) -> list[Event]:
        reserve = RESERVE_INDEX.get(move.source)
        if reserve is not None:  # HC-8
            card = self.reserve[reserve].pop()
            self.hand.append(card)
            self.owed = False
            return [Event("taken", f"{card} taken from {move.source} into the hand", (card,))]
        card = self.hand.pop() if move.source == HAND else self.heaps[self.current].pop()
        self.home += 1
        if card.rank == KING:  # HC-7, HC-9
            self.kings.append(card)
            self.owed = True
            return [Event("king", f"{card} laid in the king row", (card,))]
        heap = card.rank - 1  # HC-5, HC-6
        self.heaps[heap].insert(0, card)
        self.placed[heap] += 1
        self.current = heap
        return [placed_event(card)]

    def _refusal(self, move: Move) -> str:
        source, target = move.source, move.target
        if source is None or target is None:
            return (f"Hidden Cards has no {move.action}: each move places a card or takes a "
                    f"reserve card")
        for pile in (source, target):
            if pile not in KNOWN_PILES:
                return f"there is no pile {pile} in Hidden Cards ({PILE_NAMES})"
        if self.hand:
            if source != HAND:
                return f"first place {self.hand[0]}, the reserve card in the hand"
            return self._misplacement(self.hand[0], move, source)
        if self.owed:
            return self._take_refusal(move, source)
        heap = VALUE_HEAPS[self.current]
        if source in RESERVE_INDEX:
            return (f"a reserve card is taken only after a king; the next card to move is the "
                    f"top card of {heap}")
        if source == HAND:
            return "there is no card in the hand"
        if source == KINGS:
            return "a king laid in the king row stays there"
        if source != heap:
            fed = "the first heap" if self.home == 0 else "the heap just fed"
            return f"the next card to move is the top card of {heap}, {fed}"
        card = self.heaps[self.current][-1]
        if move.card is None:
            return f"name the card you move: {self._placing(card, heap)}"
        if move.card != card:
            return f"the top card of {heap} is {card}, not {move.card}"
        return self._misplacement(card, move, source)

    def _take_refusal(self, move: Move, source: PileId) -> str:
        """Why ``move`` is refused while a reserve card is owed for a king (HC-8)."""
        index = RESERVE_INDEX.get(source)
        if index is None:
            return (f"{self.kings[-1]} went to the king row: take a reserve card first "
                    f"(like reserve:1 -> hand)")
        if not self.reserve[index]:
            return f"there is no card on {source}"
        if move.target != HAND:
            return f"a reserve card is taken into the hand: write {TAKE[index]}"
        return f"a reserve card is taken blind, naming no card: write {TAKE[index]}"

    def _misplacement(self, card: Card, move: Move, source: PileId) -> str:
        """Why ``move`` does not put ``card`` where it belongs (HC-5, HC-7)."""
        if card.rank != KING:
            if move.target == KINGS:
                return f"only kings go to the king row; {card} goes under {HEAPS[card.rank - 1]}"
            return misplacement(card, move, source) or f"{move} is not a legal move now"
        if move.target != KINGS:
            return f"a king goes to the king row: write {_king_move(card, source)}"
        return f"a king is laid on the king row, by itself: write {_king_move(card, source)}"

    def _table(self) -> list[PileState]:
        return [
            *(PileState.open(pile, cards) for pile, cards in zip(VALUE_HEAPS, self.heaps,
                                                                strict=True)),
            *(PileState.closed(pile, cards) for pile, cards in zip(RESERVE, self.reserve,
                                                                  strict=True)),
            PileState.open(HAND, self.hand),
            PileState.open(KINGS, self.kings),
        ]

    def foundation_count(self) -> int:
        return self.home

    def _notes(self) -> list[str]:
        if self.hand:
            step = f"place {self.hand[0]}, taken from the reserve"
        elif self.owed:
            step = "a king went to the king row: take a reserve card (blind)"
        else:
            heap = self.heaps[self.current]
            source = VALUE_HEAPS[self.current]
            if len(heap) == self.placed[self.current]:
                step = f"{source} shows no unplaced card"
            else:
                step = f"next: {heap[-1]}, the top card of {source}"
        return [step, placed_line(self.placed)]

    def _lost_reason(self) -> str:
        if self.owed:
            return "a king came up and the reserve is empty"
        return f"{VALUE_HEAPS[self.current]}, the heap to take from, shows no unplaced card"

    def _extra_state(self) -> dict[str, Any]:
        return {"next_heap": str(VALUE_HEAPS[self.current]), "placed_under": list(self.placed),
                "reserve_owed": self.owed}

    # -- helpers ---------------------------------------------------------------------------

    @staticmethod
    def _placing(card: Card, source: PileId) -> Move:
        """The one move for ``card``: a king to the king row, any other card under its heap."""
        return _king_move(card, source) if card.rank == KING else placing(card, source)

