"""The boards drawn as text, the terminal racer's (``clients/terminal/board.py``) and ``play``'s
(``clients/board.py``), at every width a terminal may have: every pile is drawn, in the order
the rule set lays them out (row by row, left to right), and within the width where a drawing
can be."""

from __future__ import annotations

import re

import pytest

from clients.board import draw
from clients.terminal.board import board_text, widest
from engine.game import Game
from engine.registry import RULE_SET_NAMES, find_rule_set
from engine.view import Slot

WIDTHS = [60, 76, 100, 130, 160, 200]
DEAL = 7


def place(slot: Slot, text: str) -> int:
    """Where the pile is drawn: its label, or its name alone, as a word of its own."""
    for name in (slot.label, str(slot.pile)):
        if name and (found := re.search(rf"(?<!\S){re.escape(name)}(?!\S)", text)):
            return found.start()
    raise AssertionError(f"{slot.pile} is not drawn:\n{text}")


def assert_in_layout_order(game: Game, text: str) -> None:
    reading = sorted(game.layout, key=lambda slot: (slot.row, slot.col))
    places = [place(slot, text) for slot in reading]
    assert places == sorted(places), (
        f"piles out of order: {[str(slot.pile) for slot in reading]}\n{text}"
    )


def terminal_piles(game: Game) -> dict[str, list[str | None]]:
    return {
        str(pile.pile): [None if card is None else str(card) for card in pile.cards]
        for pile in game.view().piles
    }


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("rule_set", RULE_SET_NAMES)
def test_the_terminal_racers_board_keeps_the_layouts_order_at_any_width(
    rule_set: str, width: int
) -> None:
    game = find_rule_set(rule_set)(DEAL)
    drawing = board_text(terminal_piles(game), game.layout, width=width)
    assert_in_layout_order(game, drawing.plain)
    assert widest(drawing.split()) <= width


@pytest.mark.parametrize("width", [*WIDTHS, None])
@pytest.mark.parametrize("rule_set", RULE_SET_NAMES)
def test_plays_board_keeps_the_layouts_order_at_any_width(rule_set: str, width: int | None) -> None:
    game = find_rule_set(rule_set)(DEAL)
    drawing = draw(game.view(), game.layout, width=width)
    board = drawing.split("\n")[: -1 - len(game.view().notes)]
    assert_in_layout_order(game, "\n".join(board))
    if width is not None:  # (a pile wider than the terminal has a line of its own)
        assert all(len(line) <= width or "  " not in line.strip() for line in board), drawing
