"""The terminal racer's drawings, as styled text (Rich ``Text``): your board, progress bars.

The board follows the rule set's declared table layout (``Game.layout``), as ``clients/board.py``
does for plain text: each pile in its grid cell, a squared pile showing its top card and how many
cards it holds, a fanned pile all its cards. Hearts and diamonds are red, ``##`` is a face-down
card and ``--`` an empty place; the labels of the piles the last move changed are highlighted.

A board wider than the terminal is drawn narrower rather than cut off (Hidden Cards' table is
about 180 columns wide as declared, an 80-column terminal has 76 for it): piles are labelled by
their names alone (``ace:1`` for "ace:1 S up", the name a move uses), or each grid row is
folded, its columns cut into bands drawn one under another, whichever takes the fewest lines.
Folding keeps the rows in order (``bands`` is the same cut as ``clients/board.py``'s), so the
piles read in the layout's order at any width.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence

from rich.text import Text

from clients.board import CELL_GAP, bands
from engine.view import Slot

RED_CARD = "bold red"
BLACK_CARD = "bold"
FACE_DOWN = "blue"
EMPTY = "dim"
LABEL = "cyan"
CHANGED_LABEL = "bold black on yellow"

Cells = dict[tuple[int, int], Text]
"""Each pile's text by its grid cell (row, column)."""


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


def pile_cells(
    piles: Mapping[str, Sequence[str | None]],
    layout: Sequence[Slot],
    changed: Collection[str],
    names_only: bool,
) -> Cells:
    """Each pile, labelled, in its cell; ``names_only``: labelled by the pile's name alone."""
    cells: Cells = {}
    for slot in layout:
        pile = str(slot.pile)
        label = Text(
            pile if names_only else slot.label or pile,
            style=CHANGED_LABEL if pile in changed else LABEL,
        )
        cells[slot.row, slot.col] = Text.assemble(label, " ", pile_text(piles[pile], slot.spread))
    return cells


def column_widths(cells: Cells) -> dict[int, int]:
    """The width of each column that holds a pile."""
    widths: dict[int, int] = {}
    for (_, col), cell in cells.items():
        widths[col] = max(widths.get(col, 0), cell.cell_len)
    return widths


def grid_lines(
    cells: Cells, folds: Sequence[Sequence[int]], widths: Mapping[int, int]
) -> list[Text]:
    """The grid row by row, top to bottom, columns aligned: each row one line per band of
    columns in ``folds`` that holds a pile of it."""
    lines = []
    for row in sorted({row for row, _ in cells}):
        for columns in folds:
            if not any((row, col) in cells for col in columns):
                continue
            line = Text()
            for col in columns:
                cell = cells.get((row, col), Text())
                line.append_text(cell)
                line.append(" " * (widths[col] - cell.cell_len + CELL_GAP))
            line.rstrip()
            lines.append(line)
    return lines


def drawings(
    piles: Mapping[str, Sequence[str | None]],
    layout: Sequence[Slot],
    changed: Collection[str],
    width: int,
) -> Iterator[list[Text]]:
    """The ways to draw the board, in the order preferred among those as short: as declared,
    names only, folded into bands of columns, names only and folded."""
    for fold in (False, True):
        for names_only in (False, True):
            cells = pile_cells(piles, layout, changed, names_only)
            widths = column_widths(cells)
            yield grid_lines(cells, bands(widths, width) if fold else [sorted(widths)], widths)


def widest(lines: Iterable[Text]) -> int:
    return max((line.cell_len for line in lines), default=0)


def board_text(
    piles: Mapping[str, Sequence[str | None]],
    layout: Sequence[Slot],
    changed: Collection[str] = (),
    width: int | None = None,
) -> Text:
    """Every pile in its grid cell, one grid row per line, columns aligned; when that is wider
    than ``width``, the drawing in the fewest lines that fits (see the module's docstring), or
    if none fits the narrowest (the board's box then scrolls)."""
    limit = sys.maxsize if width is None else width
    ways = list(drawings(piles, layout, changed, limit))
    fitting = [lines for lines in ways if widest(lines) <= limit]
    best = min(fitting, key=len) if fitting else min(ways, key=widest)
    return Text("\n").join(best)


def progress_bar(done: int, total: int, width: int = 20) -> Text:
    """``████████░░░░`` with the share of cards home filled in."""
    filled = round(width * done / total) if total else 0
    return Text.assemble(("█" * filled, "green"), ("░" * (width - filled), "dim"))
