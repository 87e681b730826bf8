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

Stacks = list[list[tuple[int, int]]]
"""Heaps whose cards leave only by going home from the top: each a list of (group, rank),
bottom first. A group is what a pair of foundations builds in: a suit, or a colour."""


def buried(heights: list[tuple[int, int]], stacks: Stacks) -> bool:
    """Whether some card of ``stacks`` lies over every card still out of a rank it needs
    (docs/solver.md, "Buried over what it needs"); ``heights`` gives each group's two
    foundations' top ranks."""
    for stack in stacks:
        if len(stack) < 2:
            continue
        beneath: dict[tuple[int, int], int] = {}
        for group, rank in stack:
            if beneath:
                low, high = sorted(heights[group])
                if high < rank:
                    if any(beneath.get((group, q), 0) >= 2 for q in range(high + 1, rank)):
                        return True
                elif any(beneath.get((group, q), 0) >= 1 for q in range(low + 1, rank)):
                    return True
            beneath[group, rank] = beneath.get((group, rank), 0) + 1
    return False


def unreachable(
    heights: list[tuple[int, int]], stacks: Stacks, free: list[tuple[int, int]]
) -> bool:
    """Whether the race to the foundations alone (docs/solver.md) leaves a card out: ``free``
    cards go home at any time, a stack's cards once those above them are home, a group's
    foundations act as one pile taking any card up to one above the higher of them."""
    level = [max(pair) for pair in heights]
    loose: list[set[int]] = [set() for _ in heights]
    for group, rank in free:
        loose[group].add(rank)
    piles = [list(stack) for stack in stacks]
    grew = True
    while grew:
        grew = False
        for group, ranks in enumerate(loose):
            while level[group] + 1 in ranks:
                level[group] += 1
                grew = True
        for pile in piles:
            while pile and pile[-1][1] <= level[pile[-1][0]] + 1:
                group, rank = pile.pop()
                if rank == level[group] + 1:
                    level[group] += 1
                    grew = True
                    while level[group] + 1 in loose[group]:
                        level[group] += 1
    return any(piles) or min(level) < 13


def _octagon_parts(game: Any) -> tuple[list[tuple[int, int]], Stacks]:
    f = game.foundations
    heights = [(len(f[2 * suit]), len(f[2 * suit + 1])) for suit in range(4)]
    return heights, [[(card.suit.value, card.rank) for card in heap] for heap in game.aux]


def octagon_buried(game: Any) -> bool:
    """The Octagon: a card of an auxiliary heap over every card it needs."""
    return buried(*_octagon_parts(game))


def octagon_reach(game: Any) -> bool:
    """The Octagon as a race to the foundations alone: the waste and the stock free."""
    heights, stacks = _octagon_parts(game)
    return unreachable(
        heights, stacks, [(card.suit.value, card.rank) for card in (*game.waste, *game.stock)]
    )


def _octagon_bounds(game: Any) -> bool:
    return octagon_buried(game) or octagon_reach(game)


SEVEN = 7


def _puss_bounds(game: Any) -> bool:
    """Puss in the Corner once no transfer can come any more: the second and last pass
    (PC-15), no transfer open, and no seven turned or left in the stock (transfers follow only
    a seven, PC-8). Then a corner heap's cards leave only by going home from its top (PC-6) and
    a turned card only goes on top of a heap (PC-4), so the Octagon's two arguments hold with a
    colour for a suit: two foundations per colour (PC-5), two cards of each rank per colour.
    The stock and the turned card count as free."""
    if game.pass_number != 2 or game.free:
        return False
    loose = [*game.stock, *([game.turned] if game.turned is not None else [])]
    if any(card.rank == SEVEN for card in loose):
        return False
    f = game.foundations
    heights = [(len(f[0]), len(f[3])), (len(f[1]), len(f[2]))]
    stacks = [[(int(card.suit.is_red), card.rank) for card in heap] for heap in game.corners]
    return buried(heights, stacks) or unreachable(
        heights, stacks, [(int(card.suit.is_red), card.rank) for card in loose]
    )


BOUNDS: dict[str, Callable[[Any], bool]] = {
    "octagon": _octagon_bounds,
    "puss-in-the-corner": _puss_bounds,
}


def dead_end(game: Game) -> bool:
    """Whether ``game``'s position is proved lost by a bound (see the module's text); False
    says nothing."""
    bound = BOUNDS.get(game.name)
    return bound is not None and bound(game)


def bound_function(game: Game) -> Callable[[Game], bool] | None:
    """The bound for ``game``'s rule set, looked up once (None when it has none)."""
    return BOUNDS.get(game.name)
