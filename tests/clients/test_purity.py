"""Clients never import the server: they speak the wire format from ``wire`` and nothing more."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

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
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"


def test_wire_imports_neither_side() -> None:
    code = (
        "import sys, wire.protocol, wire.names, wire.commitment\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('server', 'clients')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"
