"""Draw a player's view as text, in the table layout the rule set declares (``Game.layout``).

Each pile sits in its grid cell. A squared pile shows its top card and how many cards it holds;
a fanned pile shows all its cards. ``##`` is a face-down card, ``--`` an empty place. Given a
width (the terminal's), a grid row wider than that is folded: its columns cut into bands, drawn
one under another, row after row, so that the piles still read in the layout's order rather than
the terminal wrapping each line where it must.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.cards import Card
from engine.view import PileView, Slot, View

RED = "\x1b[31m"
RESET = "\x1b[0m"
CELL_GAP = 2
"""Columns between the cells of a row."""


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


def bands(widths: Mapping[int, int], width: int) -> list[list[int]]:
    """The columns, left to right, cut into bands of neighbours that fit side by side in
    ``width`` (a column wider than that is a band of its own)."""
    result: list[list[int]] = [[]]
    used = 0
    for col in sorted(widths):
        needed = widths[col] + (CELL_GAP if result[-1] else 0)
        if result[-1] and used + needed > width:
            result.append([])
            used, needed = 0, widths[col]
        result[-1].append(col)
        used += needed
    return result


def draw(view: View, layout: Sequence[Slot], colour: bool = False, width: int | None = None) -> str:
    """The board as lines of text, one grid row per line (folded to ``width``, if given), then
    the notes and progress."""
    piles = {pile.pile: pile for pile in view.piles}
    cells: dict[tuple[int, int], str] = {}
    for slot in layout:
        label = slot.label or str(slot.pile)
        cells[slot.row, slot.col] = f"{label} {pile_text(piles[slot.pile], slot.spread, colour)}"
    widths: dict[int, int] = {}
    for (_, col), text in cells.items():
        widths[col] = max(widths.get(col, 0), _visible_width(text))
    folds = [sorted(widths)] if width is None else bands(widths, width)
    lines = []
    for row in sorted({row for row, _ in cells}):
        for columns in folds:
            if any((row, col) in cells for col in columns):
                parts = [
                    (text := cells.get((row, col), "")) + " " * (widths[col] - _visible_width(text))
                    for col in columns
                ]
                lines.append((" " * CELL_GAP).join(parts).rstrip())
    lines += list(view.notes)
    lines.append(f"{view.progress}  [{view.outcome}]")
    return "\n".join(lines)


def draw_piles_whole(view: View, colour: bool = False) -> str:
    """Every pile in full, bottom card first: what a player who followed the play knows."""
    return "\n".join(
        f"{pile.pile}: " + (" ".join(card_text(card, colour) for card in pile.cards) or "--")
        for pile in view.piles
    )
