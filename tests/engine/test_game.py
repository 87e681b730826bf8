"""What every rule set gets from the ``Game`` base class."""

from __future__ import annotations

import pytest

from engine.registry import RULE_SET_NAMES, find_rule_set


@pytest.mark.parametrize("rule_set", RULE_SET_NAMES)
def test_a_game_dealt_without_its_opening_events_is_the_same_game(rule_set: str) -> None:
    kept = find_rule_set(rule_set)(11)
    light = find_rule_set(rule_set)(11, keep_opening=False)
    assert kept.opening_events and light.opening_events == []
    assert light.table() == kept.table() and light.view() == kept.view()
    assert light.legal_moves() == kept.legal_moves()
