"""bench/leaderboard_bench.py --quick on SQLite: a fresh database filled with 20,000 results,
every leaderboard query and write timed through the real store, the tables printed. Its
figures are printed, never asserted: this only checks that a short run works end to end."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIGURE = r"[\d,]+(?:\.\d+)?"


def test_quick_run_on_sqlite_prints_the_tables(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "leaderboard_bench.py"),
            "--quick",
            "--databases",
            "sqlite",
            "--sqlite-path",
            str(tmp_path / "bench.sqlite3"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert re.search(r"^## Leaderboards and writes at 20,000 results$", out, re.MULTILINE), out
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC; 20,000 results", out, re.MULTILINE), out
    assert re.search(
        rf"^\| SQLite \| [\d.]+ \| 1,000 \| {FIGURE} \| 20,000 \| ", out, re.MULTILINE
    ), out
    boards = re.findall(
        rf"^\| ([a-z][^|]+) \| {FIGURE} \| ({FIGURE}) \| ({FIGURE}) \| "
        r"(yes|NO) \|$",
        out,
        re.MULTILINE,
    )
    labels = [label for label, *_ in boards]
    for kind in (
        "fastest wins, today",
        "fastest wins, this week",
        "fastest wins, all time",
        "most wins",
        "most played deal",
        "biggest daily board",
    ):
        assert any(label.startswith(kind) for label in labels), out
    assert sum("around me" in label for label in labels) >= 4, out
    writes = re.findall(
        rf"^\| (results|moves): [^|]+ \| {FIGURE} (?:results|moves) \| "
        rf"{FIGURE} \| {FIGURE} \|$",
        out,
        re.MULTILINE,
    )
    assert writes == ["results", "moves", "moves", "moves"], out
    assert "results stored" in done.stderr  # progress goes to stderr
