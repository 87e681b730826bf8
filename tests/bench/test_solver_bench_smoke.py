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
        [
            sys.executable,
            str(ROOT / "bench" / "solver_bench.py"),
            "--deals",
            "4",
            "--budget",
            "1",
            "--rule-set",
            "all-fours",
            "--rule-set",
            "hidden-cards",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "[8/8] hidden-cards deal 3: " in done.stderr
    rows = re.findall(
        r"^\| (all-fours|hidden-cards) \| 4 \| (\d+)% \([^)]+\) \| (\d+)% "
        r"\([^)]+\) \| 0% \(0%-49%\) \|",
        done.stdout,
        re.MULTILINE,
    )
    assert [name for name, *_ in rows] == ["all-fours", "hidden-cards"], done.stdout
    assert all(int(won) + int(lost) == 100 for _, won, lost in rows)
    assert "upper bound for a player who cannot see them" in done.stdout


def test_a_results_file_is_continued_and_reported(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    command = [
        sys.executable,
        str(ROOT / "bench" / "solver_bench.py"),
        "--budget",
        "1",
        "--rule-set",
        "all-fours",
        "--out",
        str(out),
    ]
    first = subprocess.run(
        [*command, "--deals", "2"], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert first.returncode == 0, first.stderr[-2000:]
    again = subprocess.run(
        [*command, "--deals", "3"], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert "[1/1] all-fours deal 2: " in again.stderr
    assert len(out.read_text().splitlines()) == 3
    report = subprocess.run(
        [*command, "--report"], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert re.search(
        r"^\| all-fours \| 3 \| .* \| \d+% \([^)]+\) \| \d+% \([^)]+\) \|$",
        report.stdout,
        re.MULTILINE,
    ), report.stdout
    assert "all-fours 0..2 (3)" in report.stdout


def test_a_budget_in_positions_gives_the_same_verdicts_again_and_is_kept_apart(
    tmp_path: Path,
) -> None:
    out = tmp_path / "results.jsonl"
    command = [
        sys.executable,
        str(ROOT / "bench" / "solver_bench.py"),
        "--rule-set",
        "cornerstones",
        "--deals",
        "3",
        "--out",
        str(out),
    ]
    runs = [
        subprocess.run(
            [*command, "--nodes", "300"], capture_output=True, text=True, timeout=120, cwd=ROOT
        )
        for _ in range(2)
    ]
    assert all(run.returncode == 0 for run in runs), runs[0].stderr[-2000:]
    assert "[3/3] cornerstones deal 2: " in runs[0].stderr
    assert "[" not in runs[1].stderr  # the second run found every deal in the file
    assert "at 300 positions a deal" in runs[1].stdout
    fresh = subprocess.run(
        [*command[:-2], "--nodes", "300"], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    verdicts = re.findall(r"deal (\d): (\w+) in [\d.]+ s, ([\d,]+) positions", fresh.stderr)
    saved = out.read_text().splitlines()
    assert len(saved) == 3 and len(verdicts) == 3
    for (deal, result, nodes), line in zip(verdicts, saved, strict=True):
        assert f'"deal": {deal}, "result": "{result}"' in line
        assert f'"nodes": {nodes.replace(",", "")},' in line
    other = subprocess.run(
        [*command, "--nodes", "200", "--deals", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert "[1/1] cornerstones deal 0: " in other.stderr  # another budget is searched anew
