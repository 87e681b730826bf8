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


def _deal_only(state: dict[str, Any]) -> list[int]:
    return [state["deal"]]


def _deal_only_back(fields: list[int]) -> dict[str, Any]:
    return {"deal": fields[0]}


CODECS["octagon"] = Codec(_deal_only, _deal_only_back)
"""The Octagon (engine/solver/core/octagon.c): the deal, 1..3 (OC-14)."""
