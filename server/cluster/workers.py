"""``patience-race serve --workers N``: N worker processes behind the one public port.

The supervisor (this module, run by ``serve``) applies the migrations, opens the public
listening socket, and starts N workers (``python -m server.main``: ``server.main.run_worker``),
each handed that socket: the kernel gives each new connection to one of the workers accepting on
it, as a pre-forking server does, so no proxy is needed in front of one machine. Each worker is
a whole server (``server.main.run_server``) with its own rooms, connections and database engine;
Redis (``server.cluster.redis_bus``) tells them which worker holds which room and carries
requests between them. Each worker also listens on a port of its own: its ``reconnect_to``
address.

The supervisor restarts a worker that dies (its rooms are taken over by the others meanwhile).
On SIGTERM or SIGINT it stops every worker with SIGTERM, and each shuts down gracefully. Ctrl-C
in a terminal sends SIGINT to every process of the foreground group, the workers and their
solver processes too: so a worker starts with SIGINT ignored (an ignored signal stays ignored in
the processes it starts), and the supervisor alone acts on it, as on SIGTERM, which only it gets.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import redis

from engine.solver import core_description
from server.settings import Settings
from server.storage.engine import upgrade_database

log = logging.getLogger("patience_race.server")

SETTINGS_VARIABLE = "PATIENCE_RACE_WORKER_SETTINGS"
"""How a worker gets the supervisor's settings (as JSON, command-line options included)."""
READY_TIMEOUT_S = 60.0
RESTART_DELAY_S = 1.0


def serve_workers(settings: Settings) -> int:
    """Run ``settings.worker_count`` workers until SIGTERM or SIGINT; the exit status. A signal
    while the migrations run or the workers start stops it as well, as soon as it can."""
    count = settings.worker_count
    stopping = threading.Event()

    def stop(signum: int, frame: object) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    asyncio.run(upgrade_database(settings.database_url))
    if stopping.is_set():
        return 0
    listen = socket.create_server((settings.host, settings.port), backlog=1024)
    listen.set_inheritable(True)
    host, port = listen.getsockname()[:2]
    workers: list[_Worker] = []
    for index in range(count):
        if not stopping.is_set():
            workers.append(_start(settings, index, listen))
    if all(_wait_ready(worker, stopping) for worker in workers) and not stopping.is_set():
        log.info(
            "patience-race serving on ws://%s:%d/ws with %d workers (database %s, "
            "redis %s; solver core: %s)",
            host,
            port,
            count,
            settings.safe_database_url,
            settings.redis_url,
            core_description(),
        )
    while not stopping.is_set():
        time.sleep(0.2)
        for index, worker in enumerate(workers):
            if worker.poll() is not None and not stopping.is_set():
                log.warning(
                    "worker %d (pid %d) exited with %s: starting another",
                    index,
                    worker.process.pid,
                    worker.process.returncode,
                )
                _declare_dead(settings, worker)
                time.sleep(RESTART_DELAY_S)
                workers[index] = _start(settings, index, listen)
                _wait_ready(workers[index], stopping)
    for worker in workers:
        if worker.poll() is None:
            worker.process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + settings.shutdown_s + 5
    for worker in workers:
        try:
            worker.process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            worker.process.kill()
    return 0


@dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    ready_fd: int
    """Where it writes its name once it serves."""
    name: str = ""

    def poll(self) -> int | None:
        return self.process.poll()


def _start(settings: Settings, index: int, listen: socket.socket) -> _Worker:
    read, write = os.pipe()
    env = dict(os.environ, **{SETTINGS_VARIABLE: settings.model_dump_json()})
    with _sigint_ignored():
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "server.main",
                "--index",
                str(index),
                "--listen-fd",
                str(listen.fileno()),
                "--ready-fd",
                str(write),
            ],
            pass_fds=(listen.fileno(), write),
            env=env,
            stdin=subprocess.DEVNULL,
        )
    os.close(write)
    return _Worker(process, read)


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while a worker is started, which keeps it so (a Ctrl-C in these
    microseconds is lost: press it again)."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _wait_ready(worker: _Worker, stopping: threading.Event) -> bool:
    """Block until the worker says it serves (its name, on its pipe), or fail; False if the
    supervisor is asked to stop meanwhile."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if stopping.is_set():
            return False
        if worker.poll() is not None:
            raise RuntimeError(f"a worker exited before serving ({worker.process.returncode})")
        ready, _, _ = select.select([worker.ready_fd], [], [], 0.2)
        if ready:
            worker.name = os.read(worker.ready_fd, 256).decode()
            os.close(worker.ready_fd)
            return True
    raise RuntimeError("a worker did not start in time")


def _declare_dead(settings: Settings, worker: _Worker) -> None:
    """Tell the other workers at once that this one is dead, rather than when its heartbeat
    expires: they take over its rooms within a heartbeat."""
    if not worker.name or settings.redis_url is None:
        return
    try:
        connection = redis.Redis.from_url(settings.redis_url)
        connection.delete(f"{settings.redis_prefix}worker:{worker.name}")
        connection.close()
    except redis.RedisError as error:
        log.warning("could not tell Redis that worker %s is dead: %s", worker.name, error)
