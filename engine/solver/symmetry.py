"""Keys that let the search's table of positions seen meet positions that are the same game in
all but names: ``solver_key(game)`` (docs/solver.md, "Symmetries").

The table may treat two positions as one when a renaming of piles carries one onto the other
and carries the legal moves, and what they lead to, along with it (an automorphism of the game's
graph of positions that keeps won positions won): a position is winnable exactly when its image
is, so searching one of them is enough. Each key below is the engine's exact ``state_key`` with
such a renaming applied (or a field the rules never read left out); the search still plays and
reports real moves, which the engine replays, so a key can merge positions but never make a move
legal.

- **The Octagon**: the two foundations of a suit take the same cards (OC-4: either, when both
  fit), so only the pair of their heights counts, in either order; the four auxiliary heaps are
  alike (OC-7, OC-8 and OC-12 name no heap; OC-13 fills the lowest-numbered empty heap, but the
  empty heaps are alike, so any renaming carries that fill onto the same fill), so their order
  does not count either.
- **Puss in the Corner**: the two black foundations build on any black card one higher, and the
  two red ones on any red card (PC-5): a foundation counts only by its height, and the two of
  one colour in either order. In the second and last pass (PC-15) the four corner heaps are
  alike: nothing is gathered any more, and placing, transfers (PC-8, PC-9: any two heaps, the
  second transfer between the two the first left alone) and home moves name no heap in
  particular; so the heaps count in any order, with the heaps still open to a transfer renamed
  along. In the first pass the order counts (PC-14 gathers corner:1 first). The seven whose
  transfers are open is named only in notes and refusals, so it is left out.
- The other rule sets: the exact ``state_key`` (their foundations' contents follow from their
  heights already, and their heaps are tied to foundations while cards are dealt).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.game import Game

Key = Callable[[Game], Any]


def _octagon(game: Any) -> Any:
    heights = tuple(
        tuple(sorted((len(game.foundations[2 * suit]), len(game.foundations[2 * suit + 1]))))
        for suit in range(4)
    )
    aux = tuple(sorted("".join(map(str, heap)) for heap in game.aux))
    return (heights, aux, "".join(map(str, game.stock)), "".join(map(str, game.waste)), game.deal)


def _puss_in_the_corner(game: Any) -> Any:
    f = game.foundations
    heights = (tuple(sorted((len(f[0]), len(f[3])))), tuple(sorted((len(f[1]), len(f[2])))))
    corners = ["".join(map(str, heap)) for heap in game.corners]
    free = game.free
    if game.pass_number == 2:
        order = sorted(range(4), key=corners.__getitem__)
        place = {old: new for new, old in enumerate(order)}
        corners = [corners[old] for old in order]
        free = tuple(sorted(place[index] for index in free))
    return (
        heights,
        tuple(corners),
        "".join(map(str, game.stock)),
        str(game.turned),
        game.pass_number,
        free,
    )


KEYS: dict[str, Key] = {"octagon": _octagon, "puss-in-the-corner": _puss_in_the_corner}


def solver_key(game: Game) -> Any:
    """The key the search keys its table by: equal for two positions of one rule set that are
    the same up to a symmetry of its rules (see the module's text)."""
    key = KEYS.get(game.name)
    return game.state_key() if key is None else key(game)


def key_function(game: Game) -> Key:
    """``solver_key`` for ``game``'s rule set, looked up once."""
    key = KEYS.get(game.name)
    return type(game).state_key if key is None else key
