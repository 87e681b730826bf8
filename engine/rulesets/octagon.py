"""The Octagon (Lady Cadogan's Illustrated Games of Patience, No. 57).

Two packs. The eight aces, taken out, are laid in pairs as foundations, two per suit, each built
up in suit to the king. Four auxiliary heaps of five face-up cards lie slantwise at the corners;
only their top cards play. The other 76 cards are turned one at a time onto a waste heap (by the
engine itself while no card can be played); the top of the waste may go home or onto an
auxiliary heap one rank lower in suit, and the top run of an auxiliary heap goes home in one
move. An emptied auxiliary heap is filled at once from the waste, or by the next card turned.
Three deals through the stock in all.

Rule ids (OC-n) are those of docs/rules/octagon.md; RULINGS.md section "octagon".
Foundation indexes 0..7 are foundation:1..8; foundation ``2 * suit + pack`` holds the ace of that
suit from that pack, so foundations 0-1 are spades, 2-3 hearts, 4-5 diamonds, 6-7 clubs. A
foundation starts with its ace, so its length is the rank of its top card.
"""

from __future__ import annotations

from typing import Any, ClassVar

from engine.cards import ACE, KING, Card
from engine.game import Game
from engine.moves import REDEAL, TURN, Move
from engine.piles import PileId, numbered
from engine.position import StateReader, starts_with_ace
from engine.view import Event, EventKind, PileState, Slot

FOUNDATIONS = numbered("foundation", 8)
AUX = numbered("aux", 4)
STOCK = PileId("stock")
WASTE = PileId("waste")
PILES = frozenset({*FOUNDATIONS, *AUX, STOCK, WASTE})

HEAP_SIZE = 5
"""Cards dealt to each auxiliary heap (OC-3)."""
DEALS = 3
"""Three deals through the stock in all (OC-14)."""
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")

_MOVES: dict[int, Move] = {}
"""Moves made once and reused: building a ``Move`` validates it, and every position lists some."""


def _move(source: int, target: int, card: Card, count: int = 1) -> Move:
    """``count`` cards, the deepest ``card``, from the waste (source 0) or ``aux:source`` to
    ``foundation:target+1`` (target 0..7) or ``aux:target-7`` (target 8..11)."""
    key = (((source * 12 + target) * 13 + count) * 14 + card.rank) * 4 + card.suit.value
    move = _MOVES.get(key)
    if move is None:
        pile = WASTE if source == 0 else AUX[source - 1]
        goal = FOUNDATIONS[target] if target < 8 else AUX[target - 8]
        move = _MOVES[key] = Move(pile, goal, card, count)
    return move


def _cards(count: int) -> str:
    return "1 card" if count == 1 else f"{count} cards"


def _run_length(heap: list[Card]) -> int:
    """How many cards at the top of an auxiliary heap are in sequence: each one rank lower than
    the card under it, in the same suit (OC-10)."""
    length = 1
    index = len(heap) - 1
    while index > 0:
        above, below = heap[index], heap[index - 1]
        if below.suit is not above.suit or below.rank != above.rank + 1:
            break
        length += 1
        index -= 1
    return length


class Octagon(Game):
    name = "octagon"
    title = "The Octagon"
    source = "Lady Adelaide Cadogan, Illustrated Games of Patience, No. 57: The Octagon"
    packs = 2
    taken_out = (ACE,)
    total_cards = 104
    layout: ClassVar[tuple[Slot, ...]] = (
        # OC-1, OC-2: an octagon drawn clockwise from the top left corner; the foundations lie
        # in pairs on its sides, the auxiliary heaps slantwise across its corners.
        Slot(AUX[0], 0, 0, "down", "aux:1"),
        Slot(FOUNDATIONS[0], 0, 1, "none", "foundation:1 spades"),
        Slot(FOUNDATIONS[1], 0, 2, "none", "foundation:2 spades"),
        Slot(AUX[1], 0, 3, "down", "aux:2"),
        Slot(FOUNDATIONS[2], 1, 3, "none", "foundation:3 hearts"),
        Slot(FOUNDATIONS[3], 2, 3, "none", "foundation:4 hearts"),
        Slot(AUX[2], 3, 3, "down", "aux:3"),
        Slot(FOUNDATIONS[4], 3, 2, "none", "foundation:5 diamonds"),
        Slot(FOUNDATIONS[5], 3, 1, "none", "foundation:6 diamonds"),
        Slot(AUX[3], 3, 0, "down", "aux:4"),
        Slot(FOUNDATIONS[6], 2, 0, "none", "foundation:7 clubs"),
        Slot(FOUNDATIONS[7], 1, 0, "none", "foundation:8 clubs"),
        Slot(STOCK, 4, 1, "none", "stock"),
        Slot(WASTE, 4, 2, "none", "waste"),
    )
    pile_ids = (*FOUNDATIONS, *AUX, STOCK, WASTE)

    # -- state and dealing -----------------------------------------------------------------

    def _setup(self, taken_out: list[Card], stock: list[Card]) -> list[Event]:
        self.foundations: list[list[Card]] = [[] for _ in FOUNDATIONS]
        for ace in taken_out:  # OC-1
            self.foundations[2 * ace.suit.value + ace.pack].append(ace)
        events = [
            Event(
                EventKind.LAYOUT,
                "the eight aces laid out in pairs as foundations",
                tuple(taken_out),
            )
        ]
        self.aux: list[list[Card]] = []
        for index, pile in enumerate(AUX):  # OC-3: a whole heap at a time
            heap = stock[index * HEAP_SIZE : (index + 1) * HEAP_SIZE]
            self.aux.append(heap)
            events.append(
                Event(EventKind.DEALT, f"{' '.join(map(str, heap))} dealt to {pile}", tuple(heap))
            )
        self.stock: list[Card] = stock[len(AUX) * HEAP_SIZE :][::-1]
        """Face down, top (the next card turned) last."""
        self.waste: list[Card] = []
        """Face up, top last: every card turned that is not played or filling a vacancy."""
        self.deal = 1
        return events + self._advance()

    def _foundations_for(self, card: Card) -> tuple[int, ...]:
        """The foundations ``card`` may go to: those of its suit whose top is one lower (OC-4)."""
        first = 2 * card.suit.value
        want = card.rank - 1
        fits_first = len(self.foundations[first]) == want
        fits_second = len(self.foundations[first + 1]) == want
        if fits_first:
            return (first, first + 1) if fits_second else (first,)
        return (first + 1,) if fits_second else ()

    # -- the hooks -------------------------------------------------------------------------

    def _moves(self) -> list[Move]:
        moves = self._plays()
        if self.stock:  # OC-5
            moves.append(TURN)
        elif self.waste and self.deal < DEALS:  # OC-14
            moves.append(REDEAL)
        return moves

    def _plays(self) -> list[Move]:
        """Every move of a card: home (OC-6, OC-7, OC-10) or onto an auxiliary heap (OC-8)."""
        moves: list[Move] = []
        waste = self.waste
        if waste:
            card = waste[-1]
            for target in self._foundations_for(card):  # OC-6
                moves.append(_move(0, target, card))
            for index, heap in enumerate(self.aux):  # OC-8
                if heap and heap[-1].suit is card.suit and heap[-1].rank == card.rank + 1:
                    moves.append(_move(0, 8 + index, card))
        for index, heap in enumerate(self.aux):  # OC-7, OC-10
            if heap:
                targets = self._foundations_for(heap[-1])
                if targets:
                    run = _run_length(heap)
                    for target in targets:
                        for count in range(1, run + 1):
                            moves.append(_move(index + 1, target, heap[-count], count))
        # Sources, targets and counts differ, so no two of these moves are equal.
        return moves

    def _advance(self) -> list[Event]:
        """OC-5: while no card can be played, the engine turns the next card by itself."""
        events: list[Event] = []
        while self.stock and not self._plays():
            events += self._turn()
        return events

    def _apply(self, move: Move) -> list[Event]:
        if move.action == "turn":
            events = self._turn()
        elif move.action == "redeal":
            events = self._redeal()
        else:
            events = self._play(move)
        return events + self._advance()

    def _play(self, move: Move) -> list[Event]:
        """A card, or the run of an auxiliary heap, home or onto a heap; then OC-12."""
        source, target = move.source, move.target
        assert source is not None and target is not None and target.index is not None
        goal = target.index - 1
        if source.kind == "waste":
            card = self.waste.pop()
            if target.kind == "foundation":
                self.foundations[goal].append(card)
                return [Event(EventKind.HOME, f"{card} played from the waste to {target}", (card,))]
            self.aux[goal].append(card)
            return [Event(EventKind.MOVED, f"{card} played from the waste onto {target}", (card,))]
        assert source.index is not None
        heap = self.aux[source.index - 1]
        run = heap[-move.count :]
        del heap[-move.count :]
        run.reverse()  # OC-10: the top card goes home first
        self.foundations[goal].extend(run)
        events = [
            Event(
                EventKind.HOME,
                f"{' '.join(map(str, run))} played from {source} to {target}",
                tuple(run),
            )
        ]
        if not heap and self.waste:  # OC-12
            self._mark_changed(WASTE)
            card = self.waste.pop()
            heap.append(card)
            events.append(
                Event(EventKind.FILLED, f"{card} from the waste fills the empty {source}", (card,))
            )
        return events

    def _turn(self) -> list[Event]:
        """OC-5, OC-13: the next card goes onto the waste, or into an empty auxiliary heap."""
        self._mark_changed(STOCK)
        card = self.stock.pop()
        if not self.waste:  # a heap waits for a card only while the waste is empty (OC-12)
            for index, heap in enumerate(self.aux):
                if not heap:
                    self._mark_changed(AUX[index])
                    heap.append(card)
                    return [
                        Event(
                            EventKind.FILLED,
                            f"{card} turned, fills the empty {AUX[index]}",
                            (card,),
                        )
                    ]
        self._mark_changed(WASTE)
        self.waste.append(card)
        return [Event(EventKind.TURNED, f"{card} turned onto the waste", (card,))]

    def _redeal(self) -> list[Event]:
        """OC-14: the waste turned over, unshuffled, so its first card is turned first."""
        self._mark_changed(STOCK, WASTE)
        self.stock = self.waste[::-1]
        self.waste = []
        self.deal += 1
        return [
            Event(
                EventKind.REDEAL,
                f"the waste is turned over as the stock for deal {self.deal} of {DEALS}",
            )
        ]

    def _refusal(self, move: Move) -> str:
        if move.action is not None:
            return self._action_refusal(move.action)
        source, target = move.source, move.target
        assert source is not None and target is not None
        for named_pile in (source, target):
            if named_pile not in PILES:
                return (
                    f"there is no pile {named_pile} in the Octagon (its piles are "
                    f"foundation:1..8, aux:1..4, stock and waste)"
                )
        if source.kind == "foundation":
            return f"a card on {source} stays there: nothing is taken from a foundation"
        if source.kind == "stock":
            return "cards are taken from the stock only by turning them: send 'turn'"
        if target.kind in ("stock", "waste"):
            return f"no card is put on the {target}: the waste takes only cards turned"
        if source == target:
            return f"a card cannot move from {source} to itself"
        if move.bottom:
            return "no card is put under a pile in the Octagon"
        pile = self._pile(source)
        if not pile:
            return f"there is no card on {source}"
        if source.kind == "waste" and move.count > 1:
            return "only the top card of the waste may be moved"
        if source.kind == "aux" and target.kind == "aux":
            return f"a card on {source} goes only to a foundation, never onto another heap"
        if move.count > len(pile):
            return f"{source} holds only {_cards(len(pile))}"
        named = pile[-move.count]
        where = (
            f"the top card of {source} is {named}"
            if move.count == 1
            else f"the card {move.count} from the top of {source} is {named}"
        )
        if move.card is None:
            return f"name the card you move: {where}"
        if move.card != named:
            return f"{move.card} cannot be moved that way: {where}"
        if move.count > _run_length(pile):
            return (
                f"the top {move.count} cards of {source} are not in sequence (each one lower "
                f"than the card under it, in suit): only the top {_run_length(pile)} are"
            )
        first = pile[-1]
        assert target.index is not None
        if target.kind == "foundation":
            foundation = self.foundations[target.index - 1]
            suit = foundation[0].suit
            if first.suit is not suit:
                return f"{target} is built in {SUIT_NAMES[suit.value]}; {first} cannot go there"
            if len(foundation) == KING:
                return f"{target} is complete up to the king"
            return f"{first} does not follow {foundation[-1]} on {target}"
        heap = self.aux[target.index - 1]
        if not heap:
            return (
                f"{target} is empty: it is filled by the top card of the waste, or by the "
                f"next card turned, not by a move"
            )
        return (
            f"{first} does not go on {heap[-1]}: an auxiliary heap takes only the next lower "
            f"card of its suit"
        )

    def _action_refusal(self, action: str) -> str:
        if action == "turn":
            if not self.waste:
                return "the stock and the waste are both used up: nothing is left to turn"
            if self.deal < DEALS:
                return "the stock is used up: turn the waste over with 'redeal' first"
            return "the stock is used up and no deal is left"
        if action == "redeal":
            if self.stock:
                return (
                    f"the stock still holds {_cards(len(self.stock))}: the waste is turned "
                    f"over only when the stock is used up"
                )
            if self.deal >= DEALS:
                return f"all {DEALS} deals through the stock are used: no redeal is left"
            return "the waste is empty: there is nothing to turn over"
        return f"there is no '{action}' in the Octagon"

    def _pile(self, pile: PileId) -> list[Card]:
        if pile.kind == "waste":
            return self.waste
        assert pile.index is not None
        return self.aux[pile.index - 1]

    def _pile_state(self, pile: PileId) -> PileState:
        if pile == STOCK:
            return PileState.closed(STOCK, self.stock)
        if pile == WASTE:
            return PileState.open(WASTE, self.waste)
        assert pile.index is not None
        piles = self.foundations if pile.kind == "foundation" else self.aux
        return PileState.open(pile, piles[pile.index - 1])

    def foundation_count(self) -> int:
        """OC-17: cards on the foundations, the eight aces included."""
        return sum(map(len, self.foundations))

    def _notes(self) -> list[str]:
        notes = [f"deal {self.deal} of {DEALS}"]
        if self.stock:
            notes.append(f"{_cards(len(self.stock))} left to turn")
        elif self.waste and self.deal < DEALS:
            notes.append("the stock is used up: 'redeal' turns the waste over")
        fill = "the next card turned fills it" if self.stock else "it stays empty"
        notes += [
            f"{pile} is empty: {fill}" for pile, heap in zip(AUX, self.aux, strict=True) if not heap
        ]
        return notes

    def _lost_reason(self) -> str:
        if self.deal < DEALS:
            return "no card can be played and the stock and the waste are both used up"
        return f"no card can be played after the last of the {DEALS} deals"

    def _state(self) -> dict[str, Any]:
        return {"deal": self.deal}

    def _restore(self, piles: dict[PileId, list[Card]], state: StateReader) -> None:
        self.foundations = [piles[pile] for pile in FOUNDATIONS]
        for pile, cards in zip(FOUNDATIONS, self.foundations, strict=True):
            starts_with_ace(pile, cards)
        self.aux = [piles[pile] for pile in AUX]
        self.stock = piles[STOCK]
        self.waste = piles[WASTE]
        self.deal = state.number("deal", 1, DEALS)
