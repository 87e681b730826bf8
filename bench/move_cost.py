"""What one accepted move costs the engine and the race, per rule set, in µs of one core.

    python bench/move_cost.py [--deals 200] [--rule-set NAME ...] [--profile]

For each rule set, ``--deals`` deals are played to their end by the greedy player (the one the
load benchmark's bots use) and their moves kept. Then the same moves are made again two ways:

- **step by step**, as ``Race.move`` makes them, each step timed on its own: validating and
  applying the move (``Game.play``), the piles it changed (``Game.changed_piles``; before
  commit 80eb49b the whole table, compared pile by pile with the one before) and what the
  player sees of them (``pile_model``), progress and outcome, the legal moves and their text,
  the notes and the events' text;
- **through the race**: ``Race.move`` of a one-seat race, whole (the reply and the progress
  event built, the progress event written as JSON), and then the reply written as JSON as the
  shell does (``Outgoing.text``).

Each deal's moves are made ``--repeat`` times, and each step of a deal counts the least time it
took. ``--profile`` runs the race way once more under
cProfile and prints where the time goes, by area and by function. Markdown to stdout, progress
to stderr.
"""

from __future__ import annotations

import argparse
import cProfile
import platform
import pstats
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import reduce
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.moves import Move  # noqa: E402
from engine.players import GreedyPlayer, play_out  # noqa: E402
from engine.registry import RULE_SET_NAMES, find_rule_set  # noqa: E402
from server.core.race import Race  # noqa: E402
from server.core.terms import RaceTerms
from server.core.views import pile_model

STEPS = (
    "play",
    "changed piles",
    "pile_model",
    "progress, outcome",
    "legal moves + text",
    "notes, events text",
)
"""The steps of ``Race.move`` that touch the engine, in the order it takes them."""
AREAS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("engine: Game (play, legal moves, outcome, changed piles)", ("engine/game.py",)),
    ("engine: rule sets (move lists, apply, forced steps)", ("engine/rulesets/",)),
    ("engine: views and pile states", ("engine/view.py",)),
    (
        "engine: moves, cards, pile ids (eq, hash, text)",
        ("engine/moves.py", "engine/cards.py", "engine/piles.py"),
    ),
    ("race state machine (server/core/race.py)", ("server/core/race.py",)),
    ("pydantic: models and JSON", ("pydantic", "wire/protocol.py")),
    ("dataclass-generated eq/hash/init", ("<string>",)),
    ("the bench's own loop", ("move_cost.py",)),
)
"""cProfile's own time (tottime) grouped by the file a function lives in (a built-in by its
name: pydantic-core's ``validate_python`` counts as pydantic); the rest is "other"."""


@dataclass
class Deal:
    seed: int
    moves: list[Move]


@dataclass
class Timings:
    moves: int = 0
    steps: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STEPS, 0.0))
    race: float = 0.0
    reply_json: float = 0.0

    def per_move(self, seconds: float) -> float:
        return 1e6 * seconds / self.moves

    def least(self, other: Timings) -> Timings:
        """Step by step, the lesser of two passes over the same moves."""
        return Timings(
            self.moves,
            {step: min(self.steps[step], other.steps[step]) for step in STEPS},
            min(self.race, other.race),
            min(self.reply_json, other.reply_json),
        )

    def add(self, other: Timings) -> None:
        self.moves += other.moves
        for step in STEPS:
            self.steps[step] += other.steps[step]
        self.race += other.race
        self.reply_json += other.reply_json


def greedy_deals(name: str, deals: int, rng: random.Random) -> list[Deal]:
    game_type = find_rule_set(name)
    played = []
    for _ in range(deals):
        game = play_out(
            game_type(rng.getrandbits(64)),
            GreedyPlayer(random.Random(rng.getrandbits(32)), patience=200),
        )
        played.append(Deal(game.seed, list(game.history)))
    return played


def step_by_step(name: str, deals: list[Deal], timings: Timings) -> None:
    clock = time.perf_counter
    spent = timings.steps
    for deal in deals:
        game = find_rule_set(name)(deal.seed, keep_opening=False)
        for move in deal.moves:
            start = clock()
            events = game.play(move)
            played = clock()
            changed = game.changed_piles()
            found = clock()
            [pile_model(pile.seen()) for pile in changed]
            modelled = clock()
            game.progress(), game.outcome()
            judged = clock()
            [str(legal) for legal in game.legal_moves()]
            listed = clock()
            game.notes(), [str(event) for event in events]
            noted = clock()
            for step, begin, end in zip(
                STEPS,
                (start, played, found, modelled, judged, listed),
                (played, found, modelled, judged, listed, noted),
                strict=True,
            ):
                spent[step] += end - begin
        timings.moves += len(deal.moves)


def one_seat_race(name: str, seed: int) -> Race:
    race = Race(
        RaceTerms(
            race_id="bench",
            code="BENCH",
            rule_set=name,
            seed=seed,
            algorithm=1,
            deal_kind="number",
            seats_max=1,
            time_limit_s=None,
            countdown_s=0,
        ),
        host_id="p1",
        host_name="bench",
    )
    race.start("p1", 0.0)
    return race


def through_the_race(name: str, deals: list[Deal], timings: Timings | None) -> None:
    clock = time.perf_counter
    for deal in deals:
        race = one_seat_race(name, deal.seed)
        for index, move in enumerate(deal.moves, start=1):
            start = clock()
            out = race.move("p1", move, index / 1000)
            moved = clock()
            out[1].text()
            written = clock()
            if timings is not None:
                timings.race += moved - start
                timings.reply_json += written - moved


def measure(name: str, deals: list[Deal], repeat: int) -> Timings:
    """Each deal's moves are made ``repeat`` times each way, and each step counts the least it
    took: on a shared machine, the pass that other processes disturbed least."""
    step_by_step(name, deals[:1], Timings())  # warm up: imports, made-once moves and events
    total = Timings()
    for deal in deals:
        passes = []
        for _ in range(repeat):
            timings = Timings()
            step_by_step(name, [deal], timings)
            through_the_race(name, [deal], timings)
            passes.append(timings)
        total.add(reduce(Timings.least, passes))
    return total


def profile(all_deals: dict[str, list[Deal]], top: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    for name, deals in all_deals.items():
        through_the_race(name, deals, None)
    profiler.disable()
    stats = pstats.Stats(profiler)
    entries: dict[tuple[str, int, str], tuple[float, float]] = {
        key: (value[2], value[3]) for key, value in stats.stats.items()
    }  # type: ignore[attr-defined]
    total = sum(own for own, _ in entries.values())
    by_area: dict[str, float] = {}
    for (filename, _, function), (own, _) in entries.items():
        where = function if filename == "~" else filename
        area = next(
            (label for label, markers in AREAS if any(marker in where for marker in markers)),
            "other",
        )
        by_area[area] = by_area.get(area, 0.0) + own
    print("\n| area (cProfile, own time) | share |\n| --- | ---: |")
    for area, own in sorted(by_area.items(), key=lambda item: -item[1]):
        print(f"| {area} | {100 * own / total:.1f} % |")
    print(f"\n| function (top {top} by own time) | own % | with callees % |\n| --- | ---: | ---: |")
    ranked = sorted(entries.items(), key=lambda item: -item[1][0])[:top]
    for (filename, line, function), (own, inclusive) in ranked:
        where = Path(filename).name if filename != "~" else "builtin"
        print(
            f"| `{function}` ({where}:{line}) | {100 * own / total:.1f} "
            f"| {100 * inclusive / total:.1f} |"
        )


def commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
        check=False,
    )
    return done.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--rule-set", action="append", choices=RULE_SET_NAMES)
    parser.add_argument("--seed", type=int, default=1, help="seed of the bench's own choices")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="passes over each deal; each step counts the least it took",
    )
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    names = args.rule_set or list(RULE_SET_NAMES)
    rng = random.Random(args.seed)
    all_deals = {}
    for name in names:
        print(f"{name}: playing {args.deals} deals ...", file=sys.stderr, flush=True)
        all_deals[name] = greedy_deals(name, args.deals, rng)
    print(
        f"Per-move cost, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, commit {commit()}, "
        f"{args.deals} greedy deals per rule set, least of {args.repeat} passes a deal, Python "
        f"{platform.python_version()} on {platform.machine()}; µs per move\n"
    )
    print(f"| rule set | moves | {' | '.join(STEPS)} | engine steps | Race.move | reply JSON |")
    print("| --- " + "| ---: " * (len(STEPS) + 4) + "|")
    for name, deals in all_deals.items():
        print(f"{name}: timing ...", file=sys.stderr, flush=True)
        timings = measure(name, deals, args.repeat)
        steps = [timings.per_move(timings.steps[step]) for step in STEPS]
        print(
            f"| {name} | {timings.moves:,} | "
            + " | ".join(f"{value:.1f}" for value in steps)
            + f" | {sum(steps):.1f} | {timings.per_move(timings.race):.1f} "
            f"| {timings.per_move(timings.reply_json):.1f} |",
            flush=True,
        )
    if args.profile:
        profile(all_deals, args.top)


if __name__ == "__main__":
    main()
