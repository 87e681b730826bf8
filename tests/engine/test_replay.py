"""Move logs: reading them strictly, and replaying logs recorded under older rules versions.

``logs/rules-1-*.json`` were written by ``patience-race``'s engine as it was before rules version
2 (commit 8dbfc83), one game per rule set whose rules changed: they have no ``rules`` field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.errors import InvalidLogError
from engine.game import RULES_VERSION
from engine.registry import find_rule_set
from engine.replay import MoveLog, replay, replay_trusted

LOGS = Path(__file__).parent / "logs"
OLD_LOGS = sorted(LOGS.glob("rules-1-*.json"))


def a_log(**fields: Any) -> dict[str, Any]:
    return {
        "format": "patience-race/move-log",
        "version": 1,
        "rule_set": "hidden-cards",
        "seed": "10",
        "algorithm": 1,
        "moves": [],
        **fields,
    }


@pytest.mark.parametrize("path", OLD_LOGS, ids=[path.stem for path in OLD_LOGS])
def test_a_log_recorded_under_rules_version_1_replays_to_the_outcome_it_had(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert "rules" not in data
    log = MoveLog.from_json(data)
    assert log.rules == 1
    game = replay(log)
    assert game.rules == 1 and game.outcome().status is log.claimed_status
    assert replay_trusted(log).full_state() == game.full_state()


def test_the_old_logs_hold_what_rules_version_2_changed() -> None:
    """Each old log made a redeal when it was the only move, or (Hidden Cards seed 10) was lost
    with its last cards lying unmoved on their own heaps: the games version 2 plays otherwise."""
    names = {path.stem.removeprefix("rules-1-") for path in OLD_LOGS}
    assert names == {"four-corners", "octagon", "puss-in-the-corner", "all-fours", "hidden-cards"}
    for path in OLD_LOGS:
        log = MoveLog.load(path)
        game = find_rule_set(log.rule_set)(log.seed, log.algorithm, rules=1)
        forced = 0
        for move in log.moves:
            legal = game.legal_moves()
            forced += len(legal) == 2 and move == legal[0] and move.action is not None
            game.play(move)
        if log.rule_set == "hidden-cards":
            assert str(game.outcome()).startswith("lost") and game.foundation_count() == 50
            assert (
                replay(
                    MoveLog.from_json(
                        {
                            **log.to_json(),
                            "moves": [str(move) for move in log.moves[:-1]],
                            "rules": 2,
                        }
                    )
                )
                .outcome()
                .status.value
                == "won"
            )
        else:
            assert forced, f"{path.name} has no redeal that was the only move"


def test_a_new_log_names_its_rules_version_and_reads_back() -> None:
    game = find_rule_set("hidden-cards")(10)
    while not game.outcome().is_over:
        game.play(game.legal_moves()[0])
    data = MoveLog.of(game).to_json()
    assert data["rules"] == RULES_VERSION == 2 and data["outcome"] == "won"
    again = replay(MoveLog.from_json(json.loads(json.dumps(data))))
    assert again.full_state() == game.full_state()


@pytest.mark.parametrize(
    "seed", [" 10", "+10", "1_0", "\u0661\u0660", "10.0", "-10", 10, str(2**64), ""]
)
def test_a_log_seed_is_a_deal_number_in_ascii_digits(seed: Any) -> None:
    with pytest.raises(InvalidLogError, match="digits 0-9"):
        MoveLog.from_json(a_log(seed=seed))


@pytest.mark.parametrize("rules", [0, 3, "2", True, 2.0, None])
def test_an_unknown_rules_version_is_refused(rules: Any) -> None:
    with pytest.raises(InvalidLogError, match="rules version"):
        MoveLog.from_json(a_log(rules=rules))
