"""The browser's room state (clients/web/room_state.js) under Node's own test runner: the pure
reducer the room page draws from, tested without a browser (clients/web/tests/*.test.js)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "clients" / "web" / "tests"
NODE = shutil.which("node")


@pytest.mark.skipif(
    NODE is None, reason="the reducer's tests run under Node (node --test), which is not installed"
)
def test_the_room_reducers_node_tests_pass() -> None:
    assert NODE is not None
    done = subprocess.run(
        [NODE, "--test", str(TESTS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
