"""bench/load.py --quick drives real server processes and prints its tables. Its figures are
printed, never asserted: this only checks that a short run works end to end."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from bench.echo_server import MAX_SIZE
from server.main import TRANSPORT_MAX_BYTES

ROOT = Path(__file__).resolve().parents[2]


def test_quick_closed_loop_prints_a_table_of_figures() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "load.py"), "--quick", "--modes", "closed",
         "--rooms", "4", "--warmup", "0.5", "--window", "2"],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    for server in ("ours", "echo"):
        row = re.search(rf"^\| 1 \| {server} \| [\d,]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| .* \| "
                        r"(\d+) \| (\d+) \| (\d+) \|$", done.stdout, re.MULTILINE)
        assert row, done.stdout
        assert row.group(1, 3) == ("0", "0"), f"{server}: errors\n{done.stderr[-2000:]}"
    assert re.search(r"^\| acks/s \| [\d.]+ \| [\d.]+ \|$", done.stdout, re.MULTILINE)
    assert "closed loop, moves/s >= 0.5 x echo messages/s" in done.stdout


def test_the_echo_server_has_the_race_servers_frame_limit() -> None:
    assert MAX_SIZE == TRANSPORT_MAX_BYTES
