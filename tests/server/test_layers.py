"""The server's packages in layers, each importing only those below it, and no module in a
circle: a newcomer can tell where a thing lives by what it may use.

    server (service, main, sweeper, commands)  the process: puts the pieces together
      net       where a connection is handled: WebSocket, HTTP, pages
      cluster   what carries requests and frames between workers
      rooms     where a room lives: its host, delivery, timers, pool, solver processes
      storage   the database: models, what is stored, the writer
      core      pure: the race, its rules and limits; fed events and the time

``settings`` and ``speedups`` are read by every layer but ``core``. Imports made only for type
checking count too: a circle that only the type checker walks is still one a reader walks.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SERVER = Path(__file__).resolve().parents[2] / "server"
LAYERS = ["core", "storage", "rooms", "cluster", "net"]
"""From the bottom up; the top-level modules of ``server`` sit above them all."""
SHARED = {"server.settings", "server.speedups"}
"""Modules below every layer but ``core``."""


def module_name(path: Path) -> str:
    parts = path.relative_to(SERVER.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def server_imports(path: Path) -> Iterator[str]:
    """The server modules ``path`` imports, by their full names."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "server" or node.module.startswith("server."):
                for alias in node.names:  # (``from server.storage import races``)
                    candidate = f"{node.module}.{alias.name}"
                    yield (
                        candidate
                        if (SERVER.parent / (candidate.replace(".", "/") + ".py")).exists()
                        else node.module
                    )
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name.startswith("server."))


def graph() -> dict[str, set[str]]:
    return {module_name(path): set(server_imports(path)) for path in SERVER.rglob("*.py")}


def layer(module: str) -> int:
    """The module's layer: its index in ``LAYERS``; the shared modules sit just above core,
    the top-level modules above every package."""
    if module in SHARED:
        return 0
    parts = module.split(".")
    if len(parts) > 2 and parts[1] in LAYERS:
        return LAYERS.index(parts[1]) + 1
    return len(LAYERS) + 1


def test_each_layer_imports_only_those_below_it() -> None:
    upward = sorted(
        f"{module} imports {imported}"
        for module, imports in graph().items()
        for imported in imports
        if layer(imported) > layer(module)
        or (module.startswith("server.core.") and imported in SHARED)
    )
    assert upward == []


def test_core_imports_nothing_of_the_server_but_core() -> None:
    for module, imports in graph().items():
        if module.startswith("server.core."):
            assert all(imported.startswith("server.core.") for imported in imports), module


def test_no_module_imports_itself_through_others() -> None:
    imports = graph()
    circles = []
    for start in imports:
        stack, seen = [(start, (start,))], set()
        while stack:
            module, path = stack.pop()
            for imported in imports.get(module, ()):
                if imported == start:
                    circles.append(" -> ".join((*path, start)))
                elif imported not in seen:
                    seen.add(imported)
                    stack.append((imported, (*path, imported)))
    assert circles == []
