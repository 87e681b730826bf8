"""Connections and rooms held by other workers, as a room host sees them.

A room's member may be a connection of another worker: a ``RemoteMember``, whose frames a
``Carrier`` takes there. Which worker holds which room is the ``Directory``'s. With several
workers the Redis bus (``server.cluster.redis_bus``) gives the host both (``server.cluster.hops``,
``server.cluster.directory``); ``OneProcess`` is both when there is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from server.rooms.host import Room


@dataclass(eq=False, slots=True)
class RemoteMember:
    """A connection held by another worker, in a room of this one: frames for it go by the bus
    to ``worker``, which writes them to its connection ``connection_id``."""

    worker: str
    connection_id: str
    player_id: str | None
    name: str | None
    own_progress: bool = True
    room: Room | None = None
    ws: None = None
    address: str = ""
    """Whom the connection counts against (``server.core.budgets.address_of``), as its worker
    found it: who may be rated in a race depends on it (``server.core.ratings.roles``)."""


class Carrier(Protocol):
    """What takes frames to members held by other workers (``server.cluster.hops``)."""

    def send_frames(self, members: Sequence[RemoteMember], frame: str) -> None:
        ...

    def out_of_room(self, members: Sequence[RemoteMember]) -> None:
        """Their room has closed."""
        ...

    def moved(self, members: Sequence[RemoteMember]) -> None:
        """Their room is held by another process now: their connections are closed (1012), to
        reconnect and resume there."""
        ...


class Directory(Protocol):
    """Which worker holds which room (``server.cluster.directory``), as far as a host needs to
    know."""

    async def claim(self, code: str) -> bool:
        """Take a new room code for this worker: False if another has it."""
        ...

    def release(self, code: str) -> None:
        """This worker holds the room no more (nor lists it)."""
        ...

    def listed(self, room: Room) -> None:
        """The public room may have changed as the list of open rooms shows it
        (``server.cluster.listing``): keep the list up to date."""
        ...


class OneProcess:
    """Directory and carrier when one process holds every room and every connection: the
    host's own dictionary is the directory (and the list of public rooms is read from it), and
    no member is held elsewhere."""

    async def claim(self, code: str) -> bool:
        return True

    def release(self, code: str) -> None:
        pass

    def listed(self, room: Room) -> None:
        pass

    def send_frames(self, members: Sequence[RemoteMember], frame: str) -> None:
        raise AssertionError("a room of a single process has no member held elsewhere")

    def out_of_room(self, members: Sequence[RemoteMember]) -> None:
        raise AssertionError("a room of a single process has no member held elsewhere")

    def moved(self, members: Sequence[RemoteMember]) -> None:
        raise AssertionError("a room of a single process has no member held elsewhere")
