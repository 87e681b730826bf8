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

The bus also holds the quick race's queue, which matches players into rooms: in this process
(``server.cluster.quick``) or in Redis for every worker (``server.cluster.redis_quick``).
"""

from __future__ import annotations

from typing import Protocol

from server.cluster.practice import PracticeBots
from server.cluster.quick import Counts, LocalQueue
from server.rooms.host import RoomHost
from server.rooms.room import Client, RoomRequest
from wire.protocol import LeaveQueue, QuickRace


class Bus(Protocol):
    practice: PracticeBots
    """The practice bots of the quick race queue (``server.cluster.practice``)."""

    async def request(self, client: Client, message: RoomRequest) -> None:
        """Act on a room request of a connection that has said hello: returns once its reply
        is out, or raises the refusal (``Refusal``, ``RaceError``)."""
        ...

    def left(self, client: Client) -> None:
        """The connection is closed: it leaves its room (if any) and the quick race queue (if
        it waits there)."""
        ...

    async def seek(self, client: Client, message: QuickRace) -> None:
        """Put the connection's player in the quick race queue (``server.cluster.quick``):
        returns once ``queued`` is out, or raises the refusal."""
        ...

    async def leave_queue(self, client: Client, message: LeaveQueue) -> None:
        """Take the connection's player out of the queue (``ok``), or refuse: ``not_queued``."""
        ...

    def seeking(self, client: Client) -> bool:
        """Whether the connection waits in the queue (it may not enter a room meanwhile)."""
        ...

    async def waiting(self) -> Counts:
        """How many wait in each queue (``GET /api/quick``)."""
        ...

    async def stop(self) -> None:
        """The server is stopping, its connections closed: stop what the bus runs."""
        ...


class LocalBus:
    """Every room in this process: the bus is a method call."""

    def __init__(self, host: RoomHost) -> None:
        self.host = host
        self.queue = LocalQueue(host.settings, host, self.request)
        self.practice = self.queue.practice

    async def request(self, client: Client, message: RoomRequest) -> None:
        await self.host.handle(client, message)

    def left(self, client: Client) -> None:
        self.queue.drop(client)
        self.host.disconnect(client)

    async def seek(self, client: Client, message: QuickRace) -> None:
        await self.queue.seek(client, message)

    async def leave_queue(self, client: Client, message: LeaveQueue) -> None:
        self.queue.leave(client, message)

    def seeking(self, client: Client) -> bool:
        return self.queue.seeking(client)

    async def waiting(self) -> Counts:
        return self.queue.counts()

    async def stop(self) -> None:
        await self.queue.close()
