"""Pile ids: ``heap:3``, ``foundation:2``, ``waste``, ``stock``.

A pile id is a kind (a lower-case word each rule set chooses: heap, corner, side, foundation,
reserve...) and an optional 1-based index. Rule sets create their ids once, as constants, so
comparing ids in the hot path is cheap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.errors import InvalidMoveError

_PILE_TEXT = re.compile(r"([a-z][a-z-]*)(?::([0-9]{1,3}))?")
"""A kind and an index in ASCII digits (``\\d`` and ``int`` also take other scripts' digits)."""
RESERVED = frozenset({"bottom"})
"""Words of the move grammar that cannot be a pile's kind: ``heap:1 -> bottom`` would not read
back."""


@dataclass(frozen=True, slots=True)
class PileId:
    kind: str
    index: int | None = None
    text: str = field(init=False, repr=False, compare=False)
    """The text form, made once: moves and views are written out on every move a server
    accepts."""

    def __post_init__(self) -> None:
        text = self.kind if self.index is None else f"{self.kind}:{self.index}"
        object.__setattr__(self, "text", text)

    def __hash__(self) -> int:
        """The text's hash (kept by the string): equal ids have equal texts. Piles are hashed
        on every move (the piles it changed), and a solver makes hundreds of thousands."""
        return hash(self.text)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"PileId.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> PileId:
        match = _PILE_TEXT.fullmatch(text.strip().lower()) if text.isascii() else None
        if match is None or match[1] in RESERVED:
            raise InvalidMoveError(f"{text!r} is not a pile (write it like heap:3, foundation:2)")
        kind, index = match.groups()
        return cls(kind, None if index is None else int(index))


def numbered(kind: str, count: int) -> tuple[PileId, ...]:
    """``kind:1`` .. ``kind:count``."""
    return tuple(PileId(kind, i) for i in range(1, count + 1))
