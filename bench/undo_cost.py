"""What undo and positions cost, per rule set, in µs of one core: for a solver, which pushes and
pops millions of times (docs/position.md).

    python bench/undo_cost.py [--deals 50] [--repeat 3]

For each rule set, ``--deals`` deals are played to their end by the greedy player and their moves
kept. Then the same moves are made again ``--repeat`` times each way, each move timed on its own
and counting the least time it took:

- **push, no undo**: ``push`` in a game made with ``undo=False`` (the race server's games);
- **push**: ``push`` keeping an undo record; **pop**: every move popped back to the deal;
- **push + pop**: at each position of the games, one legal move pushed and popped at once;
- **copy**: ``Game.copy``, the way to go back without undo;
- **position**: ``Game.position()``; **read back**: ``Game.from_position(game.position())``.

Markdown to stdout.
"""

from __future__ import annotations

import argparse
import gc
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.game import Game  # noqa: E402
from engine.moves import Move  # noqa: E402
from engine.players import GreedyPlayer, play_out  # noqa: E402
from engine.registry import RULE_SET_NAMES, find_rule_set  # noqa: E402

COLUMNS = ("push, no undo", "push", "pop", "push + pop", "copy", "position", "read back")


def played(name: str, deals: int) -> list[tuple[int, list[Move]]]:
    games = []
    for seed in range(deals):
        game = play_out(find_rule_set(name)(seed), GreedyPlayer(random.Random(seed)))
        games.append((seed, list(game.history)))
    return games


def least(repeat: int, run: Callable[[], list[float]]) -> float:
    """µs per step: ``run`` times each step on its own (perf_counter seconds, the same steps
    each time); each step counts the least time it took in ``repeat`` runs, so that a busy
    machine's pauses do not count."""
    gc.collect()
    gc.disable()  # as timeit does: a collection would land on whichever move came next
    try:
        times = run()
        for _ in range(repeat - 1):
            times = [min(old, new) for old, new in zip(times, run(), strict=True)]
    finally:
        gc.enable()
    return sum(times) / max(len(times), 1) * 1e6


def measure(name: str, games: list[tuple[int, list[Move]]], repeat: int) -> dict[str, float]:
    game_type = find_rule_set(name)
    clock = time.perf_counter

    def pushes(undo: bool) -> list[float]:
        times = []
        for seed, moves in games:
            game = game_type(seed, keep_opening=False, undo=undo)
            for move in moves:
                started = clock()
                game.push(move)
                times.append(clock() - started)
        return times

    def pops() -> list[float]:
        times = []
        for seed, moves in games:
            game = game_type(seed, keep_opening=False)
            for move in moves:
                game.push(move)
            while game.history:
                started = clock()
                game.pop()
                times.append(clock() - started)
        return times

    def each_position(action: Callable[[Game, Move], object]) -> list[float]:
        times = []
        for seed, moves in games:
            game = game_type(seed, keep_opening=False)
            for move in moves:
                started = clock()
                action(game, move)
                times.append(clock() - started)
                game.push(move)
        return times

    def push_pop(game: Game, move: Move) -> None:
        game.push(move)
        game.pop()

    return {
        "push, no undo": least(repeat, lambda: pushes(False)),
        "push": least(repeat, lambda: pushes(True)),
        "pop": least(repeat, pops),
        "push + pop": least(repeat, lambda: each_position(push_pop)),
        "copy": least(repeat, lambda: each_position(lambda game, _: game.copy())),
        "position": least(repeat, lambda: each_position(lambda game, _: game.position())),
        "read back": least(
            repeat, lambda: each_position(lambda game, _: Game.from_position(game.position()))
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{args.deals} greedy deals per rule set, each move the least of {args.repeat} runs; "
        f"Python "
        f"{platform.python_version()}, {platform.machine()}. µs per move.\n"
    )
    print("| rule set | moves | " + " | ".join(COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 2) + "|")
    for name in RULE_SET_NAMES:
        games = played(name, args.deals)
        costs = measure(name, games, args.repeat)
        moves = sum(len(moves) for _, moves in games)
        print(
            f"| {name} | {moves} | "
            + " | ".join(f"{costs[column]:.1f}" for column in COLUMNS)
            + " |",
            flush=True,
        )


if __name__ == "__main__":
    main()
