"""A free TCP port on this machine, for a server that must come back on the same address
after a restart (a test that restarts it cannot use port 0)."""

from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
