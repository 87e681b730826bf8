"""The compiled core is optional at install (issue 24): where no C compiler is present the
package still builds and installs, and the solver runs on the pure-Python search and says so.
Built here with the compiler taken away (``CC=/bin/false``) by the same pip and setuptools
build the README's install runs, then installed into a folder of its own and asked, outside
this checkout, which core it uses. The build runs on a copy of the sources alone, so that
nothing built here before (a ``build/`` folder, the core compiled in place) slips in."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_wheel(tmp_path: Path, env: dict[str, str]) -> Path:
    sources = tmp_path / "sources"
    shutil.copytree(
        ROOT,
        sources,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "*.so", "*.egg-info", "node_modules", "__pycache__"
        ),
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(sources),
            "--no-deps",
            "-w",
            str(tmp_path / "wheel"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = (tmp_path / "wheel").glob("*.whl")
    return wheel


def test_without_a_compiler_the_install_succeeds_and_the_python_search_answers(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "CC": "/bin/false"}
    wheel = build_wheel(tmp_path, env)
    names = zipfile.ZipFile(wheel).namelist()
    assert "engine/solver/compiled.py" in names
    assert not [name for name in names if name.endswith(".so")], names
    target = tmp_path / "installed"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    asked = subprocess.run(
        [
            sys.executable,
            "-c",
            "from engine.registry import find_rule_set\n"
            "from engine.solver import Budget, core_name, solve\n"
            "print(core_name(), solve(find_rule_set('four-corners')(1), Budget(nodes=300)).result)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(target)},
    )
    assert asked.returncode == 0, asked.stderr[-3000:]
    assert asked.stdout.split() == ["python", "unknown"]


def test_with_a_compiler_the_wheel_holds_the_core(tmp_path: Path) -> None:
    names = zipfile.ZipFile(build_wheel(tmp_path, dict(os.environ))).namelist()
    assert [
        name for name in names if name.startswith("engine/solver/_core") and name.endswith(".so")
    ], names
