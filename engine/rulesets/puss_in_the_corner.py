"""Puss in the Corner (Lady Cadogan's Illustrated Games of Patience, No. 11).

The four aces form a square and are built up to king in their own colour, any suit. The player
turns the 48 other cards one at a time and places each on one of four corner heaps or on a
foundation it fits. After a seven, up to two transfers between corner heaps may be made. The
heaps are gathered and dealt through once more; then the game ends when nothing can move.

Rules in plain English, with their sources: docs/rules/puss-in-the-corner.md (ids PC-n below).
"""

from __future__ import annotations

from itertools import permutations
from typing import Any, ClassVar

from engine.cards import ACE, KING, RANK_NAMES, Card, Suit, ordered_pack
from engine.errors import InvalidPositionError
from engine.game import Game
from engine.moves import REDEAL, TURN, Move, transfer
from engine.piles import PileId, numbered
from engine.position import StateReader, at_most, starts_with_ace
from engine.view import Event, EventKind, PileState, Slot

FOUNDATIONS = numbered("foundation", 4)
"""The aces of spades, hearts, diamonds and clubs, in that order (PC-1)."""
CORNERS = numbered("corner", 4)
"""Top-left, top-right, bottom-left and bottom-right of the square (PC-2)."""
STOCK = PileId("stock")
TURNED = PileId("turned")

PASSES = 2
SEVEN = 7
FOUR = (0, 1, 2, 3)
"""Indices of the four corners, and of the four foundations."""

_FOUNDATION_INDEX = {pile: index for index, pile in enumerate(FOUNDATIONS)}
_CORNER_INDEX = {pile: index for index, pile in enumerate(CORNERS)}
_PILES = "stock, turned, corner:1..4, foundation:1..4"

FOUNDATION_RED = tuple(suit.is_red for suit in Suit)
"""The colour each foundation builds in: its ace's (PC-5)."""

# The moves that depend on one card only, made once (speed).
_CARDS = [card for card in ordered_pack(1) if card.rank != ACE]
_PLACE = {(card, index): Move(TURNED, CORNERS[index], card) for card in _CARDS for index in FOUR}
_PLACE_HOME = {
    (card, index): Move(TURNED, FOUNDATIONS[index], card) for card in _CARDS for index in FOUR
}
_HOME = {
    (card, corner, index): Move(CORNERS[corner], FOUNDATIONS[index], card)
    for card in _CARDS
    for corner in FOUR
    for index in FOUR
}


def _colour(red: bool) -> str:
    return "red" if red else "black"


class PussInTheCorner(Game):
    name: ClassVar[str] = "puss-in-the-corner"
    title: ClassVar[str] = "Puss in the Corner"
    source: ClassVar[str] = (
        "Lady Adelaide Cadogan, Illustrated Games of Patience, No. 11: Puss in the Corner"
    )
    packs: ClassVar[int] = 1
    taken_out: ClassVar[tuple[int, ...]] = (ACE,)
    total_cards: ClassVar[int] = 52
    layout: ClassVar[tuple[Slot, ...]] = (
        Slot(CORNERS[0], 0, 0, "down", "top-left corner"),
        Slot(CORNERS[1], 0, 3, "down", "top-right corner"),
        Slot(FOUNDATIONS[0], 1, 1, "none", "spades ace: black"),
        Slot(FOUNDATIONS[1], 1, 2, "none", "hearts ace: red"),
        Slot(FOUNDATIONS[2], 2, 1, "none", "diamonds ace: red"),
        Slot(FOUNDATIONS[3], 2, 2, "none", "clubs ace: black"),
        Slot(CORNERS[2], 3, 0, "down", "bottom-left corner"),
        Slot(CORNERS[3], 3, 3, "down", "bottom-right corner"),
        Slot(STOCK, 1, 5, "none", "stock"),
        Slot(TURNED, 2, 5, "none", "turned card"),
    )
    pile_ids = (*FOUNDATIONS, *CORNERS, STOCK, TURNED)

    # -- setting up and advancing ----------------------------------------------------------

    def _setup(self, taken_out: list[Card], stock: list[Card]) -> list[Event]:
        self.foundations: list[list[Card]] = [[ace] for ace in taken_out]  # PC-1
        self.corners: list[list[Card]] = [[], [], [], []]  # PC-2
        self.stock: list[Card] = stock[::-1]  # the top, dealt next, is the last card (PC-3)
        self.turned: Card | None = None
        self.pass_number = 1
        self.free: tuple[int, ...] = ()
        """Corners a transfer may still touch after a seven: all four, the two the first
        transfer left alone, or none when no transfer is open (PC-8, PC-9)."""
        self.seven: Card | None = None
        """The seven whose transfers are open, for the notes and refusals."""
        aces = ", ".join(f"{ace} {pile}" for ace, pile in zip(taken_out, FOUNDATIONS, strict=True))
        layout = Event(EventKind.LAYOUT, f"the aces laid out in a square: {aces}", tuple(taken_out))
        return [layout, *self._advance()]

    def _advance(self) -> list[Event]:
        """The automatic steps: end a seven's transfers once none is possible (PC-10), then
        turn the next card if none is waiting (PC-3)."""
        if self.free and not any(self.corners[index] for index in self.free):
            self.free = ()
        if self.turned is None and not self.free and self.stock:
            self._mark_changed(STOCK, TURNED)
            card = self.turned = self.stock.pop()
            return [Event(EventKind.TURNED, f"{card} turned", (card,))]
        return []

    def _gather(self) -> Event:
        """PC-14: corner 1 to 4, each heap's lowest card dealt first; no shuffling."""
        self._mark_changed(*CORNERS, STOCK)
        gathered = [card for heap in self.corners for card in heap]
        for heap in self.corners:
            heap.clear()
        self.stock = gathered[::-1]
        self.pass_number += 1
        return Event(
            EventKind.REDEAL,
            f"the corner heaps gathered, corner:1 to corner:4, lowest card "
            f"first, and dealt again: pass {self.pass_number} of {PASSES}",
        )

    # -- legal moves -----------------------------------------------------------------------

    def _fits(self, card: Card, foundation: int) -> bool:
        """PC-5: one higher than the top, in the colour of the ace."""
        return (
            self.foundations[foundation][-1].rank + 1 == card.rank
            and FOUNDATION_RED[foundation] == card.suit.is_red
        )

    def _home_moves(self) -> list[Move]:
        """PC-6: the top of any corner heap to any foundation it fits, at any time."""
        moves = []
        for index, heap in enumerate(self.corners):
            if heap:
                card = heap[-1]
                for foundation in FOUR:
                    if self._fits(card, foundation):
                        moves.append(_HOME[card, index, foundation])
        return moves

    def _moves(self) -> list[Move]:
        moves = self._home_moves()
        card = self.turned
        if card is not None:  # PC-4
            moves += [_PLACE[card, index] for index in FOUR]
            moves += [
                _PLACE_HOME[card, foundation] for foundation in FOUR if self._fits(card, foundation)
            ]
        elif self.free:  # PC-8 .. PC-11
            moves += self._transfers()
            moves.append(TURN)
        elif self.pass_number < PASSES and not self.stock:  # PC-13
            moves.append(REDEAL)
        return moves

    def _transfers(self) -> list[Move]:
        """PC-8, PC-9, PC-11: the top n cards of one free corner onto the top of another free
        corner, or under its bottom when it holds cards."""
        moves = []
        for source, target in permutations(self.free, 2):
            heap = self.corners[source]
            onto = self.corners[target]
            for count in range(1, len(heap) + 1):
                card = heap[-count]
                moves.append(transfer(CORNERS[source], CORNERS[target], card, count))
                if onto:
                    moves.append(transfer(CORNERS[source], CORNERS[target], card, count, True))
        return moves

    # -- applying moves --------------------------------------------------------------------

    def _apply(self, move: Move) -> list[Event]:
        source, target = move.source, move.target
        if move.action == "turn":  # PC-10
            self.free = ()
            events = [Event(EventKind.DECLINED, f"no more transfers after {self.seven}")]
        elif move.action == "redeal":  # PC-13
            events = [self._gather()]
        elif source is None or target is None:
            raise AssertionError(f"{move} is neither an action nor a transfer")
        elif source == TURNED:
            events = self._place(target)
        elif target in _FOUNDATION_INDEX:  # PC-6
            card = self.corners[_CORNER_INDEX[source]].pop()
            self.foundations[_FOUNDATION_INDEX[target]].append(card)
            events = [Event(EventKind.HOME, f"{card} played from {source} to {target}", (card,))]
        else:
            events = [self._transfer(move)]
        return events + self._advance()

    def _place(self, target: PileId) -> list[Event]:
        """PC-4: the turned card goes where the player says; a seven opens transfers (PC-8)."""
        card = self.turned
        assert card is not None
        self.turned = None
        if target in _FOUNDATION_INDEX:
            self.foundations[_FOUNDATION_INDEX[target]].append(card)
            kind = EventKind.HOME
        else:
            self.corners[_CORNER_INDEX[target]].append(card)
            kind = EventKind.MOVED
        events = [Event(kind, f"{card} placed on {target}", (card,))]
        if card.rank == SEVEN and any(self.corners):
            self.free, self.seven = FOUR, card
            events.append(
                Event(
                    EventKind.SEVEN,
                    f"{card} is a seven: up to two transfers between corner heaps are open",
                    (card,),
                )
            )
        return events

    def _transfer(self, move: Move) -> Event:
        """PC-8, PC-9: move the top ``count`` cards, order kept; the second transfer may only
        touch the two corners the first left alone."""
        assert move.source is not None and move.target is not None
        source, target = _CORNER_INDEX[move.source], _CORNER_INDEX[move.target]
        heap, onto = self.corners[source], self.corners[target]
        moved = heap[-move.count :]
        del heap[-move.count :]
        if move.bottom:
            onto[:0] = moved
        else:
            onto += moved
        first = len(self.free) == len(FOUR)
        self.free = tuple(i for i in FOUR if i not in (source, target)) if first else ()
        where = "under" if move.bottom else "onto"
        return Event(
            EventKind.MOVED,
            f"{' '.join(map(str, moved))} moved from {move.source} {where} {move.target}",
            tuple(moved),
        )

    # -- refusals --------------------------------------------------------------------------

    def _refusal(self, move: Move) -> str:
        if move.action is not None:
            return self._action_refusal(move.action)
        source, target = move.source, move.target
        assert source is not None and target is not None
        for pile in (source, target):
            if (
                pile not in _CORNER_INDEX
                and pile not in _FOUNDATION_INDEX
                and pile not in (STOCK, TURNED)
            ):
                return f"there is no pile {pile} in Puss in the Corner (the piles are {_PILES})"
        if source == STOCK:
            return "cards are turned from the stock one at a time for you: place the turned card"
        if source in _FOUNDATION_INDEX:
            return "a card on a foundation stays there"
        if target in (STOCK, TURNED):
            return f"no card may be put on {target}: cards go to a corner heap or a foundation"
        if source == TURNED:
            return self._placement_refusal(move)
        return self._corner_refusal(move)

    def _action_refusal(self, action: str) -> str:
        if action == "turn":
            if self.turned is not None:
                return f"{self.turned} is turned: place it on a corner heap or a foundation first"
            if not self.stock and self.pass_number < PASSES:
                return "the stock is out: 'redeal' gathers the corner heaps for the second pass"
            return "'turn' declines the transfers after a seven, and no seven is waiting"
        if action == "redeal":
            if self.pass_number == PASSES:
                return "the heaps are gathered only once, and this is the second pass"
            if self.turned is not None:
                return f"place {self.turned} first: the heaps are gathered when the stock is out"
            if self.stock:
                return f"the heaps are gathered when the stock is out ({len(self.stock)} left)"
            if self.free:
                return f"finish the transfers after {self.seven} first, or 'turn' to decline them"
        return f"'{action}' is not a move in Puss in the Corner"

    def _misfit(self, card: Card, foundation: int) -> str:
        pile, top = FOUNDATIONS[foundation], self.foundations[foundation][-1]
        red = FOUNDATION_RED[foundation]
        if top.rank == KING:
            return f"{pile} is complete up to the king"
        if card.suit.is_red != red:
            return f"{card} is {_colour(not red)} and {pile} builds in {_colour(red)}"
        return (
            f"{card} does not follow {top} on {pile}: it needs a "
            f"{_colour(red)} {RANK_NAMES[top.rank]}"
        )

    def _placement_refusal(self, move: Move) -> str:
        card, target = self.turned, move.target
        assert target is not None
        if card is None:
            if self.free:
                return (
                    f"no card is turned: make a transfer after {self.seven}, or 'turn' to "
                    f"turn the next card"
                )
            return "there is no turned card: the stock is out"
        if move.card is None:
            return f"name the card you place: the turned card is {card}"
        if move.card != card:
            return f"the turned card is {card}, not {move.card}"
        if move.count != 1:
            return "only the one turned card can be placed"
        if move.bottom:
            return "the turned card goes on top of a pile, not under it"
        if target in _FOUNDATION_INDEX:
            return self._misfit(card, _FOUNDATION_INDEX[target])
        return f"{move} is not allowed now"

    def _corner_refusal(self, move: Move) -> str:
        source, target = move.source, move.target
        assert source is not None and target is not None
        heap = self.corners[_CORNER_INDEX[source]]
        if not heap:
            return f"there is no card on {source}"
        if move.count > len(heap):
            return f"{source} holds only {len(heap)} card{'s' if len(heap) > 1 else ''}"
        card = heap[-move.count]
        if move.card != card:
            where = "the top card" if move.count == 1 else f"card {move.count} from the top"
            if move.card is None:
                return f"name the card you move: {where} of {source} is {card}"
            return f"{where} of {source} is {card}, not {move.card}"
        if target in _FOUNDATION_INDEX:
            if move.count != 1:
                return "cards go to a foundation one at a time"
            if move.bottom:
                return "a card goes on top of a foundation, not under it"
            return self._misfit(card, _FOUNDATION_INDEX[target])
        return self._transfer_refusal(move)

    def _transfer_refusal(self, move: Move) -> str:
        source, target = move.source, move.target
        assert source is not None and target is not None
        if source == target:
            return f"{source} cannot be moved onto itself"
        if self.turned is not None and self.turned.rank == SEVEN:
            return f"place {self.turned} first: the transfers after a seven come once it is placed"
        if not self.free:
            return (
                "cards move between corner heaps only after a seven is turned up, before "
                "the next card is turned"
            )
        if _CORNER_INDEX[source] not in self.free or _CORNER_INDEX[target] not in self.free:
            first, second = (CORNERS[index] for index in self.free)
            return (
                f"a heap may not be disturbed twice for {self.seven}: the second transfer "
                f"may only be between {first} and {second}"
            )
        if move.bottom and not self.corners[_CORNER_INDEX[target]]:
            return f"{target} is empty: move the cards onto it without 'bottom'"
        return f"{move} is not allowed now"

    # -- what the player sees --------------------------------------------------------------

    def _pile_state(self, pile: PileId) -> PileState:
        if pile in _FOUNDATION_INDEX:
            return PileState.open(pile, self.foundations[_FOUNDATION_INDEX[pile]])
        if pile in _CORNER_INDEX:
            return PileState.open(pile, self.corners[_CORNER_INDEX[pile]])
        if pile == STOCK:
            return PileState.closed(STOCK, self.stock)  # PC-16: even when gathered
        return PileState.open(TURNED, [] if self.turned is None else [self.turned])

    def foundation_count(self) -> int:
        """PC-20: cards on the foundations, the four aces included."""
        return sum(len(pile) for pile in self.foundations)

    def _notes(self) -> list[str]:
        notes = [f"pass {self.pass_number} of {PASSES}, {len(self.stock)} cards in the stock"]
        if self.turned is not None:
            notes.append(f"place {self.turned} on a corner heap or a foundation")
        elif len(self.free) == len(FOUR):
            notes.append(f"{self.seven}: transfer cards between two corner heaps, or 'turn'")
        elif self.free:
            first, second = (CORNERS[index] for index in self.free)
            notes.append(f"{self.seven}: a second transfer between {first} and {second}, or 'turn'")
        elif not self.stock and self.pass_number < PASSES:
            notes.append("the stock is out: play corner tops home, then 'redeal'")
        return notes

    def _lost_reason(self) -> str:
        return "the second pass is over and no card can go home"

    def _state(self) -> dict[str, Any]:
        return {
            "pass": self.pass_number,
            "transfer_corners": [str(CORNERS[index]) for index in self.free],
            "seven": None if self.seven is None else str(self.seven),
        }

    def _restore(self, piles: dict[PileId, list[Card]], state: StateReader) -> None:
        self.foundations = [piles[pile] for pile in FOUNDATIONS]
        for pile, cards in zip(FOUNDATIONS, self.foundations, strict=True):
            starts_with_ace(pile, cards)
        self.corners = [piles[pile] for pile in CORNERS]
        self.stock = piles[STOCK]
        at_most(TURNED, piles[TURNED], 1)
        self.turned = piles[TURNED][0] if piles[TURNED] else None
        self.pass_number = state.number("pass", 1, PASSES)
        self.free = tuple(sorted(state.piles("transfer_corners", CORNERS)))
        if len(self.free) not in (0, 2, 4):
            raise InvalidPositionError(
                "state: transfer_corners names none, two or all four corners (PC-8, PC-9)"
            )
        self.seven = state.card("seven")
