"""Several "machines" on this one, for the tests of a server on more than one host.

``lan(count)`` makes a small LAN with iproute2: a bridge in the root namespace at
``10.231.N.1/24`` (the machine that runs PostgreSQL and Redis, and the clients) and ``count``
network namespaces at ``.2``, ``.3``..., each with a veth ``eth0`` plugged into the bridge and
``lo`` up. A process started with ``Host.command`` runs in that namespace: its own ports, its
own ``127.0.0.1``, and the LAN. Everything made is removed at the end, even on failure.

PostgreSQL and Redis usually listen on ``127.0.0.1`` only, which no namespace can reach:
``forwarding`` relays a port on the bridge's address to them (as a proxy on the database
machine would). Connections then arrive at them from ``127.0.0.1``.

Needs root and ``ip``; ``NoNetwork`` says why not, for a test to skip with.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import secrets
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass


class NoNetwork(Exception):
    """This machine cannot make namespaces (not root, no ``ip``, or the kernel refused)."""


@dataclass(frozen=True)
class Host:
    namespace: str
    address: str
    """Its address on the LAN, where the root namespace reaches it."""

    def command(self, *argv: str) -> list[str]:
        """``argv`` run inside this host (``ip netns exec`` execs it: the same pid)."""
        return ["ip", "netns", "exec", self.namespace, *argv]


@dataclass(frozen=True)
class Lan:
    gateway: str
    """The root namespace's address on the LAN: where the hosts reach what runs there."""
    hosts: tuple[Host, ...]


def _ip(*argv: str) -> None:
    done = subprocess.run(["ip", *argv], capture_output=True, text=True, timeout=10)
    if done.returncode != 0:
        raise NoNetwork(f"`ip {' '.join(argv)}` failed: {done.stderr.strip()}")


def _free_subnet() -> int:
    """A third octet N for 10.231.N.0/24 that no interface here uses (runs may overlap)."""
    used = subprocess.run(
        ["ip", "-4", "-o", "addr"], capture_output=True, text=True, timeout=10
    ).stdout
    free = [n for n in range(256) if f" 10.231.{n}." not in used]
    if not free:
        raise NoNetwork("no free subnet in 10.231.0.0/16")
    return random.choice(free)


@contextlib.contextmanager
def lan(count: int) -> Iterator[Lan]:
    """``count`` hosts on a LAN with the root namespace; see the module's docstring."""
    if os.geteuid() != 0:
        raise NoNetwork("making network namespaces needs root")
    if shutil.which("ip") is None:
        raise NoNetwork("no `ip` command (iproute2)")
    tag = secrets.token_hex(3)
    subnet = _free_subnet()
    bridge = f"pr{tag}br"  # interface names: at most 15 characters
    namespaces: list[str] = []
    try:
        _ip("link", "add", bridge, "type", "bridge")
        _ip("addr", "add", f"10.231.{subnet}.1/24", "dev", bridge)
        _ip("link", "set", bridge, "up")
        hosts = []
        for index in range(count):
            namespace, veth = f"pr-{tag}-{chr(ord('a') + index)}", f"pr{tag}v{index}"
            _ip("netns", "add", namespace)
            namespaces.append(namespace)
            _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", namespace)
            _ip("link", "set", veth, "master", bridge)
            _ip("link", "set", veth, "up")
            address = f"10.231.{subnet}.{index + 2}"
            _ip("-n", namespace, "addr", "add", f"{address}/24", "dev", "eth0")
            _ip("-n", namespace, "link", "set", "eth0", "up")
            _ip("-n", namespace, "link", "set", "lo", "up")
            hosts.append(Host(namespace, address))
        yield Lan(f"10.231.{subnet}.1", tuple(hosts))
    finally:
        for namespace in namespaces:  # which deletes its eth0, and so the veth's other end
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, timeout=10)
        subprocess.run(["ip", "link", "del", bridge], capture_output=True, timeout=10)


@contextlib.asynccontextmanager
async def forwarding(listen: str, target: tuple[str, int]) -> AsyncIterator[int]:
    """Relay TCP connections to a free port on ``listen`` to ``target``; yields that port.
    The connections still open at the end are cut."""
    open_writers: set[asyncio.StreamWriter] = set()

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        open_writers.add(writer)
        try:
            far_reader, far_writer = await asyncio.open_connection(*target)
        except OSError:
            writer.close()
            open_writers.discard(writer)
            return
        open_writers.add(far_writer)
        await asyncio.gather(pipe(reader, far_writer), pipe(far_reader, writer))
        open_writers.difference_update((writer, far_writer))

    server = await asyncio.start_server(relay, listen, 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for writer in open_writers:
            writer.close()
