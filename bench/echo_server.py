"""A bare ``websockets`` echo server: the limit the race server is measured against.

    python bench/echo_server.py [--port 0]

It runs with the race server's transport settings (server/main.py): the asyncio API of
``websockets`` on the default asyncio event loop started by ``asyncio.run``, no compression
(``compression=None``), the same ``max_size``, the library's default keepalive, and INFO
logging set up the way ``patience-race serve`` sets it up (websockets logs every connection
opened and closed at INFO). Every frame received is sent back unchanged. It listens on
127.0.0.1 only, prints ``echo serving on ws://127.0.0.1:PORT/`` on stdout once listening, and
stops on SIGTERM or Ctrl-C. It imports nothing from the project, so its memory per connection
is that of ``websockets`` alone.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal

from websockets.asyncio.server import ServerConnection, serve

HOST = "127.0.0.1"
MAX_SIZE = 1 << 20
"""The same as ``server.main.TRANSPORT_MAX_BYTES`` (a test checks that they agree)."""


async def echo(ws: ServerConnection) -> None:
    async for frame in ws:
        await ws.send(frame)


def _finish(stop: asyncio.Future[None]) -> None:
    if not stop.done():
        stop.set_result(None)


async def serve_echo(port: int) -> None:
    loop = asyncio.get_running_loop()
    stop: asyncio.Future[None] = loop.create_future()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, _finish, stop)
    async with serve(echo, HOST, port, compression=None, max_size=MAX_SIZE) as server:
        bound = next(iter(server.sockets)).getsockname()[1]
        print(f"echo serving on ws://{HOST}:{bound}/ (loop {type(loop).__name__})", flush=True)
        await stop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="port (default: any free port)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    asyncio.run(serve_echo(args.port))


if __name__ == "__main__":
    main()
