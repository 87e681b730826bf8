"""Write tests/engine/solver_cases.json: the solver's answers on known deals and positions.

    .venv/bin/python tests/engine/make_solver_cases.py

Run it after a change to the search that changes its answers within these budgets (a line's
length, an unknown decided), after checking that the change is meant: test_solver.py then checks
the new answers, and replays every win through the engine. Budgets are in positions searched,
so the answers do not depend on the machine.
"""

from __future__ import annotations

import copy
import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.game import Game  # noqa: E402
from engine.registry import find_rule_set  # noqa: E402
from engine.solver import Budget  # noqa: E402
from engine.solver.search import solve  # noqa: E402

EXACT = ("hidden-cards", "all-fours")
SEARCHED = ("four-corners", "cornerstones", "cornerstones-arnold", "puss-in-the-corner", "octagon")
NEAR_END = ("cornerstones-arnold", 1, 10)
"""A position 10 moves from the end of the line the solver finds for Cornerstones (Arnold)
deal 1; shuffling its piles' cards gives positions near the end, some of them lost (two of
each are kept)."""


def case(
    rule_set: str, nodes: int, seed: int | None = None, position: dict[str, Any] | None = None
) -> dict[str, Any]:
    game = Game.from_position(position) if position else find_rule_set(rule_set)(seed)
    verdict = solve(game, Budget(nodes=nodes))
    where: dict[str, Any] = {"position": position} if position else {"seed": seed}
    return {
        "rule_set": rule_set,
        **where,
        "nodes": nodes,
        "result": str(verdict.result),
        "moves": len(verdict.line),
    }


def shuffled_piles(position: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The position with the cards of the twelve piles shuffled among them, sizes kept."""
    data = copy.deepcopy(position)
    names = [pile for pile in data["piles"] if pile.startswith(("left", "right"))]
    sizes = [len(data["piles"][pile].split()) for pile in names]
    cards = [card for pile in names for card in data["piles"][pile].split()]
    rng.shuffle(cards)
    for pile, size in zip(names, sizes, strict=True):
        data["piles"][pile], cards = " ".join(cards[:size]), cards[size:]
    return data


def near_end() -> dict[str, Any]:
    name, seed, left = NEAR_END
    game = find_rule_set(name)(seed)
    line = solve(game, Budget(nodes=100_000)).line
    assert line, "the near-end position comes from a won deal"
    for move in line[:-left]:
        game.play(move)
    return game.position().to_json()


def kept_near_end() -> dict[str, Any] | None:
    """The near-end position of the fixture file already written, if any: a position is data,
    and keeping it keeps the cases comparable when a change to the search finds another line
    for the deal it came from."""
    path = Path(__file__).with_name("solver_cases.json")
    if not path.exists():
        return None
    cases = json.loads(path.read_text())["cases"]
    return next((item["position"] for item in cases if "position" in item), None)


def main() -> None:
    cases = [case(name, 20_000, seed) for name in EXACT for seed in range(1, 9)]
    cases += [case(name, 3_000, seed) for name in SEARCHED for seed in (1, 2, 3)]
    start = kept_near_end() or near_end()
    cases.append(case(NEAR_END[0], 20_000, position=start))
    rng = random.Random(10)
    found: dict[str, int] = {}
    for _ in range(500):
        if min(found.get("won", 0), found.get("lost", 0)) >= 2:
            break
        shuffled = case(NEAR_END[0], 20_000, position=shuffled_piles(start, rng))
        if found.get(shuffled["result"], 0) < 2:
            found[shuffled["result"]] = found.get(shuffled["result"], 0) + 1
            cases.append(shuffled)
    path = Path(__file__).with_name("solver_cases.json")
    path.write_text(
        json.dumps({"about": __doc__.split("\n\n")[0].strip(), "cases": cases}, indent=1) + "\n"
    )
    for item in cases:
        print(item["rule_set"], item.get("seed", "position"), item["result"], item["moves"])


if __name__ == "__main__":
    main()
