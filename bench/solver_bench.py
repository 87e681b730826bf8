"""Solver figures per rule set: how many deals are won, lost or unknown at a budget, and how fast.

    python bench/solver_bench.py [--deals 50] [--budget 2] [--first 0] [--workers 1]
                                 [--rule-set NAME ...]

For each rule set, searches deals ``--first`` .. ``--first + --deals - 1`` with engine/solver/ at
``--budget`` seconds each (full knowledge of the hidden cards: a win is an upper bound for a
player who cannot see them). Prints, in Markdown on stdout: the share won / lost / unknown with
95% Wilson intervals, the median and 99th percentile time to a verdict (decided deals only),
positions searched a second, and the share of deals decided within 1 s. Progress on stderr.
``--workers`` above 1 searches deals in parallel processes: more deals an hour, but each search
then shares the machine, so the times are a little worse than on an idle core.
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.registry import RULE_SET_NAMES, find_rule_set  # noqa: E402
from engine.solver import Budget, Result, solve  # noqa: E402

Z95 = 1.959964


def search(task: tuple[str, int, float]) -> tuple[str, int, str, float, int, int]:
    """One deal: (rule set, deal, result, seconds, nodes, moves in the winning line)."""
    name, seed, budget = task
    verdict = solve(find_rule_set(name)(seed), Budget(seconds=budget))
    return (name, seed, str(verdict.result), verdict.effort.seconds, verdict.effort.nodes,
            len(verdict.line))


def wilson(hits: int, total: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a share ``hits / total``."""
    if total == 0:
        return 0.0, 1.0
    share = hits / total
    middle = share + Z95 ** 2 / (2 * total)
    spread = Z95 * math.sqrt(share * (1 - share) / total + Z95 ** 2 / (4 * total ** 2))
    scale = 1 + Z95 ** 2 / total
    return (middle - spread) / scale, (middle + spread) / scale


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (the value at or below which ``share`` of them lie)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def share_text(hits: int, total: int) -> str:
    low, high = wilson(hits, total)
    return f"{hits / total:.0%} ({low:.0%}-{high:.0%})"


def row(name: str, results: list[tuple[str, int, str, float, int, int]]) -> str:
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
    return (f"| {name} | {total} | {share_text(counts[Result.WON], total)} | "
            f"{share_text(counts[Result.LOST], total)} | "
            f"{share_text(counts[Result.UNKNOWN], total)} | {median} | {p99} | {rate:,.0f} | "
            f"{quick / total:.0%} | {line} |")


def run(tasks: list[tuple[str, int, float]], workers: int
        ) -> Iterator[tuple[str, int, str, float, int, int]]:
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
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True, cwd=root).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True, cwd=root).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" +changes" if dirty.strip() else "")


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=50)
    parser.add_argument("--budget", type=float, default=2.0, metavar="SECONDS")
    parser.add_argument("--first", type=int, default=0, help="the first deal number")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--rule-set", action="append", choices=RULE_SET_NAMES, dest="rule_sets")
    args = parser.parse_args(None if argv is None else list(argv))
    names = args.rule_sets or list(RULE_SET_NAMES)
    tasks = [(name, seed, args.budget) for name in names
             for seed in range(args.first, args.first + args.deals)]
    by_name: dict[str, list[tuple[str, int, str, float, int, int]]] = {name: [] for name in names}
    code = commit()
    started = time.perf_counter()
    for done, result in enumerate(run(tasks, args.workers), 1):
        by_name[result[0]].append(result)
        print(f"[{done}/{len(tasks)}] {result[0]} deal {result[1]}: {result[2]} in "
              f"{result[3]:.2f} s, {result[4]:,} positions", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started
    print(f"## Solver verdicts at {args.budget:g} s a deal\n")
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; commit {code}; deals {args.first}.."
          f"{args.first + args.deals - 1} of each rule set; {args.workers} worker(s); Python "
          f"{platform.python_version()} on {platform.machine()}, {platform.system()}; "
          f"{elapsed:.0f} s in all.\n")
    print("Full knowledge of face-down and undealt cards: won is an upper bound for a player who "
          "cannot see them. Shares with 95% Wilson intervals; times to a verdict over decided "
          "deals only.\n")
    print("| rule set | deals | won | lost | unknown | median s | p99 s | positions/s | "
          "decided in 1 s | median line |")
    print("|---|---:|---|---|---|---:|---:|---:|---:|---:|")
    for name in names:
        print(row(name, by_name[name]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
