"""All Fours (Dr. Pole's game, in the footnote to No. 10 of Lady Cadogan's Illustrated Games of
Patience).

One pack, dealt face down in thirteen heaps of four: heap:1..13 are the heaps of ace..king. The
engine turns the top card of heap 1; the player slips it, face up, under the heap of its number;
the engine turns the top face-down card of that heap, and so on. At a standstill (the heap to
turn from has no face-down card left) the player may begin afresh, once, from the first heap not
yet complete. At the next standstill the face-down cards left are turned where they lie: won if
each lies on its proper heap, lost if any would have to move.

Rule ids (AF-n) are those of docs/rules/all-fours.md; RULINGS.md section "all-fours". Heap
indexes 0..12 are heap:1..13. Each heap is, bottom to top: the cards placed under it (face up,
counted in ``self.placed``), the cards dealt to it and not yet turned (face down), and, on the
heap ``self.current`` while ``self.turned`` is set, the card just turned (face up).
"""

from __future__ import annotations

from typing import Any, ClassVar

from engine.cards import Card
from engine.game import Game
from engine.moves import AFRESH, Move
from engine.piles import PileId
from engine.position import StateReader
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

KNOWN_PILES = frozenset(HEAPS)
FOUR = 4
"""Cards of each value, and so cards in a complete heap (AF-6)."""


class AllFours(Game):
    name = "all-fours"
    title = "All Fours"
    source = (
        "Dr. Pole, Cyclopaedia of Card and Table Games, 5. All Fours, as told in the "
        "footnote to Lady Adelaide Cadogan, Illustrated Games of Patience, No. 10"
    )
    packs = 1
    total_cards = 52
    layout: ClassVar[tuple[Slot, ...]] = heap_slots(13)
    pile_ids = HEAPS

    # -- state and dealing -----------------------------------------------------------------

    def _setup(self, taken_out: list[Card], stock: list[Card]) -> list[Event]:
        self.heaps: list[list[Card]] = deal_in_rounds(stock, 13)  # AF-2
        self.placed: list[int] = [0] * 13
        """How many cards at the bottom of each heap the player has placed there (AF-4)."""
        self.current = 0
        """The heap the card just turned lies on; at a standstill, the heap that had none."""
        self.turned = False
        """A card lies turned on top of heap ``current``, waiting to be placed (AF-4)."""
        self.afresh_used = False
        self.finished = False
        """The second standstill came and the face-down cards left were turned in place (AF-10)."""
        self.home = 0
        """Cards placed under their heap, plus at the end those turned in place on it (AF-13)."""
        return [
            Event(EventKind.DEALT, "52 cards dealt face down, thirteen heaps of four"),
            *self._turn(),
        ]  # AF-7

    # -- the interface -----------------------------------------------------------------------

    def _moves(self) -> list[Move]:
        if self.turned:  # AF-4
            return [placing(self.heaps[self.current][-1], HEAPS[self.current])]
        if self.finished:  # AF-10
            return []
        return [AFRESH]  # AF-5: at the first standstill

    def _apply(self, move: Move) -> list[Event]:
        if move == AFRESH:  # AF-5
            self.afresh_used = True
            self.current = self._first_uncompleted()
            return [
                Event(EventKind.AFRESH, f"begin afresh from {HEAPS[self.current]}"),
                *self._turn(),
            ]
        card = self.heaps[self.current].pop()  # AF-4
        heap = card.rank - 1
        self.heaps[heap].insert(0, card)
        self.placed[heap] += 1
        self.home += 1
        self.current = heap
        return [placed_event(card), *self._turn()]  # AF-8

    def _refusal(self, move: Move) -> str:
        source = move.source
        if move == AFRESH:
            return (
                f"you may begin afresh only at a standstill; first place "
                f"{self.heaps[self.current][-1]}"
            )
        if source is None or move.target is None:
            return (
                f"All Fours has no {move.action}: the engine turns the cards, you place "
                f"each under its heap"
            )
        for pile in (source, move.target):
            if pile not in KNOWN_PILES:
                return f"there is no pile {pile} in All Fours (heap:1..heap:13)"
        heap = HEAPS[self.current]
        if not self.turned:
            return f"standstill: {heap} has no face-down card to turn; begin afresh or resign"
        card = self.heaps[self.current][-1]
        if source != heap:
            return f"the card to place is {card}, just turned on {heap}"
        return wrong_card(
            card, move, f"the card turned on {heap}", placing(card, heap)
        ) or misplacement(card, move, heap)

    def _pile_state(self, pile: PileId) -> PileState:
        """A heap: the placed cards face up, those not yet turned face down, and on top the
        card just turned; all face up once the game has ended in place (AF-10)."""
        assert pile.index is not None
        index = pile.index - 1
        cards = self.heaps[index]
        if self.finished:
            return PileState.open(pile, cards)
        placed = self.placed[index]
        face_up = [True] * placed + [False] * (len(cards) - placed)
        if self.turned and index == self.current:
            face_up[-1] = True
        return PileState(pile, tuple(cards), tuple(face_up))

    def foundation_count(self) -> int:
        return self.home

    def _notes(self) -> list[str]:
        heap = HEAPS[self.current]
        if self.turned:
            step = f"place {self.heaps[self.current][-1]}, just turned on {heap}"
        elif self.finished:
            step = "the face-down cards left were turned where they lie"
        elif self.is_won():  # AF-12
            step = "every card is placed under its heap"
        else:
            step = f"standstill: {heap} has no face-down card; you may begin afresh once"
        return [
            step,
            "after beginning afresh" if self.afresh_used else "first pass",
            placed_line(self.placed),
        ]

    def _lost_reason(self) -> str:
        astray = [
            f"{card} on {HEAPS[index]}"
            for index, cards in enumerate(self.heaps)
            for card in cards[self.placed[index] :]
            if card.rank != index + 1
        ]
        return "at the second standstill cards lay face down off their proper heap: " + ", ".join(
            astray
        )

    def _state(self) -> dict[str, Any]:
        return {
            "current_heap": str(HEAPS[self.current]),
            "placed_under": list(self.placed),
            "turned": self.turned,
            "afresh_used": self.afresh_used,
            "finished": self.finished,
        }

    def _restore(self, piles: dict[PileId, list[Card]], state: StateReader) -> None:
        """``home`` is counted from the cards: those placed, and once the game has ended in
        place those turned on their own heap (AF-10)."""
        self.heaps = [piles[pile] for pile in HEAPS]
        self.placed = state.numbers("placed_under", [len(heap) for heap in self.heaps])
        self.current = state.pile("current_heap", HEAPS)
        self.turned = state.flag("turned")
        self.afresh_used = state.flag("afresh_used")
        self.finished = state.flag("finished")
        self.home = sum(self.placed)
        if self.finished:
            self.home += sum(
                card.rank == index + 1
                for index, cards in enumerate(self.heaps)
                for card in cards[self.placed[index] :]
            )

    # -- helpers ---------------------------------------------------------------------------

    def _first_uncompleted(self) -> int:
        """The first heap without its four cards placed under it (AF-6). At the first
        standstill heap:1 is complete and every other heap has had as many cards turned from it
        as placed under it, so a heap short of its four still has a face-down card to turn."""
        return next(index for index, placed in enumerate(self.placed) if placed < FOUR)

    def _turn(self) -> list[Event]:
        """Turn the top face-down card of the heap ``current`` (AF-5, AF-7, AF-8), or come to a
        standstill (AF-9) and, after beginning afresh, end the game (AF-10)."""
        heap = self.heaps[self.current]
        if len(heap) > self.placed[self.current]:
            self._mark_changed(HEAPS[self.current])
            self.turned = True
            card = heap[-1]
            return [Event(EventKind.TURNED, f"{card} turned on {HEAPS[self.current]}", (card,))]
        self.turned = False
        events = [
            Event(EventKind.STANDSTILL, f"standstill: {HEAPS[self.current]} has no face-down card")
        ]
        if self.afresh_used:
            events += self._turn_in_place()
        return events

    def _turn_in_place(self) -> list[Event]:
        """AF-10: turn every face-down card left where it lies; those on their own heap are home."""
        self._mark_changed(*HEAPS)
        self.finished = True
        events = []
        for index, cards in enumerate(self.heaps):
            left = cards[self.placed[index] :]
            if left:
                self.home += sum(card.rank == index + 1 for card in left)
                events.append(
                    Event(
                        EventKind.TURNED,
                        f"turned in place on {HEAPS[index]}: " + " ".join(map(str, left)),
                        tuple(left),
                    )
                )
        return events
