"""The compiled core's answers pinned, perft-style (tests/engine/core_cases.json, written by
make_core_cases.py): on known deals at budgets in positions, in each move order, the same
result, the same count of positions searched and distinct, and a winning line of the same
length, on any machine; every win is replayed through the engine by ``compiled.solve``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.registry import find_rule_set
from engine.solver import Budget, Result, compiled

pytestmark = pytest.mark.skipif(
    compiled.CORE is None, reason="the compiled core is not built (pure-Python install)"
)
CASES: list[dict[str, Any]] = json.loads(Path(__file__).with_name("core_cases.json").read_text())[
    "cases"
]


def case_id(case: dict[str, Any]) -> str:
    return f"{case['rule_set']}-{case['seed']}-{case['nodes']}-v{case['variant']}"


def test_every_rule_set_of_the_core_has_cases() -> None:
    assert {case["rule_set"] for case in CASES} == compiled.RULE_SETS


@pytest.mark.parametrize("case", CASES, ids=list(map(case_id, CASES)))
def test_the_core_gives_the_pinned_answer(case: dict[str, Any]) -> None:
    verdict = compiled.solve(
        find_rule_set(case["rule_set"])(case["seed"]),
        Budget(nodes=case["nodes"]),
        variant=case["variant"],
    )
    assert (
        str(verdict.result),
        verdict.effort.nodes,
        verdict.effort.positions,
        len(verdict.line),
    ) == (case["result"], case["searched"], case["positions"], case["moves"])
    if verdict.result is Result.UNKNOWN:
        assert verdict.effort.nodes == case["nodes"]
