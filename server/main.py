"""Start and stop the race server: migrations, database engine, service, WebSocket listener.

``run_server`` is what ``patience-race serve`` calls; tests call it too, with port 0, and read
the bound address from the ``started`` callback.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
from collections.abc import Callable

from websockets.asyncio.server import serve

from server import store
from server.app import Service
from server.db import make_engine
from server.http import HttpApi
from server.settings import Settings

log = logging.getLogger("patience_race.server")

GC_THRESHOLDS = (50_000, 20, 100)
TRANSPORT_MAX_BYTES = 1 << 20
"""Frames above the protocol's own limit (settings.max_frame_bytes) get a structured error;
only frames above this much larger transport limit make websockets close the connection (1009)."""


def _finish(stop: asyncio.Future[None]) -> None:
    if not stop.done():
        stop.set_result(None)


async def run_server(settings: Settings, stop: asyncio.Future[None] | None = None,
                     started: Callable[[str, int], None] | None = None) -> None:
    """Serve until ``stop`` is done (or SIGTERM/SIGINT), then shut down gracefully."""
    await store.upgrade_database(settings.database_url)
    engine = make_engine(settings.database_url)
    service = Service(settings, engine)
    await service.start()
    # What start-up made (modules, pydantic schemas, restored races) lives as long as the
    # process: freezing it keeps the collector from walking it again on every full collection.
    # The collector's default thresholds cost a quarter of the server's CPU under load (each of
    # its full collections walked every connection's state for ~0.3 s, see
    # docs/performance.md); collecting the young generation after 50,000 net allocations rather
    # than 700 lets most of a move's objects die first, and full collections become rare.
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    loop = asyncio.get_running_loop()
    if stop is None:
        stop = loop.create_future()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, _finish, stop)
    try:
        async with serve(service.handle, settings.host, settings.port,
                         process_request=HttpApi(service), compression=None,
                         max_size=TRANSPORT_MAX_BYTES) as server:
            host, port = next(iter(server.sockets)).getsockname()[:2]
            log.info("patience-race serving on ws://%s:%d/ws (database %s)", host, port,
                     engine.url.render_as_string(hide_password=True))
            if started is not None:
                started(host, port)
            await stop
            log.info("shutting down: saving and telling the clients")
            await service.shutdown()
    finally:
        await engine.dispose()
