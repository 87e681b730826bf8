"""Positions (engine/position.py, docs/position.md): the form both ways, and what reading one
refuses. That a position read back is the same game is a property: tests/engine/test_properties.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from engine.errors import InvalidLogError, InvalidPositionError
from engine.game import Game
from engine.moves import Move
from engine.piles import PileId
from engine.position import Position
from engine.registry import RULE_SET_NAMES, find_rule_set
from engine.replay import MoveLog
from engine.rulesets.octagon import Octagon
from engine.view import Status

DOC = Path(__file__).resolve().parents[2] / "docs" / "position.md"


def octagon() -> dict[str, Any]:
    return Octagon(7).position().to_json()


def refusal(data: Any, game: type[Game] = Game) -> str:
    with pytest.raises(InvalidPositionError) as refused:
        game.from_position(data)
    return str(refused.value)


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_a_dealt_position_reads_back_from_its_text(name: str) -> None:
    game = find_rule_set(name)(20261124)
    text = str(game.position())
    assert Position.parse(text) == game.position()
    again = Game.from_position(Position.parse(text))
    assert type(again) is type(game) and again.view() == game.view()
    assert again.seed is None and again.history == [] and again.opening_events == []


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_a_game_from_a_position_has_the_attributes_of_a_dealt_one(name: str) -> None:
    """Undo records hold every attribute the rule set sets up: ``_restore`` sets the same."""
    game = find_rule_set(name)(3)
    assert sorted(vars(Game.from_position(game.position()))) == sorted(vars(game))


def test_face_down_cards_are_marked_and_the_moves_counted() -> None:
    game = Octagon(7)
    game.play(game.legal_moves()[0])
    data = game.position().to_json()
    assert data["moves"] == 1 and data["state"] == {"deal": 1}
    assert all(word.startswith("#") for word in data["piles"]["stock"].split())
    assert not any(word.startswith("#") for word in data["piles"]["waste"].split())
    assert Game.from_position(data).progress() == game.progress()


def test_the_example_in_the_doc_is_a_position_and_plays() -> None:
    example = re.search(r"```json\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert example is not None
    game = Game.from_position(json.loads(example[1]))
    assert game.name == "puss-in-the-corner"
    assert game.legal_moves() == [
        Move.parse(text)
        for text in (
            "KH turned -> corner:1",
            "KH turned -> corner:2",
            "KH turned -> corner:3",
            "KH turned -> corner:4",
            "KH turned -> foundation:2",
            "resign",
        )
    ]
    game.play(Move.parse("KH turned -> foundation:2"))
    assert game.outcome().status is Status.WON


def test_a_position_of_another_rule_set_or_none_is_refused() -> None:
    assert "not a four-corners one" in refusal(octagon(), find_rule_set("four-corners"))
    assert "no rule set named 'chess'" in refusal({**octagon(), "rule_set": "chess"})
    assert "unknown rules version 9" in refusal({**octagon(), "rules": 9})
    assert "not a position" in refusal({**octagon(), "format": "patience-race/move-log"})
    assert "missing: moves" in refusal({k: v for k, v in octagon().items() if k != "moves"})
    assert "unknown: colour" in refusal({**octagon(), "colour": "red"})
    assert "a JSON object" in refusal([])
    with pytest.raises(InvalidPositionError):
        Position.parse("{")


def test_piles_missing_or_unknown_are_refused() -> None:
    data = octagon()
    del data["piles"]["waste"]
    assert "missing: waste; unknown: none" in refusal(data)
    data = octagon()
    data["piles"]["aux:5"] = ""
    assert "missing: none; unknown: aux:5" in refusal(data)
    data["piles"]["9 lives"] = ""
    assert "'9 lives' is not a pile" in refusal(data)
    data = octagon()
    data["piles"]["WASTE"] = ""
    assert "piles: waste named more than once" in refusal(data)


def test_unknown_duplicated_and_missing_cards_are_refused() -> None:
    data = octagon()
    data["piles"]["waste"] = "9Z"
    assert "'9Z' is not a card" in refusal(data)
    data["piles"]["waste"] = "AS"
    assert "AS is there more than twice" in refusal(data)
    data = octagon()
    data["piles"]["aux:1"] = ""
    assert "octagon plays with every card twice; missing: " in refusal(data)
    hidden = find_rule_set("hidden-cards")(1).position().to_json()
    hidden["piles"]["kings"] = hidden["piles"]["heap:1"].split()[0]
    assert "is there more than once" in refusal(hidden)


def test_state_fields_are_checked() -> None:
    data = octagon()
    data["state"] = {"deal": 4}
    assert "state: deal is a whole number 1..3, not 4" in refusal(data)
    data["state"] = {}
    assert "state: deal is missing" in refusal(data)
    data["state"] = {"deal": 1, "redeals": 0}
    assert "state: unknown fields redeals" in refusal(data)
    fours = find_rule_set("all-fours")(1).position().to_json()
    fours["state"]["placed_under"][0] = 5
    assert "state: placed_under[0] is 0..4, not 5" in refusal(fours)
    puss = find_rule_set("puss-in-the-corner")(1).position().to_json()
    puss["state"]["transfer_corners"] = ["corner:1"]
    assert "names none, two or all four corners" in refusal(puss)


def test_face_up_flags_must_be_those_the_rules_show() -> None:
    data = octagon()
    data["piles"]["stock"] = data["piles"]["stock"].replace("#", "", 1)
    assert "piles: stock: the rules show its cards face down" in refusal(data)


def test_shapes_the_engine_relies_on_are_checked() -> None:
    data = octagon()
    data["piles"]["foundation:1"], data["piles"]["waste"] = "", "AS " + data["piles"]["waste"]
    assert "foundation:1 is a foundation laid out with an ace" in refusal(data)
    corners = find_rule_set("four-corners")(1)
    corners.turned.extend([corners.heaps[0].pop(), corners.heaps[0].pop()])
    assert "turned holds at most 1 card, not 2" in refusal(corners.position())


def test_a_game_from_a_position_has_no_move_log_and_undoes_back_to_it() -> None:
    game = Game.from_position(octagon())
    with pytest.raises(InvalidLogError):
        MoveLog.of(game)
    game.play(game.legal_moves()[0])
    assert str(game.pop()) and game.position().to_json() == octagon()
    with pytest.raises(IndexError):
        game.pop()


def test_a_position_names_its_piles() -> None:
    assert Octagon(7).position().pile(PileId.parse("foundation:1")).cards[0].rank == 1
