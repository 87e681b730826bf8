"""A room's requests: who may enter, leave, get ready, start, move, resign or come back.

A ``RoomHost`` keeps the rooms of one process. It takes the room requests (create, join,
spectate, leave, ready, start, move, resign, resume, daily, rematch, hints) of its members and
feeds them to the race (``server.core.race``, a pure state machine); what the race says, and what
it says to store, goes out through ``server.rooms.delivery``. Rooms are opened
(``server.rooms.opening``) and rebuilt after a restart (``adopt``) here.

A member is a connection in the room, wherever it is (``server.rooms.room``): a ``Client`` of this
process, or a ``RemoteMember`` held by another worker, whose frames the bus
(``server.cluster.bus``) carries there. The host does not tell them apart.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from engine.moves import Move
from server.core.errors import Refusal
from server.core.race import Phase
from server.core.room_view import catch_up_state, legal_move_named, own_view, room_state
from server.core.said import as_frame
from server.rooms.delivery import Delivery
from server.rooms.opening import Openings
from server.rooms.room import (
    Member,
    RemoteMember,
    Room,
    RoomRequest,
    parse_move,
    restore_race,
)
from server.rooms.solver import SolverPool
from server.settings import Settings
from server.storage.engine import Sessions
from server.storage.models import RaceRow
from server.storage.writer import Writer
from wire.protocol import (
    AskHint,
    CreateRoom,
    ErrorCode,
    FollowVerdicts,
    JoinRoom,
    LeaveRoom,
    MakeMove,
    Message,
    Ok,
    PlayDaily,
    Ready,
    Rematch,
    Resign,
    Resume,
    Resynced,
    Spectate,
    StartRace,
)

log = logging.getLogger("patience_race.rooms")


class RoomHost:
    """The rooms of this process, and everything done in them."""

    def __init__(
        self, settings: Settings, sessions: Sessions, writer: Writer, clock: Callable[[], float]
    ) -> None:
        self.settings, self.sessions, self.writer, self.clock = settings, sessions, writer, clock
        self.address = ""
        """This worker's own WebSocket address, given as ``reconnect_to`` to another worker's
        connection when it enters a room here ("" with one worker)."""
        self.solver = SolverPool(settings, writer, sessions, clock)
        """Where hints and live verdicts are searched: processes of their own, never this
        event loop."""
        self.delivery = Delivery(settings, sessions, writer, clock, self.solver)
        self.rooms = self.delivery.rooms
        self.openings = Openings(settings, sessions, writer, clock, self.delivery)

    # -- restoring ------------------------------------------------------------------------------

    def adopt(self, row: RaceRow) -> Room:
        """Hold a stored race in progress from now on (after a restart, or a dead worker's):
        rebuilt from its stored moves, its deadlines applied."""
        now = self.clock()
        race = restore_race(row, self.settings, now)
        room = Room(race, self.delivery.outbox(), opened=now, epoch=row.holder_epoch)
        self.rooms[race.terms.code] = room
        held = "lobby" if race.phase is Phase.LOBBY else "race"  # (a lobby was never raced)
        self.delivery.deliver(room, race.catch_up(now))
        log.info(
            "%s %s (%s) restored from the database", held, race.terms.code, race.terms.rule_set
        )
        return room

    # -- requests -------------------------------------------------------------------------------

    async def handle(self, client: Member, message: RoomRequest) -> None:
        """Act on a room request of a member that has said hello; a refusal is raised
        (``Refusal``, ``RaceError``) and nothing has changed. Returns once the reply is out."""
        assert client.player_id is not None
        now = self.clock()
        match message:
            case CreateRoom():
                await self._enter_opened(
                    client, await self.openings.create(client, message), message.id
                )
            case JoinRoom():
                room = self.room(message.code)
                self._may_enter(client, room)
                out = room.race.join(client.player_id, client.name or "", now, bot=client.bot)
                self._enter(client, room)
                self.delivery.deliver(room, out)
                await self._reply_room(client, room, message.id)
            case Spectate():
                room = self.room(message.code)
                self._may_enter(client, room)
                room.race.spectate(client.player_id, self.settings.spectators_per_room)
                self._enter(client, room)
                await self._reply_room(client, room, message.id)
            case LeaveRoom():
                room = self._current(client)
                self.delivery.deliver(room, room.race.leave(client.player_id, now))
                self.openings.racer_gone(room, client.player_id)
                if client.player_id not in room.race.racers:
                    room.addresses.pop(client.player_id, None)
                room.members.discard(client)
                client.room = None
                await room.reply(client, Ok(id=message.id))
            case Ready():
                room = self._current(client)
                self.delivery.deliver(room, room.race.ready(client.player_id, message.ready, now))
                await room.reply(client, Ok(id=message.id))
            case StartRace():
                room = self._current(client)
                self.delivery.deliver(room, room.race.start(client.player_id, now))
                await room.reply(client, Ok(id=message.id))
            case MakeMove():
                await self._move(client, self._read_move(client, message), message.id, now)
            case Resign():
                await self._move(client, Move.act("resign"), message.id, now)
            case Resume():
                await self._resume(client, message, now)
            case PlayDaily():
                room = await self.openings.daily(client, message, now)
                await self._enter_opened(client, room, message.id)
                self.delivery.deliver(room, room.race.start(client.player_id, now))
            case AskHint():
                room = self._current(client)
                given = await self.solver.hint(
                    room.race, client.player_id, client.address, message.id, now
                )
                await room.reply(client, given)
            case FollowVerdicts():
                room = self._current(client)
                player_id = client.player_id
                self.solver.follow(
                    room.race,
                    player_id,
                    client.address,
                    lambda verdict: room.outbox.add(
                        [
                            (
                                [
                                    member
                                    for member in room.members
                                    if member.player_id == player_id
                                ],
                                as_frame(verdict),
                            )
                        ]
                    ),
                    message.on,
                )
                await room.reply(client, Ok(id=message.id))
            case Rematch():
                room = self._current(client)
                await self.openings.rematch(client, room, message.accept)
                await room.reply(client, Ok(id=message.id))

    def disconnect(self, client: Member) -> None:
        """The member's connection is gone."""
        room = client.room
        if not isinstance(room, Room) or client.player_id is None:
            return
        room.members.discard(client)
        if not any(member.player_id == client.player_id for member in room.members):
            self.delivery.deliver(room, room.race.disconnect(client.player_id, self.clock()))
            self.openings.racer_gone(room, client.player_id)

    def room(self, code: str) -> Room:
        room = self.rooms.get(code.upper())
        if room is None:
            raise Refusal(ErrorCode.UNKNOWN_ROOM, f"there is no room {code!r}")
        return room

    def _read_move(self, client: Member, message: MakeMove) -> Move:
        """The move a client sent. Nearly always it is written as one of the moves the race
        listed to them, and is that move, found without parsing (parsing took 3.5 % of the
        server's CPU in the closed loop's profile); anything else is parsed, and refused if it
        does not read as a move."""
        if isinstance(message.move, str) and isinstance(client.room, Room):
            assert client.player_id is not None
            listed = legal_move_named(client.room.race, client.player_id, message.move)
            if listed is not None:
                return listed
        return parse_move(message)

    def _current(self, client: Member) -> Room:
        if not isinstance(client.room, Room):
            raise Refusal(ErrorCode.NOT_IN_ROOM, "you are in no room")
        return client.room

    def _may_enter(self, client: Member, room: Room) -> None:
        if client.room is not None and client.room is not room:
            raise Refusal(ErrorCode.IN_ANOTHER_ROOM, "leave your room first")

    def _enter(self, client: Member, room: Room) -> None:
        """Make the connection a member: it gets what is said in the room from now on."""
        self._may_enter(client, room)
        client.room = room
        room.members.add(client)
        racers = room.race.racers
        if client.player_id in racers:  # (kept for those seated now only: at most the seats)
            room.addresses = {
                player_id: address
                for player_id, address in [
                    *room.addresses.items(),
                    (client.player_id, client.address),
                ]
                if player_id in racers
            }

    # -- racing ---------------------------------------------------------------------------------

    async def _move(self, client: Member, move: Move, request_id: str | None, now: float) -> None:
        """Validate, store, then acknowledge: an acknowledged move is never lost. The
        connection's next request is read once the reply is out."""
        assert client.player_id is not None
        room = self._current(client)
        sent = self.delivery.deliver(
            room, room.race.move(client.player_id, move, now, request_id), after_move=True
        )
        self.solver.moved(room.race, client.player_id)  # (its live verdict, said after these)
        await sent

    async def _resume(self, client: Member, message: Resume, now: float) -> None:
        assert client.player_id is not None
        room = self.room(message.code)
        race = room.race
        if client.player_id not in race.racers:
            raise Refusal(ErrorCode.NOT_IN_ROOM, "you have no seat in that room")
        self._may_enter(client, room)
        room.members.discard(client)  # the reply hands this connection the room event below
        self.delivery.deliver(room, race.reconnect(client.player_id, now))
        self._enter(client, room)
        missed = None if message.last_seq == 0 else race.events.since(message.last_seq)
        full = missed is None
        if missed is None:
            missed = catch_up_state(race)
        await room.reply(
            client,
            Resynced(
                id=message.id,
                full=full,
                missed=[event.model_dump(mode="json") for event in missed],
                reconnect_to=self._hint(client),
            ),
            *self._own_view(client, room, message.id),
        )

    async def _enter_opened(self, client: Member, room: Room, request_id: str | None) -> None:
        """Enter the host of a room just opened, and list it if it is public."""
        self._enter(client, room)
        self.delivery.directory.listed(room)
        await self._reply_room(client, room, request_id)

    def _reply_room(
        self, client: Member, room: Room, request_id: str | None
    ) -> asyncio.Future[bool]:
        """The reply to create, join and spectate: the room now, and your own board if you are
        racing in it."""
        state = room_state(room.race, request_id)
        hint = self._hint(client)
        if hint is not None:
            state = state.model_copy(update={"reconnect_to": hint})
        return room.reply(client, state, *self._own_view(client, room, None))

    def _hint(self, client: Member) -> str | None:
        """``reconnect_to`` for a connection held by another worker."""
        return self.address or None if isinstance(client, RemoteMember) else None

    def _own_view(self, client: Member, room: Room, request_id: str | None) -> list[Message]:
        assert client.player_id is not None
        view = own_view(room.race, client.player_id, request_id)
        return [] if view is None else [view]

    # -- delivery and timers --------------------------------------------------------------------
