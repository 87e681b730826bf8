"""What carries a room request from a connection to the room's host, and its frames back.

The gateway (``server.net.connection``) hands every room request to its process's bus and
awaits it; the bus finds the room's host and returns once the reply is out. Two buses have the
one small interface ``Bus``:

- ``LocalBus``: one process holds every room (the embedded default, and ``serve`` without
  Redis). A request is a method call on this process's ``RoomHost``, and the connection itself
  is the room's member.
- ``RedisBus`` (``server.cluster.redis_bus``): several workers, on one machine or many. Redis holds
  the room directory (which worker holds which room) and carries requests to the room's worker and
  frames back, when the connection is held by another worker than its room.
"""

from __future__ import annotations

from typing import Protocol

from server.rooms.host import RoomHost
from server.rooms.room import Client, RoomRequest


class Bus(Protocol):
    async def request(self, client: Client, message: RoomRequest) -> None:
        """Act on a room request of a connection that has said hello: returns once its reply
        is out, or raises the refusal (``Refusal``, ``RaceError``)."""
        ...

    def left(self, client: Client) -> None:
        """The connection, in a room, is closed."""
        ...


class LocalBus:
    """Every room in this process: the bus is a method call."""

    def __init__(self, host: RoomHost) -> None:
        self.host = host

    async def request(self, client: Client, message: RoomRequest) -> None:
        await self.host.handle(client, message)

    def left(self, client: Client) -> None:
        self.host.disconnect(client)
