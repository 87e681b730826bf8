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
from engine.position import StateReader, at_most
from engine.rulesets.placing import (
    HEAPS,
    deal_in_rounds,
    heap_slots,
    misplacement,
    placed_event,
    placed_line,
    placing,
    wrong_card,
)
from engine.view import Event, EventKind, PileState, Slot

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


def _where(pile: PileId) -> str:
    """Where the card to move lies, for notes and refusals: ``the top card of heap:1``."""
    return "the reserve card in the hand" if pile == HAND else f"the top card of {pile}"


class HiddenCards(Game):
    name = "hidden-cards"
    title = "Hidden Cards"
    source = "Lady Adelaide Cadogan, Illustrated Games of Patience, No. 10: Hidden Cards"
    packs = 1
    total_cards = 52
    layout: ClassVar[tuple[Slot, ...]] = (
        *heap_slots(12),
        *(
            Slot(pile, index // 2, 6 + index % 2, "none", str(pile))
            for index, pile in enumerate(RESERVE)
        ),
        Slot(KINGS, 2, 0, "right", "kings"),
        Slot(HAND, 2, 6, "none", "hand"),
    )
    pile_ids = (*VALUE_HEAPS, *RESERVE, HAND, KINGS)
    """A move changes only the two piles it names: there are no forced steps."""

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
        self.in_place = sum(
            card.rank == value for value, heap in enumerate(self.heaps, start=1) for card in heap
        )
        """Cards in their final place (HC-14, rules version 2): on the heap of their own value
        or in the king row. Counted once here and kept up by each move, not recounted."""
        events = [
            Event(
                EventKind.DEALT, f"{pile} dealt face up: {' '.join(map(str, cards))}", tuple(cards)
            )
            for pile, cards in zip(VALUE_HEAPS, self.heaps, strict=True)
        ]
        events.append(Event(EventKind.DEALT, "four cards dealt face down to the reserve"))
        return events

    # -- the interface -----------------------------------------------------------------------

    def _moves(self) -> list[Move]:
        if self.owed:  # HC-8; none left: HC-13
            return [TAKE[index] for index, pile in enumerate(self.reserve) if pile]
        if self._shows_no_unplaced_card():  # HC-12
            return []
        return [self._placing(*self._card_to_move())]

    def _apply(self, move: Move) -> list[Event]:
        reserve = RESERVE_INDEX.get(move.source)
        if reserve is not None:  # HC-8
            card = self.reserve[reserve].pop()
            self.hand.append(card)
            self.owed = False
            return [
                Event(EventKind.TAKEN, f"{card} taken from {move.source} into the hand", (card,))
            ]
        card = self.hand.pop() if move.source == HAND else self.heaps[self.current].pop()
        self.home += 1
        if move.source == HAND or card.rank != self.current + 1:
            self.in_place += 1  # it goes where it stays; only a card off its own heap was there
        if card.rank == KING:  # HC-7, HC-9
            self.kings.append(card)
            self.owed = True
            return [Event(EventKind.PLACED, f"{card} laid in the king row", (card,))]
        heap = card.rank - 1  # HC-5, HC-6
        self.heaps[heap].insert(0, card)
        self.placed[heap] += 1
        self.current = heap
        return [placed_event(card)]

    def _refusal(self, move: Move) -> str:
        source, target = move.source, move.target
        if source is None or target is None:
            return (
                f"Hidden Cards has no {move.action}: each move places a card or takes a "
                f"reserve card"
            )
        for pile in (source, target):
            if pile not in KNOWN_PILES:
                return f"there is no pile {pile} in Hidden Cards ({PILE_NAMES})"
        if self.owed:
            return self._take_refusal(source)
        card, pile = self._card_to_move()
        if source != pile:
            return self._source_refusal(source, card, pile)
        return wrong_card(
            card, move, _where(pile), self._placing(card, pile)
        ) or self._misplacement(card, move, pile)

    def _take_refusal(self, source: PileId) -> str:
        """Why a move is refused while a reserve card is owed for a king (HC-8)."""
        index = RESERVE_INDEX.get(source)
        if index is None:
            return (
                f"{self.kings[-1]} went to the king row: take a reserve card first "
                f"(like {self.legal_moves()[0]})"
            )
        if not self.reserve[index]:
            return f"there is no card on {source}"
        return f"take one reserve card into the hand, blind, naming no card: write {TAKE[index]}"

    def _source_refusal(self, source: PileId, card: Card, pile: PileId) -> str:
        """Why nothing may move from ``source`` now that ``card`` on ``pile`` is the card to
        move (HC-4, HC-6, HC-8, HC-9)."""
        if pile == HAND:
            return f"first place {card}, the reserve card in the hand"
        if source in RESERVE_INDEX:
            return (
                f"a reserve card is taken only after a king; the next card to move is the "
                f"top card of {pile}"
            )
        if source == HAND:
            return "there is no card in the hand"
        if source == KINGS:
            return "a king laid in the king row stays there"
        fed = "the first heap" if self.home == 0 else "the heap just fed"
        return f"the next card to move is the top card of {pile}, {fed}"

    def _misplacement(self, card: Card, move: Move, source: PileId) -> str:
        """Why ``move``, which names ``card`` on ``source``, does not put it where it belongs
        (HC-5, HC-7)."""
        if card.rank != KING:
            if move.target == KINGS:
                return f"only kings go to the king row; {card} goes under {HEAPS[card.rank - 1]}"
            return misplacement(card, move, source)
        if move.target != KINGS:
            return f"a king goes to the king row: write {_king_move(card, source)}"
        return f"a king is laid on the king row, by itself: write {_king_move(card, source)}"

    def _pile_state(self, pile: PileId) -> PileState:
        if pile in RESERVE_INDEX:
            return PileState.closed(pile, self.reserve[RESERVE_INDEX[pile]])
        if pile == HAND:
            return PileState.open(HAND, self.hand)
        if pile == KINGS:
            return PileState.open(KINGS, self.kings)
        assert pile.index is not None
        return PileState.open(pile, self.heaps[pile.index - 1])

    def foundation_count(self) -> int:
        """HC-15: cards in their final place. Under rules version 1 a card counted only once the
        player had placed it, so a card dealt onto the heap of its own value and never taken
        was not home and such a game was lost; version 2 judges the final layout (HC-14): a
        king in the king row, and any card on the heap of its own value, where it stays (a card
        taken from its own heap goes back under it)."""
        return self.home if self.rules == 1 else self.in_place

    def _notes(self) -> list[str]:
        if self.owed:
            step = (
                "a king went to the king row: take a reserve card (blind)"
                if any(self.reserve)
                else "a king came up and the reserve is empty"
            )
        elif self._shows_no_unplaced_card():
            step = f"{VALUE_HEAPS[self.current]} shows no unplaced card"
        else:
            card, pile = self._card_to_move()
            step = f"next: {card}, {_where(pile)}"
        return [step, placed_line(self.placed)]

    def _lost_reason(self) -> str:
        if self.owed:
            return "a king came up and the reserve is empty"
        return f"{VALUE_HEAPS[self.current]}, the heap to take from, shows no unplaced card"

    def _state(self) -> dict[str, Any]:
        return {
            "next_heap": str(VALUE_HEAPS[self.current]),
            "placed_under": list(self.placed),
            "reserve_owed": self.owed,
        }

    def _restore(self, piles: dict[PileId, list[Card]], state: StateReader) -> None:
        """``home`` and ``in_place`` are counted from the cards: every placing move puts one
        more card under a heap or in the king row, and one more in its final place."""
        self.heaps = [piles[pile] for pile in VALUE_HEAPS]
        self.placed = state.numbers("placed_under", [len(heap) for heap in self.heaps])
        self.reserve = [piles[pile] for pile in RESERVE]
        self.hand = piles[HAND]
        at_most(HAND, self.hand, 1)
        self.kings = piles[KINGS]
        self.current = state.pile("next_heap", VALUE_HEAPS)
        self.owed = state.flag("reserve_owed")
        self.home = sum(self.placed) + len(self.kings)
        self.in_place = len(self.kings) + sum(
            card.rank == value for value, heap in enumerate(self.heaps, start=1) for card in heap
        )

    # -- helpers ---------------------------------------------------------------------------

    def _card_to_move(self) -> tuple[Card, PileId]:
        """The card to place next and the pile it lies on: the reserve card in the hand (HC-9),
        else the top card of the heap to take from (HC-4, HC-6). Asked only while no reserve
        card is owed and that heap shows an unplaced card."""
        if self.hand:
            return self.hand[0], HAND
        return self.heaps[self.current][-1], VALUE_HEAPS[self.current]

    def _shows_no_unplaced_card(self) -> bool:
        """HC-12: no card in the hand and the heap to take from holds only cards placed there."""
        return not self.hand and len(self.heaps[self.current]) == self.placed[self.current]

    @staticmethod
    def _placing(card: Card, source: PileId) -> Move:
        """The one move for ``card``: a king to the king row, any other card under its heap."""
        return _king_move(card, source) if card.rank == KING else placing(card, source)
