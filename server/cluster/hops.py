"""The hop of a request between workers (``server.cluster.redis_bus``): a request of this
worker's connection for a room another worker holds, and the other side, requests of other
workers' connections for this worker's rooms.

A request for a room held elsewhere is published to the room's worker (``req``), which acts on
it for a ``RemoteMember`` standing for the connection and publishes the frames (``frames``) and
then ``done``: a hop there and back per request, on top of the one-process path. The messages go
by ``server.cluster.bus_outbox``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from server.core.errors import Refusal, Refused
from server.rooms.host import RoomHost
from server.rooms.room import ROOM_REQUESTS, Client, Elsewhere, RemoteMember, Room, RoomRequest
from wire.protocol import CLIENT_MESSAGE, ErrorCode

log = logging.getLogger("patience_race.bus")

HOP_TIMEOUT_S = 10.0
"""A request to another worker not answered by then: that worker is taken for dead."""

Publish = Callable[[str, dict[str, Any]], None]
"""Publish a message to a worker (``server.cluster.bus_outbox.BusOutbox.publish``)."""


class HopFailed(Exception):
    """The worker holding the room did not answer: the connection is closed (1012)."""


class Hops:
    """This worker's connections' requests hopped to the workers holding their rooms, each
    awaited until that worker says it is done."""

    def __init__(self, worker_id: str, publish: Publish) -> None:
        self.id, self._publish = worker_id, publish
        self._waiting: dict[str, asyncio.Future[tuple[str | None, list[str] | None]]] = {}
        """Requests hopped to another worker, by connection id, until that worker is done."""
        self._hopping_to: dict[str, str] = {}
        """The worker each of those went to: if it dies, the request fails at once (a ``join``
        in flight included, whose connection is in no room yet), not at ``HOP_TIMEOUT_S``."""

    def workers(self) -> set[str]:
        """The workers requests are hopped to now."""
        return set(self._hopping_to.values())

    async def hop(self, client: Client, worker: str, message: RoomRequest) -> None:
        done = asyncio.get_running_loop().create_future()
        self._waiting[client.connection_id] = done
        self._hopping_to[client.connection_id] = worker
        self._publish(
            worker,
            {
                "k": "req",
                "from": self.id,
                "conn": client.connection_id,
                "player": client.player_id,
                "name": client.name,
                "own": client.own_progress,
                "addr": client.address,
                "bot": client.bot,
                "msg": message.model_dump(mode="json", by_alias=True),
            },
        )
        try:
            async with asyncio.timeout(HOP_TIMEOUT_S):
                code, error = await done
        except TimeoutError:
            raise HopFailed from None
        finally:
            self._waiting.pop(client.connection_id, None)
            self._hopping_to.pop(client.connection_id, None)
        client.room = None if code is None else Elsewhere(code, worker)
        if error is not None:
            raise Refusal(ErrorCode(error[0]), error[1])

    def done(self, data: dict[str, Any]) -> None:
        """The room's worker is done with a request (``done``)."""
        waiting = self._waiting.get(data["conn"])
        if waiting is not None and not waiting.done():
            waiting.set_result((data["room"], data["error"]))

    def left(self, client: Client, worker: str) -> None:
        """The connection, in a room of ``worker``, is closed."""
        self._publish(worker, {"k": "gone", "conn": client.connection_id, "from": self.id})

    def fail_to(self, worker: str) -> None:
        """The requests hopped to ``worker`` will not be answered (it is dead, or nobody reads
        its channel): they fail now, not at ``HOP_TIMEOUT_S``: their connections are closed
        (1012), to reconnect and resume where the room is."""
        for connection_id, waiting in list(self._waiting.items()):
            if self._hopping_to.get(connection_id) == worker and not waiting.done():
                waiting.set_exception(HopFailed())


class RemoteMembers:
    """The other side of a hop: other workers' connections in this worker's rooms (the host's
    ``Carrier``). Their requests are acted on once the room is no longer being adopted
    (``adopted``), and their frames and the end of each request are published back."""

    def __init__(
        self, host: RoomHost, publish: Publish, adopted: Callable[[str], Awaitable[None]]
    ) -> None:
        self.host, self._publish, self._adopted = host, publish, adopted
        self._members: dict[tuple[str, str], RemoteMember] = {}

    async def serve(self, data: dict[str, Any]) -> None:
        """Act on another worker's connection's request for one of this worker's rooms, then
        tell that worker it is done (after the reply's frames: the channel keeps the order)."""
        key = (data["from"], data["conn"])
        member = self._members.get(key)
        if member is None:  # ("addr", "bot": none from a worker of an older version, while
            # upgrading)
            member = self._members[key] = RemoteMember(
                data["from"],
                data["conn"],
                data["player"],
                data["name"],
                data["own"],
                address=data.get("addr", ""),
                bot=data.get("bot", False),
            )
        error = None
        try:
            message = CLIENT_MESSAGE.validate_python(data["msg"])
            if not isinstance(message, ROOM_REQUESTS):
                raise Refusal(ErrorCode.UNKNOWN_TYPE, "not a room request")
            await self._adopted(getattr(message, "code", "").upper())
            await self.host.handle(member, message)
        except Refused as refused:
            error = [refused.code.value, refused.message]
        except Exception:
            log.exception("a request from worker %s failed", data["from"])
            error = [ErrorCode.INVALID_MESSAGE.value, "the server could not act on that"]
        room = member.room.race.terms.code if isinstance(member.room, Room) else None
        if room is None:
            self._members.pop(key, None)
        self._publish(
            data["from"], {"k": "done", "conn": data["conn"], "room": room, "error": error}
        )

    def gone(self, data: dict[str, Any]) -> None:
        """Another worker's connection in a room of this one is closed (``gone``)."""
        member = self._members.pop((data["from"], data["conn"]), None)
        if member is not None:
            self.host.disconnect(member)

    def send_frames(self, members: Sequence[RemoteMember], frame: str) -> None:
        """Frames for other workers' connections in this worker's rooms (``server.rooms.host``)."""
        by_worker: dict[str, list[str]] = {}
        for member in members:
            by_worker.setdefault(member.worker, []).append(member.connection_id)
        for worker, connections in by_worker.items():
            self._publish(worker, {"k": "frames", "conns": connections, "frame": frame})

    def out_of_room(self, members: Sequence[RemoteMember]) -> None:
        """A room of this worker closed: those connections are in no room now."""
        for member in members:
            self._members.pop((member.worker, member.connection_id), None)
            self._publish(member.worker, {"k": "out", "conn": member.connection_id})

    def moved(self, members: Sequence[RemoteMember]) -> None:
        """This worker let go of their room: their workers close them (1012)."""
        for member in members:
            self._publish(member.worker, {"k": "moved", "conn": member.connection_id})
