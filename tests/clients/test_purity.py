"""Clients never import the server: they speak the wire format from ``wire`` and nothing more."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import clients


def client_modules() -> list[str]:
    return sorted(module.name for module in pkgutil.walk_packages(clients.__path__, "clients."))


def test_every_client_module_is_found() -> None:
    assert {"clients.cli", "clients.sdk", "clients.bot"} <= set(client_modules())


def test_importing_every_client_module_loads_no_server_module() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {client_modules()!r}: importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m == 'server' or m.startswith('server.')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_no_client_module_imports_the_server_even_inside_a_function() -> None:
    """Not even lazily, where importing the module alone would not show it: the server's
    commands are ``server.commands``."""
    importing = []
    for path in sorted(Path(clients.__path__[0]).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            importing += [
                f"{path.name}: {name}" for name in names if name.split(".")[0] == "server"
            ]
    assert importing == []


def test_wire_imports_neither_side() -> None:
    code = (
        "import sys, wire.protocol, wire.names, wire.commitment\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('server', 'clients')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
