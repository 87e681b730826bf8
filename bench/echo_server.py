"""A bare ``websockets`` echo server: the limit the race server is measured against.

    python bench/echo_server.py [--port 0] [--room 4]

It runs with the race server's transport settings (server/main.py): the asyncio API of
``websockets`` on the default asyncio event loop started by ``asyncio.run``, no compression
(``compression=None``), the same ``max_size``, the library's default keepalive, and INFO
logging set up the way ``patience-race serve`` sets it up (websockets logs every connection
opened and closed at INFO). Every frame received is sent back unchanged. It listens on
127.0.0.1 only, prints ``echo serving on ws://127.0.0.1:PORT/`` on stdout once listening, and
stops on SIGTERM or Ctrl-C. It imports nothing from the project, so its memory per connection
is that of ``websockets`` alone.

``--room N`` makes it a room echo: connections are seated in rooms of N in the order they
arrive (the first N in the first room, and so on; a room whose members leave is not filled
again), and every frame a connection sends is relayed unchanged to the other members of its
room with ``websockets.broadcast``, as the race server sends a move's progress to the other
racers, before the sender gets its own echo as the acknowledgement. Rooms by arrival order
rather than by a key in a first message: the bots need no message of their own to set up (they
send the same frames as to the plain echo), and nothing changes in what they do on our server,
where they already take seats in rooms of 4 in the order they come.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import signal

from websockets.asyncio.server import ServerConnection, broadcast, serve

HOST = "127.0.0.1"
MAX_SIZE = 1 << 20
"""The same as ``server.main.TRANSPORT_MAX_BYTES`` (a test checks that they agree)."""


async def echo(ws: ServerConnection) -> None:
    async for frame in ws:
        await ws.send(frame)


class Rooms:
    """Rooms of ``seats`` connections, filled in the order the connections arrive."""

    def __init__(self, seats: int) -> None:
        self.seats = seats
        self.filling: set[ServerConnection] = set()
        self.seated = 0
        """Connections seated in the room being filled (members who left count too)."""

    def seat(self, ws: ServerConnection) -> set[ServerConnection]:
        """The room of a newly arrived connection (shared by its members, who leave it when
        they close)."""
        if self.seated == self.seats:
            self.filling, self.seated = set(), 0
        self.filling.add(ws)
        self.seated += 1
        return self.filling


async def room_echo(rooms: Rooms, ws: ServerConnection) -> None:
    room = rooms.seat(ws)
    try:
        async for frame in ws:
            broadcast([member for member in room if member is not ws], frame)
            await ws.send(frame)
    finally:
        room.discard(ws)


def _finish(stop: asyncio.Future[None]) -> None:
    if not stop.done():
        stop.set_result(None)


async def serve_echo(port: int, room_seats: int | None = None) -> None:
    loop = asyncio.get_running_loop()
    stop: asyncio.Future[None] = loop.create_future()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, _finish, stop)
    handler = echo if room_seats is None else functools.partial(room_echo, Rooms(room_seats))
    async with serve(handler, HOST, port, compression=None, max_size=MAX_SIZE) as server:
        bound = next(iter(server.sockets)).getsockname()[1]
        kind = "echo" if room_seats is None else f"room echo (rooms of {room_seats})"
        print(f"{kind} serving on ws://{HOST}:{bound}/ (loop {type(loop).__name__})", flush=True)
        await stop


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, default=0, help="port (default: any free port)")
    parser.add_argument(
        "--room",
        type=int,
        metavar="SEATS",
        help="relay each frame to the other members of its room of SEATS "
        "connections (by arrival order) as well as echoing it",
    )
    args = parser.parse_args()
    if args.room is not None and args.room < 1:
        parser.error("--room needs at least one seat")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    asyncio.run(serve_echo(args.port, args.room))


if __name__ == "__main__":
    main()
