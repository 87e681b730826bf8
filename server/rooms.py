"""Who is where, as the shell (``server.app``) keeps it: connections and rooms.

A ``Client`` is one WebSocket connection: its budget (``server.gateway``), its address, the
player it said hello as, the room it is in. A ``Room`` holds a race, the connections in it,
its outbox (``server.outbox``), its
timer, and how far each racer's moves have been handed over for storage. The room addresses
what its race says to the connections in it when it is said, and puts replies in the same
outbox, behind what was said before them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from websockets.asyncio.server import ServerConnection

from server.gateway import Budget
from server.outbox import Addressed, Outbox
from server.protocol import Message
from server.race import Outgoing, Race, as_frame
from server.store import AcceptedMove


@dataclass(eq=False, slots=True)
class Client:
    ws: ServerConnection
    budget: Budget
    address: str
    """Whom it counts against (``server.gateway.address_of``)."""
    since: float
    """When it was opened; and ``active``, when it last sent a frame (the service's clock)."""
    active: float = 0.0
    player_id: str | None = None
    name: str | None = None
    room: Room | None = None


@dataclass(eq=False, slots=True)
class Room:
    race: Race
    members: set[Client] = field(default_factory=set)
    outbox: Outbox = field(default_factory=Outbox)
    """Everything said in the room, to leave in the order it was said."""
    timer: asyncio.TimerHandle | None = None
    deadline: float | None = None
    """What ``timer`` was set for."""
    saved: dict[str, int] = field(default_factory=dict)
    """How many of each racer's moves are queued for storage."""
    opened: float = 0.0
    """When the room was opened (or restored), by the service's clock."""
    empty_since: float | None = None
    """Since when nobody has been in the room, as last looked at (``server.app`` sweeps)."""

    def address(self, outgoing: Outgoing) -> Addressed:
        """What the race said, to the connections in the room now that it is meant for."""
        return ([member.ws for member in self.members
                 if outgoing.to is None or member.player_id == outgoing.to], outgoing.text())

    def reply(self, client: Client, *messages: Message) -> asyncio.Future[bool]:
        """A reply to a request about this room: it leaves after everything said in the room
        before it (the room events the request caused among them)."""
        return self.outbox.add([([client.ws], as_frame(message)) for message in messages])

    def unsaved_moves(self) -> list[AcceptedMove]:
        """Rows for the moves the race accepted since the last call (resignations the race
        makes itself, for time-outs and abandoned seats, included)."""
        race = self.race
        rows: list[AcceptedMove] = []
        for racer in race.racers.values():
            if racer.game is None or race.started_at is None:
                continue
            saved = self.saved.get(racer.player_id, 0)
            for index in range(saved, len(racer.game.history)):
                rows.append({"race_id": race.race_id, "player_id": racer.player_id,
                             "index": index, "text": str(racer.game.history[index]),
                             "at_ms": round((racer.move_times[index] - race.started_at) * 1000)})
            self.saved[racer.player_id] = len(racer.game.history)
        return rows
