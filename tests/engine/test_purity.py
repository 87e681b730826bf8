"""The engine is pure rules: importing all of it pulls in no asyncio, websockets or database."""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = ("asyncio", "websockets", "sqlalchemy", "alembic", "pydantic", "server", "clients")


def test_engine_imports_only_the_standard_library() -> None:
    code = (
        "import sys\n"
        "import engine.registry, engine.replay, engine.players, engine.solver\n"
        "for game in engine.registry.all_rule_sets(): pass\n"
        f"print([m for m in {FORBIDDEN!r} if m in sys.modules])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
