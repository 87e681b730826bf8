"""The terminal racer's drawings, as styled text (Rich ``Text``): your board, progress bars.

The board follows the rule set's declared table layout (``Game.layout``), as ``clients/board.py``
does for plain text: each pile in its grid cell, a squared pile showing its top card and how many
cards it holds, a fanned pile all its cards. Hearts and diamonds are red, ``##`` is a face-down
card and ``--`` an empty place; the labels of the piles the last move changed are highlighted.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from rich.text import Text

from engine.view import Slot

RED_CARD = "bold red"
BLACK_CARD = "bold"
FACE_DOWN = "blue"
EMPTY = "dim"
LABEL = "cyan"
CHANGED_LABEL = "bold black on yellow"
CELL_GAP = "   "


def card_text(card: str | None) -> Text:
    if card is None:
        return Text("##", style=FACE_DOWN)
    return Text(card, style=RED_CARD if card[-1] in "HD" else BLACK_CARD)


def pile_text(cards: Sequence[str | None], spread: str) -> Text:
    """A fanned pile shows every card, bottom first; a squared one its top card and count."""
    if not cards:
        return Text("--", style=EMPTY)
    if spread != "none":
        return Text(" ").join(card_text(card) for card in cards)
    top = card_text(cards[-1])
    return top if len(cards) == 1 else Text.assemble(top, (f" ({len(cards)})", EMPTY))


def board_text(piles: Mapping[str, Sequence[str | None]], layout: Sequence[Slot],
               changed: Collection[str] = ()) -> Text:
    """Every pile in its grid cell, one grid row per line, columns aligned."""
    cells: dict[tuple[int, int], Text] = {}
    for slot in layout:
        pile = str(slot.pile)
        label = Text(slot.label or pile, style=CHANGED_LABEL if pile in changed else LABEL)
        cells[slot.row, slot.col] = Text.assemble(label, " ", pile_text(piles[pile], slot.spread))
    rows = 1 + max(row for row, _ in cells)
    cols = 1 + max(col for _, col in cells)
    widths = [max((cells[r, c].cell_len for r in range(rows) if (r, c) in cells), default=0)
              for c in range(cols)]
    lines = []
    for row in range(rows):
        line = Text()
        for col in range(cols):
            cell = cells.get((row, col), Text())
            line.append_text(cell)
            line.append(" " * (widths[col] - cell.cell_len) + CELL_GAP)
        line.rstrip()
        lines.append(line)
    return Text("\n").join(lines)


def progress_bar(done: int, total: int, width: int = 20) -> Text:
    """``████████░░░░`` with the share of cards home filled in."""
    filled = round(width * done / total) if total else 0
    return Text.assemble(("█" * filled, "green"), ("░" * (width - filled), "dim"))
