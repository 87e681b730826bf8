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


_FOUR_CORNERS_HEAPS = tuple(f"{side}:{row}" for side in ("left", "right") for row in range(1, 7))
"""Four Corners' heaps in deal order (engine/rulesets/four_corners.py ``HEAPS``)."""

CODECS["four-corners"] = Codec(
    encode=lambda state: [state["deal"], _FOUR_CORNERS_HEAPS.index(state["next_heap"])],
    decode=lambda fields: {"deal": fields[0], "next_heap": _FOUR_CORNERS_HEAPS[fields[1]]},
)
"""Four Corners (engine/solver/core/four_corners.c): the deal (1..3) and the next heap's
number in deal order (0..11)."""
