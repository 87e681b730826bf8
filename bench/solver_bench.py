"""Solver figures per rule set: how many deals are won, lost or unknown at a budget, and how fast.

    python bench/solver_bench.py [--deals 50] [--budget 2 | --nodes N] [--first 0] [--workers 1]
                                 [--rule-set NAME ...] [--deals-for NAME=N ...]
                                 [--core best|python] [--no-players]
                                 [--out results.jsonl] [--report]
    python bench/solver_bench.py --speed [--deals 10] [--nodes 20000] [--rule-set NAME ...]

For each rule set, searches deals ``--first`` .. ``--first + --deals - 1`` with engine/solver/ at
``--budget`` seconds each, or ``--nodes`` positions each (full knowledge of the hidden cards: a
win is an upper bound for a player who cannot see them). Prints, in Markdown on stdout: the
share won / lost / unknown with 95% Wilson intervals, the median and 99th percentile time to a
verdict (decided deals only), positions searched a second, and the share of deals decided
within 1 s. Progress on stderr. A budget in positions gives the same verdicts on any machine
however busy it is, so anyone can check a table made with it; a budget in seconds does not.
``--workers`` above 1 searches deals in parallel processes: more deals an hour, but each search
then shares the machine, so the times are a little worse than on an idle core.

For comparison, each deal is also played to its end by the engine's random and greedy players
(engine/players.py, which see only what a person sees), seeded with the deal number; the table
gives their win rates on the same deals.

Deals are taken deal number first, rule set second (deal 0 of every rule set, then deal 1...), so
a run stopped at any point has about as many deals of each. ``--deals-for hidden-cards=10000``
gives one rule set more deals than ``--deals``. ``--out FILE`` appends one JSON line per deal as
it is decided and, when run again with the same file, skips the deals (same rule set and budget)
already in it: a long run can be stopped and continued. The table is then made from every deal
of the file at this budget. ``--report`` only prints the table from ``--out``.

``--core python`` searches with the pure-Python search even where the compiled core is built
(``best``, the default, is what ``engine.solver.solve`` uses: the compiled core for the rule sets
it knows); a results file keeps the two apart. ``--no-players`` leaves the random and greedy
players out (their columns show "-"): on a long run at a small budget they cost more than the
search.

``--speed`` prints instead, per rule set the compiled core knows, positions searched a second
by the compiled core and by the Python search on the same deals at the same budget in
positions (``--nodes``, default 20,000; ``--deals``, default 10), and their ratio.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.players import STRATEGIES, play_out  # noqa: E402
from engine.registry import RULE_SET_NAMES, find_rule_set  # noqa: E402
from engine.solver import Budget, Result, compiled, solve  # noqa: E402
from engine.solver.search import solve as python_solve  # noqa: E402
from engine.view import Status  # noqa: E402

Z95 = 1.959964

Record = tuple[str, int, str, float, int, int, bool | None, bool | None]
"""One deal: (rule set, deal, result, seconds, nodes, moves in the winning line, whether the
random player won it, whether the greedy player won it; None: not played)."""

FIELDS = ("rule_set", "deal", "result", "seconds", "nodes", "moves", "random_won", "greedy_won")
Task = tuple[str, int, Budget, str, bool]
"""One deal to search: (rule set, deal, budget, core, whether the players play it too)."""


def search(task: Task) -> Record:
    """One deal: the solver's verdict, and the random and greedy players' games."""
    name, seed, budget, core, players = task
    rule_set = find_rule_set(name)
    verdict = (python_solve if core == "python" else solve)(rule_set(seed), budget)
    won: list[bool | None] = [None, None]
    if players:
        won = [
            play_out(rule_set(seed), STRATEGIES[kind](random.Random(seed))).outcome().status
            is Status.WON
            for kind in ("random", "greedy")
        ]
    return (
        name,
        seed,
        str(verdict.result),
        verdict.effort.seconds,
        verdict.effort.nodes,
        len(verdict.line),
        won[0],
        won[1],
    )


def core_of(name: str, core: str) -> str:
    """Which core searches ``name`` for ``--core core``: ``compiled`` or ``python``."""
    return "compiled" if core == "best" and name in compiled.RULE_SETS else "python"


def load(path: Path, budget: Budget, core: str) -> list[Record]:
    """The deals a results file holds at ``budget`` with ``--core core`` (the last line of a
    deal wins; a line without a core is the Python search's, written before the compiled
    core)."""
    if not path.exists():
        return []
    records: dict[tuple[str, int], Record] = {}
    for text in path.read_text().splitlines():
        if not text.strip():
            continue
        data = json.loads(text)
        if (data.get("budget"), data.get("node_budget")) != (budget.seconds, budget.nodes):
            continue
        if data.get("core", "python") != core_of(data["rule_set"], core):
            continue
        record = tuple(data[field] for field in FIELDS)
        records[(data["rule_set"], data["deal"])] = record
    return list(records.values())


def save(path: Path, record: Record, budget: Budget, code: str, core: str) -> None:
    data = dict(zip(FIELDS, record, strict=True))
    data.update(
        budget=budget.seconds,
        node_budget=budget.nodes,
        commit=code,
        core=core_of(record[0], core),
        at=f"{datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}",
    )
    with path.open("a") as file:
        file.write(json.dumps(data) + "\n")


def wilson(hits: int, total: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a share ``hits / total``."""
    if total == 0:
        return 0.0, 1.0
    share = hits / total
    middle = share + Z95**2 / (2 * total)
    spread = Z95 * math.sqrt(share * (1 - share) / total + Z95**2 / (4 * total**2))
    scale = 1 + Z95**2 / total
    return (middle - spread) / scale, (middle + spread) / scale


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (the value at or below which ``share`` of them lie)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def share_text(hits: int, total: int) -> str:
    low, high = wilson(hits, total)
    return f"{hits / total:.0%} ({low:.0%}-{high:.0%})"


def row(name: str, results: list[Record]) -> str:
    total = len(results)
    counts = {result: sum(r[2] == result for r in results) for result in Result}
    decided = [r[3] for r in results if r[2] != Result.UNKNOWN]
    seconds = sum(r[3] for r in results)
    rate = sum(r[4] for r in results) / seconds if seconds else 0.0
    quick = sum(1 for r in results if r[2] != Result.UNKNOWN and r[3] <= 1.0)
    lines = [r[5] for r in results if r[2] == Result.WON]
    median = f"{statistics.median(decided):.3f}" if decided else "-"
    p99 = f"{percentile(decided, 0.99):.3f}" if decided else "-"
    line = f"{statistics.median(lines):g}" if lines else "-"
    played = [r for r in results if r[6] is not None]
    randoms = share_text(sum(1 for r in played if r[6]), len(played)) if played else "-"
    greedies = share_text(sum(1 for r in played if r[7]), len(played)) if played else "-"
    return (
        f"| {name} | {total} | {share_text(counts[Result.WON], total)} | "
        f"{share_text(counts[Result.LOST], total)} | "
        f"{share_text(counts[Result.UNKNOWN], total)} | {median} | {p99} | {rate:,.0f} | "
        f"{quick / total:.0%} | {line} | {randoms} | {greedies} |"
    )


def speed(names: list[str], deals: int, first: int, nodes: int) -> None:
    """The ``--speed`` table: positions a second, compiled core against Python search."""
    budget = Budget(nodes=nodes)
    print("## Positions searched a second: compiled core against the Python search\n")
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; commit {commit()}; deals {first}.."
        f"{first + deals - 1}; {nodes:,} positions a deal (or fewer, where a deal is decided "
        f"sooner); Python {platform.python_version()} on {platform.machine()}.\n"
    )
    print("| rule set | compiled positions/s | Python positions/s | ratio |")
    print("|---|---:|---:|---:|")
    for name in names:
        if name not in compiled.RULE_SETS:
            continue
        rates = []
        for solver in (solve, python_solve):
            spent = searched = 0.0
            for seed in range(first, first + deals):
                effort = solver(find_rule_set(name)(seed), budget).effort
                spent += effort.seconds
                searched += effort.nodes
            rates.append(searched / spent if spent else 0.0)
            print(f"{name}: {rates[-1]:,.0f} positions/s", file=sys.stderr, flush=True)
        print(f"| {name} | {rates[0]:,.0f} | {rates[1]:,.0f} | {rates[0] / rates[1]:,.0f}x |")


def run(tasks: list[Task], workers: int) -> Iterator[Record]:
    if workers <= 1:
        yield from map(search, tasks)
        return
    with Pool(workers) as pool:
        yield from pool.imap(search, tasks)


def commit() -> str:
    """The commit checked out, "+changes" if the work tree differs from it: asked at the start,
    since the code searched is the code imported then."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=root,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
            cwd=root,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" +changes" if dirty.strip() else "")


def deal_counts(args: argparse.Namespace, names: list[str]) -> dict[str, int]:
    counts = dict.fromkeys(names, args.deals or 50)
    for text in args.deals_for or []:
        name, _, number = text.partition("=")
        if name not in counts or not number.isdigit():
            raise SystemExit(f"--deals-for {text!r}: give NAME=N for a rule set searched")
        counts[name] = int(number)
    return counts


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--deals", type=int, help="default: 50 (10 with --speed)")
    limit = parser.add_mutually_exclusive_group()
    limit.add_argument("--budget", type=float, metavar="SECONDS", help="default: 2")
    limit.add_argument("--nodes", type=int, metavar="N", help="a budget in positions searched")
    parser.add_argument("--first", type=int, default=0, help="the first deal number")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--rule-set", action="append", choices=RULE_SET_NAMES, dest="rule_sets")
    parser.add_argument(
        "--deals-for",
        action="append",
        metavar="NAME=N",
        help="this many deals of one rule set instead of --deals",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="append each deal's result to this JSON-lines file and skip the deals already in it",
    )
    parser.add_argument(
        "--report", action="store_true", help="search nothing: print the table from --out"
    )
    parser.add_argument(
        "--core",
        choices=("best", "python"),
        default="best",
        help="best: the compiled core where it knows the rule set (default)",
    )
    parser.add_argument(
        "--no-players", action="store_true", help="leave the random and greedy players out"
    )
    parser.add_argument(
        "--speed",
        action="store_true",
        help="positions a second, compiled core against Python search",
    )
    args = parser.parse_args(None if argv is None else list(argv))
    names = args.rule_sets or list(RULE_SET_NAMES)
    if args.speed:
        if compiled.CORE is None:
            raise SystemExit("--speed: the compiled core is not built")
        speed(names, args.deals or 10, args.first, args.nodes or 20_000)
        return 0
    counts = deal_counts(args, names)
    budget = (
        Budget(nodes=args.nodes)
        if args.nodes is not None
        else Budget(seconds=2.0 if args.budget is None else args.budget)
    )
    done_before = load(args.out, budget, args.core) if args.out else []
    have = {(r[0], r[1]) for r in done_before}
    tasks = (
        []
        if args.report
        else [
            (name, seed, budget, args.core, not args.no_players)
            for seed in range(args.first, args.first + max(counts.values()))
            for name in names
            if seed < args.first + counts[name] and (name, seed) not in have
        ]
    )
    by_name: dict[str, list[Record]] = {name: [] for name in names}
    for record in done_before:
        if record[0] in by_name:
            by_name[record[0]].append(record)
    code = commit()
    started = time.perf_counter()
    for done, result in enumerate(run(tasks, args.workers), 1):
        by_name[result[0]].append(result)
        if args.out:
            save(args.out, result, budget, code, args.core)
        players = (
            ""
            if result[6] is None
            else (
                f"; random {'won' if result[6] else 'lost'}, greedy "
                f"{'won' if result[7] else 'lost'}"
            )
        )
        print(
            f"[{done}/{len(tasks)}] {result[0]} deal {result[1]}: {result[2]} in "
            f"{result[3]:.2f} s, {result[4]:,} positions{players}",
            file=sys.stderr,
            flush=True,
        )
    elapsed = time.perf_counter() - started
    print(f"## Solver verdicts at {budget} a deal\n")
    ranges = "; ".join(
        f"{name} {min(r[1] for r in rows)}..{max(r[1] for r in rows)} ({len(rows)})"
        for name, rows in by_name.items()
        if rows
    )
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; commit {code}; deals {ranges}; "
        f"{args.workers} worker(s); core: "
        + ", ".join(f"{name} {core_of(name, args.core)}" for name in names if by_name[name])
        + f"; Python {platform.python_version()} on "
        f"{platform.machine()}, {platform.system()}; {elapsed:.0f} s this run.\n"
    )
    print(
        "Full knowledge of face-down and undealt cards: won is an upper bound for a player who "
        "cannot see them. Shares with 95% Wilson intervals; times to a verdict over decided "
        "deals only; random and greedy: the engine's players' win rates on the same deals.\n"
    )
    print(
        "| rule set | deals | won | lost | unknown | median s | p99 s | positions/s | "
        "decided in 1 s | median line | random won | greedy won |"
    )
    print("|---|---:|---|---|---|---:|---:|---:|---:|---:|---|---|")
    for name in names:
        if by_name[name]:
            print(row(name, sorted(by_name[name], key=lambda r: r[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
