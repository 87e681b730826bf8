"""Start and stop the race server: migrations, database engine, service, WebSocket listener.

``run_server`` is what ``patience-race serve`` calls; tests call it too, with port 0, and read
the bound address from the ``started`` callback. ``run_worker`` is one worker process of
``patience-race serve --workers N`` (``python -m server.main``, started by
``server.cluster.workers``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.server import serve

from engine.solver import core_description
from server.cluster.workers import SETTINGS_VARIABLE
from server.net.http import HttpApi
from server.service import Service
from server.settings import Settings
from server.speedups import run
from server.storage.engine import make_engine, upgrade_database
from server.storage.holding import process_name

log = logging.getLogger("patience_race.server")

GC_THRESHOLDS = (50_000, 20, 100)
TRANSPORT_MAX_BYTES = 1 << 20
"""Frames above the protocol's own limit (settings.max_frame_bytes) get a structured error;
only frames above this much larger transport limit make websockets close the connection (1009)."""


class Transport(logging.LoggerAdapter[logging.Logger]):
    """websockets' own log, its information lines said at DEBUG: it says one for every
    connection opened and closed and every HTTP answer (``/healthz``, the API, the browser's
    files), which would drown the server's own lines; its warnings and errors stay as they are.
    What it said at start and stop (listening, closing) the server's own lines say too."""

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        super().log(logging.DEBUG if level == logging.INFO else level, msg, *args, **kwargs)


TRANSPORT_LOG = Transport(logging.getLogger("websockets.server"))


@dataclass(frozen=True)
class Worker:
    """One of several worker processes: its number, and the public socket it shares."""

    index: int
    listen: socket.socket
    name: str
    """Its name on the Redis bus (``server.cluster.redis_bus``)."""


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
"""What stops a server of one process gracefully: ``kill``, and Ctrl-C in its terminal."""

WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})


def own_address(settings: Settings, host: str, port: int) -> str:
    """This process's WebSocket address for ``reconnect_to``: ``advertise_host``, else the host
    it listens on. With Redis (where ``reconnect_to`` is given), listening on every address
    (``--host 0.0.0.0``) without ``advertise_host`` advertises ``0.0.0.0``, which no client on
    another machine can reach: say so at start."""
    if settings.redis_url and settings.advertise_host is None and host in WILDCARD_HOSTS:
        log.warning(
            "listening on %r without PATIENCE_RACE_ADVERTISE_HOST: reconnect_to will "
            "be ws://%s:%d/ws, which clients on other machines cannot reach; set it to "
            "the address clients reach this machine by",
            host,
            host,
            port,
        )
    return f"ws://{settings.advertise_host or host}:{port}/ws"


def _finish(stop: asyncio.Future[None]) -> None:
    if not stop.done():
        stop.set_result(None)


async def run_server(
    settings: Settings,
    stop: asyncio.Future[None] | None = None,
    started: Callable[[str, int], None] | None = None,
    worker: Worker | None = None,
    clock: Callable[[], float] = time.time,
) -> None:
    """Serve until ``stop`` is done (or SIGTERM/SIGINT), then shut down gracefully.
    (``clock``: the service's clock, ``Service``; tests pass one they move by hand.)

    As one of several workers (``server.cluster.workers``), serve on the public socket the
    supervisor made, and on a port of its own (its ``reconnect_to`` address). A worker stops on
    SIGTERM only: SIGINT (Ctrl-C in a terminal reaches every process of the group) is for the
    supervisor, which then stops each worker with SIGTERM.

    The signals are handled from the first moment, so a Ctrl-C while the migrations run stops
    the server before it starts serving, quietly, and one while it starts makes it stop
    gracefully as soon as it has started."""
    loop = asyncio.get_running_loop()
    if stop is None:
        stop = loop.create_future()
        for signum in (signal.SIGTERM,) if worker is not None else STOP_SIGNALS:
            loop.add_signal_handler(signum, _finish, stop)
    if worker is None:
        await upgrade_database(settings.database_url)  # (the supervisor did, for workers)
        if stop.done():
            return
    engine = make_engine(settings.database_url)
    service = Service(
        settings,
        engine,
        clock=clock,
        worker=None if worker is None else worker.name,
        fills_pool=worker is None or worker.index == 0,
    )
    await service.start()
    # What start-up made (modules, pydantic schemas, restored races) lives as long as the
    # process: freezing it keeps the collector from walking it again on every full collection.
    # The collector's default thresholds cost a quarter of the server's CPU under load (each of
    # its full collections walked every connection's state for ~0.3 s, see
    # docs/performance.md); collecting the young generation after 50,000 net allocations rather
    # than 700 lets most of a move's objects die first, and full collections become rare.
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    options: dict[str, Any] = {
        "process_request": HttpApi(service),
        "compression": None,
        "max_size": TRANSPORT_MAX_BYTES,
        "logger": TRANSPORT_LOG,
    }
    try:
        async with contextlib.AsyncExitStack() as servers:
            if worker is not None:
                await servers.enter_async_context(
                    serve(service.handle, sock=worker.listen, **options)
                )
                own = await servers.enter_async_context(
                    serve(
                        service.handle,
                        settings.host,
                        settings.worker_own_port(worker.index),
                        **options,
                    )
                )
                host, port = next(iter(own.sockets)).getsockname()[:2]
                log.info(
                    "worker %d (pid %d) ready, its own address ws://%s:%d/ws",
                    worker.index,
                    os.getpid(),
                    host,
                    port,
                )
            else:
                server = await servers.enter_async_context(
                    serve(service.handle, settings.host, settings.port, **options)
                )
                host, port = next(iter(server.sockets)).getsockname()[:2]
                log.info(
                    "patience-race serving on ws://%s:%d/ws (database %s; solver core: %s)",
                    host,
                    port,
                    engine.url.render_as_string(hide_password=True),
                    core_description(),
                )
            service.serving_at(own_address(settings, host, port))
            if started is not None:
                started(host, port)
            await stop
            log.info("shutting down: saving and telling the clients")
            await service.shutdown()
    finally:
        await engine.dispose()


def run_worker() -> None:
    """A worker process of ``patience-race serve --workers N``: the supervisor
    (``server.cluster.workers``) starts it as ``python -m server.main``, with its number, the
    public socket and the pipe to say it is ready on, and the settings in the environment."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--index", type=int, required=True)
    parser.add_argument("--listen-fd", type=int, required=True)
    parser.add_argument("--ready-fd", type=int, required=True)
    args = parser.parse_args()
    logging.basicConfig(
        level=logging.INFO, format=f"%(asctime)s %(levelname)s [worker {args.index}] %(message)s"
    )
    settings = Settings.model_validate_json(os.environ[SETTINGS_VARIABLE])
    listen = socket.socket(fileno=args.listen_fd)
    name = process_name()

    def ready(host: str, port: int) -> None:
        os.write(args.ready_fd, name.encode())
        os.close(args.ready_fd)

    run(
        run_server(settings, started=ready, worker=Worker(args.index, listen, name)),
        settings.event_loop,
    )


if __name__ == "__main__":
    run_worker()
