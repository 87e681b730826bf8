"""Engine figures per rule set: win rates of simple players, game length, speed, replay time.

    python bench/engine_bench.py [--deals 1000] [--rule-set NAME ...]

For each rule set, plays ``--deals`` random deals with a random player and with a greedy player
(engine/players.py). Speed is legal-move listing plus validated apply, timed around those two
calls only, on one core. Replay time is ``replay_trusted`` of each random game's log (re-deal
included). Progress goes to stderr; the table to stdout, in Markdown.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.game import Game  # noqa: E402
from engine.players import STRATEGIES, Player  # noqa: E402
from engine.registry import RULE_SET_NAMES, find_rule_set  # noqa: E402
from engine.replay import MoveLog, replay_trusted  # noqa: E402
from engine.view import Status  # noqa: E402


def timed_game(game: Game, player: Player) -> tuple[float, int]:
    """Play to the end; return seconds spent listing moves and applying them, and move count."""
    spent = 0.0
    while True:
        start = time.perf_counter()
        game.legal_moves()
        spent += time.perf_counter() - start
        if game.outcome().is_over:
            return spent, len(game.history)
        move = player.choose_in(game)
        start = time.perf_counter()
        game.play(move)
        spent += time.perf_counter() - start


def bench(name: str, deals: int, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    row: dict[str, float] = {}
    logs: list[MoveLog] = []
    spent_total, moves_total = 0.0, 0
    for strategy, player_type in STRATEGIES.items():
        wins, moves = 0, 0
        for deal in range(deals):
            game = find_rule_set(name)(rng.getrandbits(64))
            spent, count = timed_game(game, player_type(random.Random(rng.getrandbits(32))))
            spent_total, moves_total = spent_total + spent, moves_total + count
            wins += game.outcome().status is Status.WON
            moves += count
            if strategy == "random":
                logs.append(MoveLog.of(game))
            if (deal + 1) % max(1, deals // 10) == 0:
                print(f"  {name}: {strategy} {deal + 1}/{deals}", file=sys.stderr, flush=True)
        row[f"{strategy}_win"] = 100 * wins / deals
        row[f"{strategy}_moves"] = moves / deals
    row["moves_per_s"] = moves_total / spent_total
    replay_ms = []
    for log in logs:
        start = time.perf_counter()
        replay_trusted(log)
        replay_ms.append(1000 * (time.perf_counter() - start))
    row["replay_ms"] = statistics.median(replay_ms)
    row["replay_max_ms"] = max(replay_ms)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--rule-set", action="append", choices=RULE_SET_NAMES)
    parser.add_argument("--seed", type=int, default=1, help="seed of the bench's own choices")
    args = parser.parse_args()
    names = args.rule_set or list(RULE_SET_NAMES)
    print(
        f"Engine benchmark, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {args.deals} deals per "
        f"player, Python {platform.python_version()} on {platform.machine()}\n"
    )
    print(
        "| rule set | random win % | random avg moves | greedy win % | greedy avg moves "
        "| moves/s | replay median ms | replay max ms |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in names:
        print(f"{name} ...", file=sys.stderr, flush=True)
        row = bench(name, args.deals, args.seed)
        print(
            f"| {name} | {row['random_win']:.1f} | {row['random_moves']:.0f} "
            f"| {row['greedy_win']:.1f} | {row['greedy_moves']:.0f} "
            f"| {row['moves_per_s']:,.0f} | {row['replay_ms']:.2f} "
            f"| {row['replay_max_ms']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
