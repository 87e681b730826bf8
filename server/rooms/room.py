"""Where a room lives: the ``Room``, and who may be in it.

A member is a connection in the room, wherever it is: a ``Client`` of this process
(``server.net.connection``), whose frames are written to its socket, or a ``RemoteMember``, a
connection held by another worker, whose frames a ``Carrier`` takes there. Which worker holds
which room is the ``Directory``'s. The Redis bus (``server.cluster.redis_bus``) is both when there
are several workers; ``OneProcess`` when there is one.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar, cast

from websockets.asyncio.server import ServerConnection

from engine.errors import EngineError
from engine.moves import Move
from server.core.budgets import Budget
from server.core.errors import Refusal
from server.core.lobbies import entry, in_turn
from server.core.race import Phase, Race
from server.core.resume import resume_race
from server.core.said import Outgoing, as_frame
from server.core.terms import DealKind, RaceTerms
from server.rooms.outbox import Outbox
from server.settings import Settings
from server.storage.models import RaceRow
from server.storage.writer import WriteGivenUp, Writer
from wire.protocol import (
    ActionObject,
    AskHint,
    CreateRoom,
    ErrorCode,
    FollowVerdicts,
    JoinRoom,
    LeaveRoom,
    MakeMove,
    Message,
    PlayDaily,
    Ready,
    Rematch,
    Resign,
    Resume,
    Spectate,
    StartRace,
)

T = TypeVar("T")

RoomRequest = (
    CreateRoom
    | JoinRoom
    | Spectate
    | LeaveRoom
    | Ready
    | StartRace
    | MakeMove
    | Resign
    | Resume
    | PlayDaily
    | AskHint
    | FollowVerdicts
    | Rematch
)
ROOM_REQUESTS = (
    CreateRoom,
    JoinRoom,
    Spectate,
    LeaveRoom,
    Ready,
    StartRace,
    MakeMove,
    Resign,
    Resume,
    PlayDaily,
    AskHint,
    FollowVerdicts,
    Rematch,
)
"""The requests a room answers; the connection's gateway answers the rest itself."""


@dataclass(frozen=True, slots=True)
class Elsewhere:
    """The room a connection is in, held by another worker (``server.cluster.bus``)."""

    code: str
    worker: str


@dataclass(eq=False, slots=True)
class Client:
    """One WebSocket connection of this process."""

    ws: ServerConnection
    budget: Budget
    address: str
    """Whom it counts against (``server.core.budgets.address_of``)."""
    since: float
    """When it was opened; and ``active``, when it last sent a frame (the service's clock)."""
    active: float = 0.0
    player_id: str | None = None
    """The player it said hello as; for an anonymous connection, an id of its own that names
    no player (it is a spectator's in a room)."""
    name: str | None = None
    anonymous: bool = False
    """Said hello with neither name nor token: it may only watch
    (``server.core.budgets.WATCHING``)."""
    room: Room | Elsewhere | None = None
    own_progress: bool = True
    """Whether it gets the progress events of its own player's moves (``Hello.own_progress``)."""
    bot: bool = False
    """Whether its player is a bot account (``Hello.bot``): the mark of the seat it takes."""
    connection_id: str = field(default_factory=lambda: secrets.token_hex(8))
    """How another worker's room names this connection (``server.cluster.bus``)."""


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
    bot: bool = False
    """Whether its player is a bot account, as its worker found it (``Client.bot``)."""


class Carrier(Protocol):
    """What takes frames to members held by other workers (``server.cluster.hops``)."""

    def send_frames(self, members: Sequence[RemoteMember], frame: str) -> None: ...

    def out_of_room(self, members: Sequence[RemoteMember]) -> None:
        """Their room has closed."""
        ...

    def moved(self, members: Sequence[RemoteMember]) -> None:
        """Their room is held by another process now: their connections are closed (1012), to
        reconnect and resume there."""
        ...


class Directory(Protocol):
    """Which worker holds which room (``server.cluster.redis_bus``), as far as a host needs to
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


Member = Client | RemoteMember
"""A connection in a room, of this process or of another worker."""


@dataclass(eq=False, slots=True)
class Room:
    race: Race
    outbox: Outbox
    """Everything said in the room, to leave in the order it was said."""
    members: set[Member] = field(default_factory=set)
    timer: asyncio.TimerHandle | None = None
    deadline: float | None = None
    """What ``timer`` was set for."""
    opened: float = 0.0
    """When the room's lobby was opened (or restored, or reopened by a rematch), by the
    service's clock: the lobby's age (``server.sweeper``) and its place in the public list."""
    empty_since: float | None = None
    """Since when nobody has been in the room, as last looked at (``server.sweeper``)."""
    rematching: asyncio.Future[None] | None = None
    """A rematch agreed and being made (its deal drawn, its race stored): an answer to the offer
    meanwhile waits for it."""
    epoch: int = 1
    """The epoch at which this process holds the race (``server.storage.holding``): every write of
    the race is refused once another process has taken it."""
    host_address: str | None = None
    """The address the room was opened from (``server.core.budgets.address_of``), whose public
    lobbies are bounded and listed in turn with other addresses' (``server.cluster.listing``); None
    for a room restored from the database."""
    addresses: dict[str, str] = field(default_factory=dict)
    """The client address each racer seated now last came into the room from
    (``server.core.budgets``): stored with the race's start, for who may be rated in it
    (``server.core.ratings.roles``), and whom the search of the race's deal counts against
    (``SolverPool.after_race``)."""

    def address(self, outgoing: Outgoing) -> tuple[list[Member], str]:
        """What the race said, to the members in the room now that it is meant for."""
        to, but = outgoing.to, outgoing.but
        return (
            [
                member
                for member in self.members
                if (to is None or member.player_id == to)
                and (but is None or member.player_id != but or member.own_progress)
            ],
            outgoing.text(),
        )

    def reply(self, client: Member, *messages: Message) -> asyncio.Future[bool]:
        """A reply to a request about this room: it leaves after everything said in the room
        before it (the room events the request caused among them)."""
        return self.outbox.add([([client], as_frame(message)) for message in messages])


def restore_race(row: RaceRow, settings: Settings, now: float) -> Race:
    """A stored race in progress, rebuilt (the race replays each racer's stored moves).

    The race clock does not run while no server holds it: it carries on from the race's last
    stored move, so the outage is charged to nobody, and to every racer of the race alike."""
    last_move_ms = max((move.at_ms for entry in row.entries for move in entry.move_log), default=0)
    quick = cast(Literal["rated", "unrated"] | None, row.quick)  # (stored from the terms')
    return resume_race(
        started_at=None if row.started_at is None else now - last_move_ms / 1000,
        racers=[
            (
                entry.player_id,
                entry.player.name,
                [(move.text, move.at_ms) for move in entry.move_log],
            )
            for entry in row.entries
        ],
        now=now,
        bots={entry.player_id for entry in row.entries if entry.player.bot}
        | ({row.host_id} if row.host.bot else set()),
        invited=None if row.invited is None else row.invited.split(),
        join_by=None if row.invited is None else now + settings.quick_join_s,
        host_id=row.host_id,
        host_name=row.host.name,
        terms=RaceTerms(
            race_id=row.id,
            code=row.code,
            rule_set=row.rule_set,
            seed=row.seed,
            algorithm=row.algorithm,
            rules=row.rules,
            deal_kind=cast(DealKind, row.deal_kind),  # (stored from a DealKind)
            seats_max=row.seats_max,
            time_limit_s=row.time_limit_s,
            countdown_s=settings.countdown_s if quick is None else settings.quick_countdown_s,
            grace_s=settings.reconnect_grace_s,
            max_race_s=settings.max_race_s,
            idle_s=settings.idle_s,
            daily_day=row.daily_day,
            winnable=row.winnable,
            public=row.public,
            quick=quick,
        ),
    )


async def write_for_client(
    writer: Writer, action: Callable[[], Awaitable[T]], within_s: float
) -> T:
    """A write a client waits for, through the writer like every write (never beside it: on
    SQLite two writers contend for one lock); ``unavailable`` if the database does not take it
    within ``within_s``."""
    try:
        return await writer.call(action, within_s)
    except WriteGivenUp:
        raise Refusal(
            ErrorCode.UNAVAILABLE, "the database is busy: try again in a moment"
        ) from None


def parse_move(message: MakeMove) -> Move:
    try:
        if isinstance(message.move, str):
            return Move.parse(message.move)
        if isinstance(message.move, ActionObject):
            return Move.act(message.move.action)
        return Move.from_json(message.move.model_dump(by_alias=True, exclude_none=True))
    except EngineError as error:
        raise Refusal(ErrorCode.INVALID_MOVE, str(error)) from None


def opened_by(room: Room) -> str:
    """Whom the room counts against in the list: the address it was opened from, or for a
    room restored from the database (whose address is not stored) the room alone."""
    return room.host_address or f"room:{room.race.terms.code}"


def local_list(rooms: Iterable[Room]) -> list[dict[str, Any]]:
    """The list, from one process's rooms."""
    return in_turn(
        (room.opened, opened_by(room), listing)
        for room in rooms
        if (listing := entry(room.race)) is not None
    )


def public_lobbies(rooms: Iterable[Room], player_id: str, address: str | None) -> tuple[int, int]:
    """How many public lobbies (listed or full) ``player_id`` hosts, and how many were opened
    from ``address``, of these rooms."""
    by_player = by_address = 0
    for room in rooms:
        race = room.race
        if race.terms.public and race.phase is Phase.LOBBY:
            by_player += race.host_id == player_id
            by_address += address is not None and room.host_address == address
    return by_player, by_address
