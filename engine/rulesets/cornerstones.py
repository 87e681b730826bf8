"""Cornerstones (Four Corners after Morehead & Mott-Smith and Arnold): docs/rules/cornerstones.md.

Two packs are dealt into two columns of six piles. The top and bottom pile of each column are the
cornerstones; the four side piles between them are level with the four foundation lines, each
line holding the ace place and the king place of one suit. While dealing, a turned card that fits
a foundation is played there at once: from a cornerstone to any foundation, from a side pile only
on that pile's line. After the deal, top cards go home freely, build on each other up or down
regardless of suit (round the corner), and a suit's two foundations may trade cards when they
meet. ``CornerstonesArnold`` adds two redeals (docs/rules/cornerstones-arnold.md).

Rule ids: CS-n and CA-n of those pages. State: ``piles`` in deal order (right:1..6 then
left:1..6), ``foundations`` (ace:1..4 then king:1..4, so foundation ``f`` lies on line ``f % 4``:
engine/rulesets/corners_common.py), ``line_suits`` (the suit each line was given, or None),
``stock`` (the next card to turn last), ``turned`` (a card waiting for the player's choice during
a deal), ``next_pile`` and ``redeals_used``. The engine deals on until a card waits in ``turned``
or the stock is out, so a deal is in progress exactly when ``turned`` holds a card.
"""

from __future__ import annotations

from typing import Any, ClassVar

from engine.cards import ACE, KING, Card, Suit
from engine.game import Game
from engine.moves import REDEAL, Move, transfer
from engine.piles import PileId
from engine.position import StateReader, at_most
from engine.rulesets.corners_common import (
    ACES,
    FOUNDATION_INDEX,
    FOUNDATIONS,
    KINGS,
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

PILES = RIGHT + LEFT
"""The twelve piles in deal order (CS-4: right column top to bottom, then the left)."""
PILE_INDEX = {pile: index for index, pile in enumerate(PILES)}
PILE_LINE: tuple[int | None, ...] = tuple(
    None if is_corner(index % 6) else index % 6 - 1 for index in range(12)
)
"""The foundation line (0..3) level with each pile; None for the four cornerstones."""
NEIGHBOURS = {rank: (rank % 13 + 1, (rank - 2) % 13 + 1) for rank in range(ACE, KING + 1)}
"""Ranks one above and one below, round the corner: the ace lies next to the two and the king."""


class Cornerstones(Game):
    name = "cornerstones"
    title = "Cornerstones"
    source = (
        "Four Corners (patience), encyclopedia article after Morehead & Mott-Smith, "
        "The Complete Book of Solitaire and Patience Games, and Arnold, Card Games for One"
    )
    packs = 2
    total_cards = 104
    layout: ClassVar[tuple[Slot, ...]] = layout("cornerstone")
    pile_ids = (*PILES, *FOUNDATIONS, STOCK, TURNED)
    redeals: ClassVar[int] = 0
    """How many times the piles may be gathered and dealt again (Arnold's version: two)."""

    def _setup(self, taken_out: list[Card], stock: list[Card]) -> list[Event]:
        self.piles: list[list[Card]] = [[] for _ in PILES]
        self.foundations: list[list[Card]] = [[] for _ in FOUNDATIONS]
        self.line_suits: list[Suit | None] = [None] * 4
        self.stock: list[Card] = stock[::-1]
        self.turned: list[Card] = []
        self.next_pile = 0
        self.redeals_used = 0
        return self._deal()

    # -- the rules ---------------------------------------------------------------------------

    def _fits(self, card: Card, place: int) -> bool:
        """Whether ``card`` may go on foundation ``place`` by suit and rank, deal restrictions
        aside (CS-5 to CS-7). An empty place takes only its starting ace or king, of the suit its
        line was given, or of a suit that has no line yet if the line is free."""
        if card.rank != next_rank(self.foundations[place], place):
            return False
        suit = self.line_suits[place % 4]
        return card.suit is suit if suit is not None else card.suit not in self.line_suits

    def _line_of(self, suit: Suit) -> int | None:
        return self.line_suits.index(suit) if suit in self.line_suits else None

    def _deal_targets(self, card: Card, pile: int) -> list[int]:
        """Foundations a card turned for ``pile`` goes to during a deal. A first ace or king
        goes to any free line, and its partner to the same line, whatever the pile (CS-5, CS-6);
        any other card goes to a foundation it fits, any from a cornerstone, only its line's
        from a side pile (CS-8, CS-9)."""
        line = self._line_of(card.suit)
        if line is None:
            return [place for place in range(8) if self._fits(card, place)]
        places = (line, line + 4)
        starts = [
            place for place in places if not self.foundations[place] and self._fits(card, place)
        ]
        if starts:
            return starts
        pile_line = PILE_LINE[pile]
        return [
            place
            for place in places
            if self._fits(card, place) and (pile_line is None or pile_line == line)
        ]

    def _moves(self) -> list[Move]:
        """While a card waits, only its places (CS-10, CS-12); after a deal, top cards to piles
        (CS-14 to CS-16) and foundations (CS-13), reversals (CS-17, CS-18) and redeal (CA-2)."""
        if self.turned:
            card = self.turned[0]
            return [
                transfer(TURNED, FOUNDATIONS[place], card)
                for place in self._deal_targets(card, self.next_pile)
            ]
        moves = []
        by_rank: dict[int, list[int]] = {}
        for index, pile in enumerate(self.piles):
            if pile:
                by_rank.setdefault(pile[-1].rank, []).append(index)
        for index, pile in enumerate(self.piles):
            if pile:
                for rank in NEIGHBOURS[pile[-1].rank]:
                    for other in by_rank.get(rank, ()):
                        moves.append(transfer(PILES[index], PILES[other], pile[-1]))
        # Every foundation has its ace or king once a deal is over: each first ace and king
        # of a suit is played home the moment it is turned, and never leaves.
        foundations = self.foundations
        for place, cards in enumerate(foundations):
            top = cards[-1]
            for index in by_rank.get(next_rank(cards, place), ()):
                card = self.piles[index][-1]
                if card.suit is top.suit:
                    moves.append(transfer(PILES[index], FOUNDATIONS[place], card))
        for line in range(4):
            ace_place, king_place = foundations[line], foundations[line + 4]
            if ace_place[-1].rank + 1 == king_place[-1].rank:
                if len(ace_place) > 1:
                    moves.append(transfer(ACES[line], KINGS[line], ace_place[-1]))
                if len(king_place) > 1:
                    moves.append(transfer(KINGS[line], ACES[line], king_place[-1]))
        if self.redeals_used < self.redeals:
            moves.append(REDEAL)
        return moves

    # -- applying moves ----------------------------------------------------------------------

    def _cards_of(self, pile: PileId) -> list[Card]:
        """The cards of a pile, foundation, ``turned`` or the stock."""
        if pile in PILE_INDEX:
            return self.piles[PILE_INDEX[pile]]
        if pile in FOUNDATION_INDEX:
            return self.foundations[FOUNDATION_INDEX[pile]]
        return self.stock if pile == STOCK else self.turned

    def _home(self, card: Card, place: int) -> str:
        """Put ``card`` on foundation ``place``; return a remark if it gave its line a suit."""
        self.foundations[place].append(card)
        if self.line_suits[place % 4] is not None:
            return ""
        self.line_suits[place % 4] = card.suit
        return f": line {place % 4 + 1} holds {SUIT_NAMES[card.suit]}"

    def _apply(self, move: Move) -> list[Event]:
        if move.action == "redeal":
            return self._redeal()
        assert move.source is not None and move.target is not None
        card = self._cards_of(move.source).pop()
        remark, kind = "", EventKind.MOVED
        if move.target in FOUNDATION_INDEX:
            remark, kind = self._home(card, FOUNDATION_INDEX[move.target]), EventKind.HOME
        else:
            self.piles[PILE_INDEX[move.target]].append(card)
        events = [Event(kind, f"{card} from {move.source} to {move.target}{remark}", (card,))]
        if move.source == TURNED:
            events += self._deal()
        return events

    def _deal(self) -> list[Event]:
        """Turn cards from the stock onto the piles in rotation (CS-4), playing each card that
        fits a foundation it may go to, until a card fits two (the player chooses, CS-10) or the
        stock is out. A card played home does not use up its pile's turn (CS-11)."""
        events = []
        self._mark_changed(STOCK)
        while self.stock:
            card = self.stock.pop()
            pile = self.next_pile
            targets = self._deal_targets(card, pile)
            if not targets:
                self._mark_changed(PILES[pile])
                self.piles[pile].append(card)
                self.next_pile = (pile + 1) % len(PILES)
                events.append(dealt_event(card, PILES[pile]))
            elif len(targets) == 1:
                self._mark_changed(FOUNDATIONS[targets[0]])
                remark = self._home(card, targets[0])
                events.append(
                    Event(
                        EventKind.HOME,
                        f"{card} turned for {PILES[pile]}, placed on "
                        f"{FOUNDATIONS[targets[0]]}{remark}",
                        (card,),
                    )
                )
            else:
                self._mark_changed(TURNED)
                self.turned.append(card)
                names = [str(FOUNDATIONS[place]) for place in targets]
                places = ", ".join(names[:-1]) + " or " + names[-1]
                events.append(
                    Event(
                        EventKind.CHOOSE,
                        f"{card} turned for {PILES[pile]}: choose {places}",
                        (card,),
                    )
                )
                return events
        events.append(Event(EventKind.DEAL_COMPLETE, "the deal is complete: build freely"))
        return events

    def _redeal(self) -> list[Event]:
        """Gather the piles in deal order, the lowest card of each first, and deal again into
        all twelve piles under the deal's rules (CA-3, CA-4)."""
        self.redeals_used += 1
        self._mark_changed(*PILES, STOCK)
        self.stock = gather(self.piles)
        self.next_pile = 0
        text = f"redeal {self.redeals_used} of {self.redeals}: the piles are gathered and dealt"
        return [Event(EventKind.REDEAL, text), *self._deal()]

    # -- refusals ----------------------------------------------------------------------------

    def _refusal(self, move: Move) -> str:
        if move.action == "redeal":
            return self._redeal_refusal()
        if move.action is not None:
            only = "; the only action is redeal" if self.redeals else ""
            return (
                f"there is no '{move.action}' in {self.title}: the engine deals every card "
                f"itself{only}"
            )
        wrong = unknown_pile(move)
        if wrong:
            return wrong
        source, target = move.source, move.target
        assert source is not None and target is not None
        if source == STOCK:
            return "the engine deals the stock itself, one card at a time, onto the piles in turn"
        cards = self._cards_of(source)
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
        if target in (STOCK, TURNED):
            return f"no card may be put on {target}"
        if self.turned:
            return self._deal_refusal(card, source, target)
        if target in PILE_INDEX:
            return self._build_refusal(card, source, target)
        return self._home_refusal(card, source, FOUNDATION_INDEX[target])

    def _redeal_refusal(self) -> str:
        if not self.redeals:
            return f"{self.title} has no redeal"
        if self.redeals_used >= self.redeals:
            return f"all {self.redeals} redeals have been used"
        return "a redeal may be made only when the deal is complete"

    def _deal_refusal(self, card: Card, source: PileId, target: PileId) -> str:
        """Refusals while a turned card waits: every place it may go to is a legal move."""
        if source != TURNED:
            return (
                f"during the deal only the card just turned moves, and the piles wait until "
                f"the deal is complete: choose a foundation for {self.turned[0]} first"
            )
        if target in PILE_INDEX:
            return f"{card} fits a foundation, so it is played there, not dealt to a pile"
        return self._misfit(card, FOUNDATION_INDEX[target])

    def _build_refusal(self, card: Card, source: PileId, target: PileId) -> str:
        if source in FOUNDATION_INDEX:
            return "cards on the foundations never go back to the piles"
        under = self.piles[PILE_INDEX[target]]
        if not under:
            return f"{target} is empty, and an emptied pile stays empty"
        return (
            f"{card} is not one rank above or below {under[-1]} on {target} (the ace lies "
            f"between the king and the two)"
        )

    def _home_refusal(self, card: Card, source: PileId, place: int) -> str:
        if source in FOUNDATION_INDEX:
            line = FOUNDATION_INDEX[source] % 4
            partner = FOUNDATIONS[(FOUNDATION_INDEX[source] + 4) % 8]
            if place % 4 != line:
                return (
                    f"a card on {source} may move only to {partner}, the other foundation "
                    f"of its suit (a reversal)"
                )
            if len(self.foundations[FOUNDATION_INDEX[source]]) == 1:
                return f"{card} started {source} and stays there"
        return self._misfit(card, place)

    def _misfit(self, card: Card, place: int) -> str:
        """Why ``card`` does not fit foundation ``place`` by suit and rank."""
        target, line = FOUNDATIONS[place], place % 4 + 1
        suit = self.line_suits[place % 4]
        start = "ace" if place < 4 else "king"
        if suit is None:
            own_line = self._line_of(card.suit)
            if own_line is not None:
                return f"{SUIT_NAMES[card.suit]} are on line {own_line + 1}, not line {line}"
            return f"line {line} is free: only the first {start} of a suit starts {target}"
        if card.suit is not suit:
            return f"line {line} holds {SUIT_NAMES[suit]}, not {SUIT_NAMES[card.suit]}"
        pile = self.foundations[place]
        if not pile:
            return f"{target} starts with the {start} of {SUIT_NAMES[suit]}"
        way = "up" if place < 4 else "down"
        return f"{card} does not follow {pile[-1]} on {target}, which builds {way} in suit"

    # -- what the player sees ----------------------------------------------------------------

    def _pile_state(self, pile: PileId) -> PileState:
        return pile_state(pile, self._cards_of(pile))

    def foundation_count(self) -> int:
        return sum(map(len, self.foundations))

    def _notes(self) -> list[str]:
        deal = f"deal {self.redeals_used + 1} of {self.redeals + 1}" if self.redeals else "the deal"
        if self.turned:
            return [
                f"{deal}: choose a foundation for {self.turned[0]}, turned for "
                f"{PILES[self.next_pile]}"
            ]
        left = self.redeals - self.redeals_used
        redeals = "" if not self.redeals else f"; {left} redeal{'s' * (left != 1)} left"
        return [f"{deal} is complete: build freely{redeals}"]

    def _lost_reason(self) -> str:
        return "no legal move left" + (" and no redeal left" if self.redeals else "")

    def _state(self) -> dict[str, Any]:
        return {
            "next_pile": str(PILES[self.next_pile]),
            "redeals_used": self.redeals_used,
            "line_suits": [None if suit is None else str(suit) for suit in self.line_suits],
        }

    def _restore(self, piles: dict[PileId, list[Card]], state: StateReader) -> None:
        self.piles = [piles[pile] for pile in PILES]
        self.foundations = [piles[pile] for pile in FOUNDATIONS]
        self.line_suits = state.suits("line_suits", 4)
        self.stock = piles[STOCK]
        self.turned = piles[TURNED]
        at_most(TURNED, self.turned, 1)
        self.next_pile = state.pile("next_pile", PILES)
        self.redeals_used = state.number("redeals_used", 0, self.redeals)


class CornerstonesArnold(Cornerstones):
    name = "cornerstones-arnold"
    title = "Cornerstones (Arnold)"
    source = (
        "Four Corners (patience), encyclopedia article, Arnold's variation, "
        "after Card Games for One"
    )
    redeals = 2
