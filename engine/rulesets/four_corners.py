"""The Four Corners (Lady Cadogan's Illustrated Games of Patience, No. 33).

Two packs. Twelve heaps in two columns of six (a corner, four side heaps, a corner) frame eight
foundations: for each suit, in its own row, an ace built up and a king built down. The cards are
dealt one at a time round the twelve heaps; during a deal only the card just turned may go home,
from a corner to any foundation it fits, from a side heap only to the foundation next to it.
After a deal the top cards play freely: home, or onto a heap one rank above or below in suit.
Two redeals, without shuffling, when the player chooses.

Rule ids (FC-n) are those of docs/rules/four-corners.md; RULINGS.md section "four-corners".
Foundation indexes: 0..3 are ace:1..4 (spades, hearts, diamonds, clubs), 4..7 king:1..4; each
foundation's next wanted rank is kept in ``self.need`` (0 or 14 once it is complete).
"""

from __future__ import annotations

from typing import Any, ClassVar

from engine.cards import ACE, KING, RANK_NAMES, Card, Suit
from engine.game import Game
from engine.moves import REDEAL, Move
from engine.piles import PileId, numbered
from engine.view import Event, PileState, Slot

LEFT = numbered("left", 6)
RIGHT = numbered("right", 6)
HEAPS = LEFT + RIGHT
"""The twelve heaps in deal order (FC-3): left column top to bottom, then the right column."""
ACES = numbered("ace", 4)
KINGS = numbered("king", 4)
FOUNDATIONS = ACES + KINGS
STOCK = PileId("stock")
TURNED = PileId("turned")

DEALS = 3
"""The first deal and at most two redeals (FC-15)."""
CORNERS = frozenset({0, 5, 6, 11})
NEXT_TO: tuple[int | None, ...] = (None, 0, 1, 2, 3, None, None, 4, 5, 6, 7, None)
"""For each heap, the foundation it lies next to (FC-2); None for a corner, next to none."""

HEAP_INDEX = {pile: index for index, pile in enumerate(HEAPS)}
FOUNDATION_INDEX = {pile: index for index, pile in enumerate(FOUNDATIONS)}
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
SUIT_LETTERS = "SHDC"
DEALT_TO = tuple(f" dealt to {pile}" for pile in HEAPS)
"""Event texts are built from parts made once: the deal reports every card (FC-13)."""

PILES = (*HEAPS, *FOUNDATIONS, TURNED)
"""Move sources and targets by number: heaps 0..11, foundations 12..19, turned 20."""
ACE_AT, KING_AT, TURNED_AT = 12, 16, 20
_MOVES: dict[int, Move] = {}
"""Moves made once and reused: building a ``Move`` validates it, and a position lists many."""


def _move(source: int, target: int, card: Card, key: int) -> Move:
    """The move of ``card`` (whose ``key`` is rank * 4 + suit row) from ``PILES[source]`` to
    ``PILES[target]``."""
    cache_key = (source * 32 + target) * 64 + key
    move = _MOVES.get(cache_key)
    if move is None:
        move = _MOVES[cache_key] = Move(PILES[source], PILES[target], card)
    return move


def _heap_label(index: int) -> str:
    return f"corner {HEAPS[index]}" if index in CORNERS else str(HEAPS[index])


def _heap_name(index: int) -> str:
    return f"{'corner' if index in CORNERS else 'side heap'} {HEAPS[index]}"


class FourCorners(Game):
    name = "four-corners"
    title = "The Four Corners"
    source = "Lady Adelaide Cadogan, Illustrated Games of Patience, No. 33: The Four Corners"
    packs = 2
    total_cards = 104
    layout: ClassVar[tuple[Slot, ...]] = (
        *(Slot(LEFT[row], row, 0, "none", _heap_label(row)) for row in range(6)),
        *(Slot(ACES[row], row + 1, 1, "none", f"{ACES[row]} {suit.name} up")
          for row, suit in enumerate(Suit)),
        *(Slot(KINGS[row], row + 1, 2, "none", f"{KINGS[row]} {suit.name} down")
          for row, suit in enumerate(Suit)),
        *(Slot(RIGHT[row], row, 3, "none", _heap_label(6 + row)) for row in range(6)),
        Slot(STOCK, 5, 1),
        Slot(TURNED, 5, 2),
    )

    # -- state and dealing -----------------------------------------------------------------

    def _setup(self, taken_out: list[Card], stock: list[Card]) -> list[Event]:
        self.heaps: list[list[Card]] = [[] for _ in HEAPS]
        self.foundations: list[list[Card]] = [[] for _ in FOUNDATIONS]
        self.need: list[int] = [ACE] * 4 + [KING] * 4
        self.stock: list[Card] = stock[::-1]
        """Face down, top (the next card dealt) last."""
        self.turned: list[Card] = []
        """The card just turned while it waits for the player to choose its foundation."""
        self.next_heap = 0
        """The heap the next card turned falls to."""
        self.deal = 1
        return self._deal()

    def _deal(self) -> list[Event]:
        """Turn cards round the heaps until the stock is out or a card needs a choice."""
        events: list[Event] = []
        stock, need = self.stock, self.need
        while stock:
            card = stock.pop()
            heap = self.next_heap
            rank, row = card.rank, card.suit.value
            if rank == ACE and need[row] == ACE:
                targets: tuple[int, ...] = (row,)  # FC-4: the first ace of its suit
            elif rank == KING and need[row + 4] == KING:
                targets = (row + 4,)  # FC-4: the first king of its suit
            else:
                targets = self._deal_targets(rank, row, heap)
            if not targets:  # FC-3
                self.heaps[heap].append(card)
                self.next_heap = (heap + 1) % 12
                text = RANK_NAMES[rank - 1] + SUIT_LETTERS[row] + DEALT_TO[heap]
                events.append(Event("dealt", text, (card,)))
            elif len(targets) == 1:  # FC-5, FC-7: the next card goes to the same heap
                self._home(card, targets[0])
                events.append(Event("home", f"{card} turned for {HEAPS[heap]}, placed on "
                                            f"{FOUNDATIONS[targets[0]]}", (card,)))
            else:  # FC-6
                self.turned.append(card)
                events.append(Event("choose", f"{card} turned for {_heap_name(heap)} fits "
                                              f"{ACES[row]} and {KINGS[row]}: choose", (card,)))
                return events
        events.append(Event("deal-complete", f"deal {self.deal} of {DEALS} complete"))
        return events

    def _deal_targets(self, rank: int, row: int, heap: int) -> tuple[int, ...]:
        """Foundations a card of ``rank`` in suit ``row``, turned for ``heap``, goes to during a
        deal (FC-5)."""
        up, down = self.need[row] == rank, self.need[row + 4] == rank
        beside = NEXT_TO[heap]
        if beside is None:
            return (row, row + 4) if up and down else (row,) if up else (row + 4,) if down else ()
        if (up and beside == row) or (down and beside == row + 4):
            return (beside,)
        return ()

    def _home(self, card: Card, foundation: int) -> None:
        self.foundations[foundation].append(card)
        self.need[foundation] += 1 if foundation < 4 else -1

    # -- the hooks -------------------------------------------------------------------------

    def _moves(self) -> list[Move]:
        if self.turned:
            card = self.turned[0]
            rank, row = card.rank, card.suit.value
            return [_move(TURNED_AT, ACE_AT + f, card, rank * 4 + row)
                    for f in self._deal_targets(rank, row, self.next_heap)]
        moves: list[Move] = []
        need = self.need
        by_key: dict[int, list[int]] = {}
        keys: list[int] = []
        for index, heap in enumerate(self.heaps):
            if not heap:
                keys.append(0)
                continue
            card = heap[-1]
            rank, row = card.rank, card.suit.value
            key = rank * 4 + row
            if need[row] == rank:  # FC-9
                moves.append(_move(index, ACE_AT + row, card, key))
            if need[row + 4] == rank:
                moves.append(_move(index, KING_AT + row, card, key))
            keys.append(key)
            by_key.setdefault(key, []).append(index)
        for index, key in enumerate(keys):  # FC-10
            if key:
                card = self.heaps[index][-1]
                for neighbour in (key + 4, key - 4):
                    for target in by_key.get(neighbour, ()):
                        moves.append(_move(index, target, card, key))
        if self.deal < DEALS:  # FC-14, FC-15
            moves.append(REDEAL)
        return moves

    def _apply(self, move: Move) -> list[Event]:
        if move.action == "redeal":
            return self._redeal()
        target = move.target
        assert move.source is not None and target is not None
        if move.source == TURNED:  # FC-6
            self._home(self.turned.pop(), FOUNDATION_INDEX[target])
            return self._deal()
        card = self.heaps[HEAP_INDEX[move.source]].pop()
        if target in FOUNDATION_INDEX:
            self._home(card, FOUNDATION_INDEX[target])
        else:
            self.heaps[HEAP_INDEX[target]].append(card)
        return []

    def _redeal(self) -> list[Event]:
        """FC-14: gather in deal order, each heap's lowest card first, and deal again."""
        gathered = [card for heap in self.heaps for card in heap]
        self.stock = gathered[::-1]
        for heap in self.heaps:
            heap.clear()
        self.next_heap = 0
        self.deal += 1
        return [Event("gathered", f"the heaps are gathered, left:1 first, for deal {self.deal} "
                                  f"of {DEALS}"), *self._deal()]

    def _refusal(self, move: Move) -> str:
        if move.action is not None:
            return self._refuse_action(move.action)
        source, target = move.source, move.target
        assert source is not None and target is not None
        known = HEAP_INDEX.keys() | FOUNDATION_INDEX.keys() | {STOCK, TURNED}
        for pile in (source, target):
            if pile not in known:
                return (f"there is no pile {pile} in this game: the heaps are left:1..6 and "
                        f"right:1..6, the foundations ace:1..4 and king:1..4")
        if self.turned:
            return self._refuse_during_choice(move)
        if source == STOCK:
            return "the stock is empty: the deal is complete"
        if source == TURNED:
            return "no turned card is waiting: the deal is complete"
        if source in FOUNDATION_INDEX:
            return f"cards on a foundation stay there ({source})"
        heap = self.heaps[HEAP_INDEX[source]]
        if not heap:
            return f"there is no card on {source}"
        card = heap[-1]
        if move.card is None:
            return f"name the card you move: {card} {source} -> {target}"
        if move.card != card:
            return f"the top card of {source} is {card}, not {move.card}"
        if move.count != 1:
            return "cards move one at a time"
        if move.bottom:
            return "a card goes on top of a pile, never under it"
        if target == source:
            return f"{card} is already on {source}"
        if target in FOUNDATION_INDEX:
            return self._refuse_foundation(card, FOUNDATION_INDEX[target])
        if target not in HEAP_INDEX:
            return f"no card may be put on {target}"
        other = self.heaps[HEAP_INDEX[target]]
        if not other:
            return f"{target} is empty, and an emptied heap stays empty"
        if card.suit == other[-1].suit and {card.rank, other[-1].rank} == {ACE, KING}:
            return "there is no wrap: an ace does not go on a king, nor a king on an ace"
        return f"{card} is not one rank above or below {other[-1]} in the same suit"

    def _refuse_action(self, action: str) -> str:
        if action != "redeal":
            return f"there is no '{action}' in The Four Corners: the only action is redeal"
        if self.turned:
            return f"the deal is not complete: first choose a foundation for {self.turned[0]}"
        return "no redeal left: the two redeals have been used"

    def _refuse_during_choice(self, move: Move) -> str:
        card = self.turned[0]
        choices = " or ".join(str(m.target) for m in self._moves())
        if move.source != TURNED:
            return (f"{card} has just been turned and must go home first: choose {choices}; "
                    f"during a deal only the card just turned may go to a foundation")
        if move.card != card:
            return f"the turned card is {card}" + (f", not {move.card}" if move.card else "")
        if move.count != 1 or move.bottom:
            return f"{card} moves alone, on top of {choices}"
        return f"{card} must go to {choices}, not {move.target}"

    def _refuse_foundation(self, card: Card, foundation: int) -> str:
        pile, cards = FOUNDATIONS[foundation], self.foundations[foundation]
        if foundation % 4 != card.suit.value:
            return f"{pile} is built in {SUIT_NAMES[foundation % 4]}, not with {card}"
        if self.need[foundation] in (0, 14):
            return f"{pile} is complete"
        if not cards:
            return f"{pile} is empty: only its {'ace' if foundation < 4 else 'king'} may start it"
        return f"{card} does not follow {cards[-1]} on {pile}"

    def _table(self) -> list[PileState]:
        return [
            *(PileState.open(pile, heap) for pile, heap in zip(HEAPS, self.heaps, strict=True)),
            *(PileState.open(pile, cards)
              for pile, cards in zip(FOUNDATIONS, self.foundations, strict=True)),
            PileState.closed(STOCK, self.stock),
            PileState.open(TURNED, self.turned),
        ]

    def foundation_count(self) -> int:
        """Cards on the foundations: an ace foundation holds ``need - 1``, a king foundation
        ``13 - need``."""
        need = self.need
        return need[0] + need[1] + need[2] + need[3] - need[4] - need[5] - need[6] - need[7] + 48

    def _notes(self) -> list[str]:
        deal = f"deal {self.deal} of {DEALS}"
        if self.turned:
            card = self.turned[0]
            choices = " or ".join(str(m.target) for m in self._moves())
            return [f"{deal}: {card} turned for {_heap_name(self.next_heap)}; choose {choices}"]
        left = DEALS - self.deal
        redeals = f"{left} redeal{'s' if left != 1 else ''} left" if left else "no redeal left"
        return [f"{deal} complete: play top cards home or onto a heap in suit; {redeals}"]

    def _extra_state(self) -> dict[str, Any]:
        return {"deal": self.deal, "redeals_left": DEALS - self.deal,
                "next_heap": str(HEAPS[self.next_heap])}
