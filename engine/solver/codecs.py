"""Each rule set's state fields as the compiled core reads them (engine/solver/compiled.py):
a position's ``state`` (engine/position.py) to a list of whole numbers, and back. The order of
the numbers is the one the rule set's C file (engine/solver/core/) reads them in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Codec:
    encode: Callable[[dict[str, Any]], list[int]]
    decode: Callable[[list[int]], dict[str, Any]]


CODECS: dict[str, Codec] = {}


def _cornerstones_encode(state: dict[str, Any]) -> list[int]:
    """next_pile (0..11, deal order), redeals_used, each line's suit (0..3, -1 for none)."""
    return [_CORNERSTONES_PILES.index(state["next_pile"]), state["redeals_used"],
            *(-1 if suit is None else _SUITS.index(suit) for suit in state["line_suits"])]


def _cornerstones_decode(fields: list[int]) -> dict[str, Any]:
    return {"next_pile": _CORNERSTONES_PILES[fields[0]], "redeals_used": fields[1],
            "line_suits": [None if suit < 0 else _SUITS[suit] for suit in fields[2:6]]}


_SUITS = ("S", "H", "D", "C")
_CORNERSTONES_PILES = tuple(f"{side}:{row}" for side in ("right", "left") for row in range(1, 7))
CODECS["cornerstones"] = CODECS["cornerstones-arnold"] = Codec(_cornerstones_encode,
                                                               _cornerstones_decode)
