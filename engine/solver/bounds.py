"""Proofs of loss without search: ``dead_end(game)`` is True only for a position from which no
legal line wins (docs/solver.md, "Bounds"). The search treats such a position as one with no
moves; a deal whose opening position is a dead end is lost at once.

**The Octagon: a card buried over both copies it needs.** Cards leave an auxiliary heap only by
going home from its top (OC-7, OC-9; a run, OC-10, goes home top card first), and nothing is
ever put under a card of a heap. So every card now beneath card ``c`` in its heap goes home after
``c``. ``c`` (suit s, rank r) goes home onto a foundation of suit s showing r-1 (OC-4), so that
foundation then holds one card of every rank below r. Let the suit's two foundations show ranks
a <= b. If b < r, whichever foundation takes ``c`` must first take a card of each rank q with
b < q < r, and both cards of such a rank are still out; if both lie beneath ``c``, neither can go
home before ``c``: ``c`` never goes home. If b >= r, ``c`` can only go on the lower foundation,
which must first take a card of each rank q with a < q < r, of which only one card is still out
(the other lies on the higher foundation); if that one lies beneath ``c``, ``c`` never goes home.
A game is won only with all 104 cards home (OC-15), so either way the position is lost, whatever
is done and whatever the hidden cards are.

**The Octagon: a race to the foundations alone** (``octagon_reach``). Take a relaxed game: the
waste and stock cards may go home at any time in any order, a card of an auxiliary heap once
every card now above it has gone home, and a suit's two foundations count as one pile that
takes a card of any rank up to one above the higher of them. Every winning line of the real
game, read as the order in which its cards go home, is a winning line of the relaxed game: a
card goes home in the real game only after the cards above it on its heap (those above it now,
and any put on it later), and only onto a foundation showing the rank below, which needs a card
of every rank between the suit's higher foundation now and it home first. The relaxed game is
decided by bringing home whatever it can (a card home there only raises what it can take and
uncovers cards: it never takes a possibility away), so if it leaves a card out, no line of the
real game wins. It ignores the order of the stock and the waste and the three deals, so it is
weak at the deal (it proves about 12% of deals lost there) and stronger deep in a search, where
cards have been built onto the heaps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.game import Game


def octagon_buried(game: Any) -> bool:
    foundations = game.foundations
    for heap in game.aux:
        if len(heap) < 2:
            continue
        beneath: dict[tuple[int, int], int] = {}
        for card in heap:
            suit, rank = card.suit.value, card.rank
            if beneath:
                low, high = sorted((len(foundations[2 * suit]), len(foundations[2 * suit + 1])))
                if high < rank:
                    if any(beneath.get((suit, q), 0) >= 2 for q in range(high + 1, rank)):
                        return True
                elif any(beneath.get((suit, q), 0) >= 1 for q in range(low + 1, rank)):
                    return True
            beneath[suit, rank] = beneath.get((suit, rank), 0) + 1
    return False


def octagon_reach(game: Any) -> bool:
    """The Octagon as a race to the foundations alone (docs/solver.md): every card off the
    auxiliary heaps free, a heap's cards free once every card above them is home, and a suit's
    foundations one pile that takes any card at most one above the highest of them. Every
    winning line of the real game is a line of this one (each card goes home in the real game
    only when the cards above it have gone and a foundation shows the rank below), so if this
    one cannot bring every card home, neither can the real game."""
    level = [max(len(game.foundations[2 * suit]), len(game.foundations[2 * suit + 1]))
             for suit in range(4)]
    free: list[set[int]] = [set(), set(), set(), set()]
    for card in (*game.waste, *game.stock):
        free[card.suit.value].add(card.rank)
    heaps = [list(heap) for heap in game.aux]
    grew = True
    while grew:
        grew = False
        for suit in range(4):
            while level[suit] + 1 in free[suit]:
                level[suit] += 1
                grew = True
        for heap in heaps:
            while heap and heap[-1].rank <= level[heap[-1].suit.value] + 1:
                card = heap.pop()
                suit = card.suit.value
                if card.rank == level[suit] + 1:
                    level[suit] += 1
                    grew = True
                    while level[suit] + 1 in free[suit]:
                        level[suit] += 1
    return any(heaps) or min(level) < 13


def _octagon_bounds(game: Any) -> bool:
    return octagon_buried(game) or octagon_reach(game)


BOUNDS: dict[str, Callable[[Any], bool]] = {"octagon": _octagon_bounds}


def dead_end(game: Game) -> bool:
    """Whether ``game``'s position is proved lost by a bound (see the module's text); False
    says nothing."""
    bound = BOUNDS.get(game.name)
    return bound is not None and bound(game)


def bound_function(game: Game) -> Callable[[Game], bool] | None:
    """The bound for ``game``'s rule set, looked up once (None when it has none)."""
    return BOUNDS.get(game.name)

