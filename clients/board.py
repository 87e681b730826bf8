"""Draw a player's view as text, in the table layout the rule set declares (``Game.layout``).

Each pile sits in its grid cell. A squared pile shows its top card and how many cards it holds;
a fanned pile shows all its cards. ``##`` is a face-down card, ``--`` an empty place.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.cards import Card
from engine.view import PileView, Slot, View

RED = "\x1b[31m"
RESET = "\x1b[0m"


def card_text(card: Card | None, colour: bool) -> str:
    if card is None:
        return "##"
    text = str(card)
    return f"{RED}{text}{RESET}" if colour and card.is_red else text


def pile_text(pile: PileView, spread: str, colour: bool) -> str:
    if not pile.cards:
        return "--"
    if spread != "none":
        return " ".join(card_text(card, colour) for card in pile.cards)
    top = card_text(pile.cards[-1], colour)
    return top if len(pile.cards) == 1 else f"{top} ({len(pile.cards)})"


def _visible_width(text: str) -> int:
    return len(text.replace(RED, "").replace(RESET, ""))


def draw(view: View, layout: Sequence[Slot], colour: bool = False) -> str:
    """The board as lines of text, one grid row per line, then the notes and progress."""
    piles = {pile.pile: pile for pile in view.piles}
    cells: dict[tuple[int, int], str] = {}
    for slot in layout:
        label = slot.label or str(slot.pile)
        cells[slot.row, slot.col] = f"{label} {pile_text(piles[slot.pile], slot.spread, colour)}"
    rows = 1 + max(row for row, _ in cells)
    cols = 1 + max(col for _, col in cells)
    widths = [max((_visible_width(cells[r, c]) for r in range(rows) if (r, c) in cells),
                  default=0) for c in range(cols)]
    lines = []
    for row in range(rows):
        parts = []
        for col in range(cols):
            text = cells.get((row, col), "")
            parts.append(text + " " * (widths[col] - _visible_width(text)))
        lines.append("  ".join(parts).rstrip())
    lines += list(view.notes)
    lines.append(f"{view.progress}  [{view.outcome}]")
    return "\n".join(lines)


def draw_piles_whole(view: View, colour: bool = False) -> str:
    """Every pile in full, bottom card first: what a player who followed the play knows."""
    return "\n".join(f"{pile.pile}: " + (" ".join(card_text(card, colour) for card in pile.cards)
                                          or "--") for pile in view.piles)
