"""Write tests/engine/core_cases.json: the compiled core's answers on known deals, perft-style.

    .venv/bin/python tests/engine/make_core_cases.py

For each rule set the compiled core knows, deals 0..7 at two budgets in positions and in each
of the portfolio's move orders: the result, the positions searched (moves made), the distinct
positions and the winning line's length. A budget in positions makes every figure the same on
any machine, so test_solver_core_cases.py pins them all. Run this again after a change to the
core that changes its answers, after checking that the change is meant.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.registry import find_rule_set  # noqa: E402
from engine.solver import Budget, compiled  # noqa: E402

DEALS = range(8)
BUDGETS = (20_000, 200_000)


def case(rule_set: str, seed: int, nodes: int, variant: int) -> dict[str, Any]:
    verdict = compiled.solve(find_rule_set(rule_set)(seed), Budget(nodes=nodes), variant=variant)
    return {
        "rule_set": rule_set,
        "seed": seed,
        "nodes": nodes,
        "variant": variant,
        "result": str(verdict.result),
        "searched": verdict.effort.nodes,
        "positions": verdict.effort.positions,
        "moves": len(verdict.line),
    }


def main() -> None:
    if compiled.CORE is None:
        raise SystemExit("the compiled core is not built")
    cases = [
        case(name, seed, nodes, variant)
        for name in sorted(compiled.RULE_SETS)
        for seed in DEALS
        for nodes in BUDGETS
        for variant in range(len(compiled.PORTFOLIO))
    ]
    path = Path(__file__).with_name("core_cases.json")
    path.write_text(json.dumps({"cases": cases}, indent=1) + "\n")
    print(f"{len(cases)} cases written to {path}")


if __name__ == "__main__":
    main()
