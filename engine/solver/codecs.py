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
_SUITS = ("S", "H", "D", "C")


# -- Cornerstones, Cornerstones (Arnold) ---------------------------------------------------------


def _cornerstones_encode(state: dict[str, Any]) -> list[int]:
    """next_pile (0..11, deal order), redeals_used, each line's suit (0..3, -1 for none)."""
    return [
        _CORNERSTONES_PILES.index(state["next_pile"]),
        state["redeals_used"],
        *(-1 if suit is None else _SUITS.index(suit) for suit in state["line_suits"]),
    ]


def _cornerstones_decode(fields: list[int]) -> dict[str, Any]:
    return {
        "next_pile": _CORNERSTONES_PILES[fields[0]],
        "redeals_used": fields[1],
        "line_suits": [None if suit < 0 else _SUITS[suit] for suit in fields[2:6]],
    }


_CORNERSTONES_PILES = tuple(f"{side}:{row}" for side in ("right", "left") for row in range(1, 7))
CODECS["cornerstones"] = CODECS["cornerstones-arnold"] = Codec(
    _cornerstones_encode, _cornerstones_decode
)


# -- Puss in the Corner ------------------------------------------------------------------------

_CORNERS = ("corner:1", "corner:2", "corner:3", "corner:4")
_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


def _card_code(text: str | None) -> int:
    """A card's text as the core's code (``suit * 13 + rank - 1``), -1 for none."""
    if text is None:
        return -1
    return _SUITS.index(text[-1]) * 13 + _RANKS.index(text[:-1])


def _code_text(code: int) -> str | None:
    return None if code < 0 else _RANKS[code % 13] + _SUITS[code // 13]


def _puss_encode(state: dict[str, Any]) -> list[int]:
    """pass, the corners open to a transfer (bit i for corner:i+1), the seven (-1: none)."""
    free = sum(1 << _CORNERS.index(corner) for corner in state["transfer_corners"])
    return [state["pass"], free, _card_code(state["seven"])]


def _puss_decode(fields: list[int]) -> dict[str, Any]:
    number, free, seven = fields
    return {
        "pass": number,
        "transfer_corners": [corner for index, corner in enumerate(_CORNERS) if free >> index & 1],
        "seven": _code_text(seven),
    }


CODECS["puss-in-the-corner"] = Codec(_puss_encode, _puss_decode)


# -- The Octagon ---------------------------------------------------------------------------------


def _deal_only(state: dict[str, Any]) -> list[int]:
    return [state["deal"]]


def _deal_only_back(fields: list[int]) -> dict[str, Any]:
    return {"deal": fields[0]}


CODECS["octagon"] = Codec(_deal_only, _deal_only_back)
"""The Octagon (engine/solver/core/octagon.c): the deal, 1..3 (OC-14)."""


# -- Four Corners --------------------------------------------------------------------------------

_FOUR_CORNERS_HEAPS = tuple(f"{side}:{row}" for side in ("left", "right") for row in range(1, 7))
"""Four Corners' heaps in deal order (engine/rulesets/four_corners.py ``HEAPS``)."""

CODECS["four-corners"] = Codec(
    encode=lambda state: [state["deal"], _FOUR_CORNERS_HEAPS.index(state["next_heap"])],
    decode=lambda fields: {"deal": fields[0], "next_heap": _FOUR_CORNERS_HEAPS[fields[1]]},
)
"""Four Corners (engine/solver/core/four_corners.c): the deal (1..3) and the next heap's
number in deal order (0..11)."""
