"""bench/solver_bench.py on two quick rule sets: the table comes out, its shares add up. Its
figures are printed, never asserted beyond that: this only checks that a short run works."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_run_prints_the_table() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "solver_bench.py"), "--deals", "4", "--budget",
         "1", "--rule-set", "all-fours", "--rule-set", "hidden-cards"],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "[8/8] hidden-cards deal 3: " in done.stderr
    rows = re.findall(r"^\| (all-fours|hidden-cards) \| 4 \| (\d+)% \([^)]+\) \| (\d+)% "
                      r"\([^)]+\) \| 0% \(0%-49%\) \|", done.stdout, re.MULTILINE)
    assert [name for name, *_ in rows] == ["all-fours", "hidden-cards"], done.stdout
    assert all(int(won) + int(lost) == 100 for _, won, lost in rows)
    assert "upper bound for a player who cannot see them" in done.stdout
