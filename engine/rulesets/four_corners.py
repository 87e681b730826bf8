"""The Four Corners (Cadogan, Illustrated Games of Patience, No. 33): docs/rules/four-corners.md.

Two packs. Twelve heaps in two columns of six (a corner, four side heaps, a corner) frame eight
foundations: for each suit, in its own row, an ace built up and a king built down. The cards are
dealt one at a time round the twelve heaps; during a deal only the card just turned may go home,
from a corner to any foundation it fits, from a side heap only to the foundation next to it.
After a deal the top cards play freely: home, or onto a heap one rank above or below in suit.
Two redeals, without shuffling, when the player chooses.

Rule ids (FC-n) are those of docs/rules/four-corners.md; RULINGS.md section "four-corners".
State: ``heaps`` in deal order (left:1..6, then right:1..6), ``foundations`` (ace:1..4 then
king:1..4, see engine/rulesets/corners_common.py; row r holds suit r: spades, hearts,
diamonds, clubs), ``stock`` (the next card to turn last), ``turned`` (a card waiting for the
player's choice of foundation), ``next_heap`` and ``deal`` (1..3). The engine deals on until a
card waits in ``turned`` or the stock is out, so a deal is in progress exactly when ``turned``
holds a card.
"""

from __future__ import annotations

from typing import Any, ClassVar

from engine.cards import ACE, KING, Card, Suit
from engine.game import Game
from engine.moves import REDEAL, Move, transfer
from engine.piles import PileId
from engine.position import StateReader, at_most
from engine.rulesets.corners_common import (
    FOUNDATION_INDEX,
    FOUNDATIONS,
    LEFT,
    RIGHT,
    STOCK,
    SUIT_NAMES,
    TURNED,
    dealt_event,
    gather,
    is_corner,
    layout,
    mishandled,
    next_rank,
    pile_state,
    unknown_pile,
)
from engine.view import Event, EventKind, PileState, Slot

HEAPS = LEFT + RIGHT
"""The twelve heaps in deal order (FC-3): left column top to bottom, then the right column."""
HEAP_INDEX = {pile: index for index, pile in enumerate(HEAPS)}
ROW_SUITS = tuple(Suit)
"""The suit of each foundation row (FC-2): spades, hearts, diamonds, clubs."""
NEXT_TO: tuple[int | None, ...] = (None, 0, 1, 2, 3, None, None, 4, 5, 6, 7, None)
"""For each heap, the foundation it lies next to (FC-2): a left side heap the ace foundation of
its row, a right side heap the king foundation; None for a corner, next to none."""
DEALS = 3
"""The first deal and at most two redeals (FC-15)."""
_ORDER = {
    (heap.text, target.text): order
    for order, (heap, target) in enumerate(
        (heap, target) for heap in HEAPS for target in (*FOUNDATIONS, *HEAPS)
    )
}
"""Where a transfer lies in ``_moves``'s list after a deal, by the texts of its source and target
(a text keeps its hash, a pile id works it out in Python): by source heap, then home, the ace
place before the king place, then onto the heaps in deal order."""


def _heap_name(index: int) -> str:
    """``corner left:1`` or ``side heap left:2``."""
    return f"{'corner' if is_corner(index % 6) else 'side heap'} {HEAPS[index]}"


def _untouched(moves: list[Move], changed: set[PileId]) -> list[Move]:
    """The transfers of ``moves`` (the redeal left out) that touch no pile of ``changed``, in
    their order."""
    texts = {pile.text for pile in changed}  # a text keeps its hash; a pile id's is a call
    return [
        move
        for move in moves
        if move.source is not None
        and move.target is not None
        and move.source.text not in texts
        and move.target.text not in texts
    ]


def _order(move: Move) -> int:
    """Where a transfer lies in ``_moves``'s list after a deal (``_ORDER``)."""
    assert move.source is not None and move.target is not None
    return _ORDER[move.source.text, move.target.text]


class FourCorners(Game):
    name = "four-corners"
    title = "The Four Corners"
    source = "Lady Adelaide Cadogan, Illustrated Games of Patience, No. 33: The Four Corners"
    packs = 2
    total_cards = 104
    layout: ClassVar[tuple[Slot, ...]] = layout("corner", tuple(Suit))
    pile_ids = (*HEAPS, *FOUNDATIONS, STOCK, TURNED)

    # -- dealing ---------------------------------------------------------------------------

    def _setup(self, taken_out: list[Card], stock: list[Card]) -> list[Event]:
        self.heaps: list[list[Card]] = [[] for _ in HEAPS]
        self.foundations: list[list[Card]] = [[] for _ in FOUNDATIONS]
        self.stock: list[Card] = stock[::-1]
        self.turned: list[Card] = []
        self.next_heap = 0
        self.deal = 1
        return self._deal()

    def _deal(self) -> list[Event]:
        """Turn cards round the heaps (FC-3) until the stock is out or a card needs the player's
        choice (FC-6), sending each card home that must go (FC-4, FC-5)."""
        events = []
        self._mark_changed(STOCK)
        while self.stock:
            card = self.stock.pop()
            heap = self.next_heap
            targets = self._deal_targets(card, heap)
            if not targets:
                self._mark_changed(HEAPS[heap])
                self.heaps[heap].append(card)
                self.next_heap = (heap + 1) % len(HEAPS)
                events.append(dealt_event(card, HEAPS[heap]))
            elif len(targets) == 1:  # FC-7: the next card turned falls to the same heap
                self._mark_changed(FOUNDATIONS[targets[0]])
                self.foundations[targets[0]].append(card)
                events.append(
                    Event(
                        EventKind.HOME,
                        f"{card} turned for {HEAPS[heap]}, placed on {FOUNDATIONS[targets[0]]}",
                        (card,),
                    )
                )
            else:
                self._mark_changed(TURNED)
                self.turned.append(card)
                events.append(
                    Event(
                        EventKind.CHOOSE,
                        f"{card} turned for {_heap_name(heap)} fits "
                        f"{self._choices(' and ')}: choose",
                        (card,),
                    )
                )
                return events
        events.append(Event(EventKind.DEAL_COMPLETE, f"deal {self.deal} of {DEALS} complete"))
        return events

    def _deal_targets(self, card: Card, heap: int) -> tuple[int, ...]:
        """The foundations ``card``, turned for ``heap``, goes to during a deal: the first ace
        or king of a suit to its own place from any heap (FC-4); any other card to the
        foundations it fits, any from a corner, only the one next to a side heap (FC-5)."""
        ace = card.suit.value
        king = ace + 4
        if card.rank == ACE and not self.foundations[ace]:
            return (ace,)
        if card.rank == KING and not self.foundations[king]:
            return (king,)
        up = card.rank == next_rank(self.foundations[ace], ace)
        down = card.rank == next_rank(self.foundations[king], king)
        beside = NEXT_TO[heap]
        if beside is not None:  # a side heap: only the foundation next to it
            up, down = up and beside == ace, down and beside == king
        return (ace, king) if up and down else (ace,) if up else (king,) if down else ()

    def _choices(self, joiner: str) -> str:
        """The foundations the waiting turned card may go to: ``ace:1 or king:1``."""
        return joiner.join(
            str(FOUNDATIONS[place]) for place in self._deal_targets(self.turned[0], self.next_heap)
        )

    def _redeal(self) -> list[Event]:
        """FC-14: gather the heaps in deal order, each heap's lowest card first, and deal."""
        self._mark_changed(*HEAPS, STOCK)
        self.stock = gather(self.heaps)
        self.next_heap = 0
        self.deal += 1
        return [
            Event(
                EventKind.REDEAL,
                f"the heaps are gathered, left:1 first, for deal {self.deal} of {DEALS}",
            ),
            *self._deal(),
        ]

    # -- moves -----------------------------------------------------------------------------

    def _moves(self) -> list[Move]:
        """While a card waits, only its foundations (FC-6, FC-8); after a deal, top cards home
        (FC-9) or onto a heap (FC-10), and a redeal if one is left (FC-14, FC-15)."""
        if self.turned:
            card = self.turned[0]
            return [
                transfer(TURNED, FOUNDATIONS[place], card)
                for place in self._deal_targets(card, self.next_heap)
            ]
        moves = []
        wants = [next_rank(cards, place) for place, cards in enumerate(self.foundations)]
        tops = [(HEAPS[index], heap[-1]) for index, heap in enumerate(self.heaps) if heap]
        for source, card in tops:
            ace = card.suit.value
            for place in (ace, ace + 4):
                if wants[place] == card.rank:
                    moves.append(transfer(source, FOUNDATIONS[place], card))
            for target, under in tops:
                if under.suit is card.suit and abs(under.rank - card.rank) == 1:
                    moves.append(transfer(source, target, card))
        if self.deal < DEALS:
            moves.append(REDEAL)
        return moves

    def _moves_after(self, earlier: list[Move], changed: set[PileId]) -> list[Move] | None:
        """After a deal every move but the redeal joins two piles and depends on those two
        only: a heap's top card home (FC-9) on a foundation of its row's suit that wants its
        rank (by the foundation's top), or onto a heap (FC-10) whose top is one rank off in its
        suit. So the moves of ``earlier`` between piles that did not change stand, those from or
        to a changed pile are listed afresh (``_moves_touching``), all are put in ``_moves``'s
        order (``_ORDER``), and the redeal is added as ``_moves`` adds it (FC-15). None while a
        card waits (FC-6), and when the stock or ``turned`` changed: only a deal or redeal
        changes them, and it may change the phase and the deal counter, which ``earlier``
        then does not follow."""
        if self.turned or STOCK in changed or TURNED in changed:
            return None
        moves = _untouched(earlier, changed) + self._moves_touching(changed)
        moves.sort(key=_order)
        if self.deal < DEALS:
            moves.append(REDEAL)
        return moves

    def _moves_touching(self, changed: set[PileId]) -> list[Move]:
        """The moves after a deal from or to a heap or foundation of ``changed``, each once,
        in no particular order: a changed heap lists its own moves and those onto it, a changed
        foundation those home to it from the heaps that did not change."""
        heaps = {HEAP_INDEX[pile] for pile in changed if pile in HEAP_INDEX}
        moves = []
        for index in heaps:
            if self.heaps[index]:
                moves += self._moves_of_heap(index, heaps)
        for pile in changed:
            if pile in FOUNDATION_INDEX:
                moves += self._moves_home(FOUNDATION_INDEX[pile], heaps)
        return moves

    def _moves_of_heap(self, index: int, skip: set[int]) -> list[Move]:
        """The moves of heap ``index`` home (FC-9) and onto the heaps (FC-10), and those onto it
        from the heaps, but from those in ``skip``."""
        source, card = HEAPS[index], self.heaps[index][-1]
        suit, rank, row = card.suit, card.rank, card.suit.value
        moves = []
        for place in (row, row + 4):
            if next_rank(self.foundations[place], place) == rank:
                moves.append(transfer(source, FOUNDATIONS[place], card))
        for other, heap in enumerate(self.heaps):
            if heap and heap[-1].suit is suit and abs(heap[-1].rank - rank) == 1:
                moves.append(transfer(source, HEAPS[other], card))
                if other not in skip:
                    moves.append(transfer(HEAPS[other], source, heap[-1]))
        return moves

    def _moves_home(self, place: int, skip: set[int]) -> list[Move]:
        """The moves home to foundation ``place`` (FC-9) from the heaps, but from those in
        ``skip``: from each topped by the card of its row's suit that it wants."""
        foundation, suit = FOUNDATIONS[place], ROW_SUITS[place % 4]
        rank = next_rank(self.foundations[place], place)
        return [
            transfer(HEAPS[index], foundation, heap[-1])
            for index, heap in enumerate(self.heaps)
            if heap and heap[-1].rank == rank and heap[-1].suit is suit and index not in skip
        ]

    def _apply(self, move: Move) -> list[Event]:
        if move.action == "redeal":
            return self._redeal()
        assert move.source is not None and move.target is not None
        if move.source == TURNED:
            self.foundations[FOUNDATION_INDEX[move.target]].append(self.turned.pop())
            return self._deal()
        card = self.heaps[HEAP_INDEX[move.source]].pop()
        if move.target in FOUNDATION_INDEX:
            self.foundations[FOUNDATION_INDEX[move.target]].append(card)
        else:
            self.heaps[HEAP_INDEX[move.target]].append(card)
        return []

    # -- refusals --------------------------------------------------------------------------

    def _refusal(self, move: Move) -> str:
        if move.action is not None:
            return self._refuse_action(move.action)
        wrong = unknown_pile(move)
        if wrong:
            return wrong
        source, target = move.source, move.target
        assert source is not None and target is not None
        if source == STOCK:
            return "the engine deals the stock itself, one card at a time, round the heaps"
        if source in FOUNDATION_INDEX:
            return f"cards on a foundation stay there ({source})"
        cards = self.turned if source == TURNED else self.heaps[HEAP_INDEX[source]]
        if not cards:
            return (
                "no card is waiting in turned: the deal is complete"
                if source == TURNED
                else f"there is no card on {source}"
            )
        card = cards[-1]
        wrong = mishandled(move, card)
        if wrong:
            return wrong
        if self.turned:
            return self._refuse_during_choice(source, target)
        if target in FOUNDATION_INDEX:
            return self._refuse_foundation(card, FOUNDATION_INDEX[target])
        if target not in HEAP_INDEX:
            return f"no card may be put on {target}"
        return self._refuse_heap(card, target)

    def _refuse_action(self, action: str) -> str:
        if action != "redeal":
            return f"there is no '{action}' in The Four Corners: the only action is redeal"
        if self.turned:
            return f"the deal is not complete: first choose a foundation for {self.turned[0]}"
        return "no redeal left: the two redeals have been used"

    def _refuse_during_choice(self, source: PileId, target: PileId) -> str:
        card, choices = self.turned[0], self._choices(" or ")
        if source != TURNED:
            return (
                f"{card} has just been turned and must go home first: choose {choices}; "
                f"during a deal only the card just turned may go to a foundation"
            )
        return f"{card} must go to {choices}, not {target}"

    def _refuse_foundation(self, card: Card, place: int) -> str:
        """Why ``card`` does not go on foundation ``place`` after a deal, when every foundation
        has its ace or king (FC-4: the first deal turns every card)."""
        pile, cards = FOUNDATIONS[place], self.foundations[place]
        if place % 4 != card.suit.value:
            return f"{pile} is built in {SUIT_NAMES[Suit(place % 4)]}, not with {card}"
        if next_rank(cards, place) in (0, 14):
            return f"{pile} is complete"
        return f"{card} does not follow {cards[-1]} on {pile}"

    def _refuse_heap(self, card: Card, target: PileId) -> str:
        under = self.heaps[HEAP_INDEX[target]]
        if not under:
            return f"{target} is empty, and an emptied heap stays empty"
        if under[-1].suit is card.suit and {card.rank, under[-1].rank} == {ACE, KING}:
            return "there is no wrap: an ace does not go on a king, nor a king on an ace"
        return f"{card} is not one rank above or below {under[-1]} in the same suit"

    # -- what the player sees --------------------------------------------------------------

    def _pile_state(self, pile: PileId) -> PileState:
        if pile in HEAP_INDEX:
            return pile_state(pile, self.heaps[HEAP_INDEX[pile]])
        if pile in FOUNDATION_INDEX:
            return pile_state(pile, self.foundations[FOUNDATION_INDEX[pile]])
        return pile_state(pile, self.stock if pile == STOCK else self.turned)

    def foundation_count(self) -> int:
        return sum(map(len, self.foundations))

    def _notes(self) -> list[str]:
        deal = f"deal {self.deal} of {DEALS}"
        if self.turned:
            return [
                f"{deal}: {self.turned[0]} turned for {_heap_name(self.next_heap)}; "
                f"choose {self._choices(' or ')}"
            ]
        left = DEALS - self.deal
        redeals = f"{left} redeal{'s' if left != 1 else ''} left" if left else "no redeal left"
        return [f"{deal} complete: play top cards home or onto a heap in suit; {redeals}"]

    def _state(self) -> dict[str, Any]:
        return {"deal": self.deal, "next_heap": str(HEAPS[self.next_heap])}

    def _restore(self, piles: dict[PileId, list[Card]], state: StateReader) -> None:
        self.heaps = [piles[pile] for pile in HEAPS]
        self.foundations = [piles[pile] for pile in FOUNDATIONS]
        self.stock = piles[STOCK]
        self.turned = piles[TURNED]
        at_most(TURNED, self.turned, 1)
        self.next_heap = state.pile("next_heap", HEAPS)
        self.deal = state.number("deal", 1, DEALS)
