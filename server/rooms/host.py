"""Where a room lives: its race, the connections in it, its outbox, its timer, its storage.

A ``RoomHost`` keeps the rooms of one process. It takes the room requests (create, join,
spectate, leave, ready, start, move, resign, resume, daily, rematch) of its members, feeds
them to the race (``server.core.race``, a pure state machine), queues what the race accepted for
storage (``server.storage.writer``) and sends what the race said through the room's outbox
(``server.rooms.outbox``: in order, each message once what it depends on is stored).

A member is a connection in the room, wherever it is: a ``Client`` of this process
(``server.net.connection``), whose frames are written to its socket, or a ``RemoteMember``, a
connection held by another worker, whose frames the bus (``server.cluster.bus``) carries there
(``server.rooms.room``). The host does not tell them apart but to hand frames over.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from engine.deal import DEAL_ALGORITHM
from engine.moves import Move
from engine.registry import RULE_SET_NAMES
from server.core.errors import Refusal
from server.core.limits import AddressLimiter
from server.core.race import Phase, Race
from server.core.rematch import may_rematch, rematch
from server.core.said import as_frame
from server.rooms.delivery import Delivery
from server.rooms.pool import daily_draw, winnable_seed
from server.rooms.room import (
    Member,
    RemoteMember,
    Room,
    RoomRequest,
    parse_move,
    public_lobbies,
    restore_race,
    write_for_client,
)
from server.rooms.solver import SolverPool
from server.settings import Settings
from server.storage import holding
from server.storage import races as store
from server.storage.models import RaceRow
from server.storage.races import Sessions
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

T = TypeVar("T")
MOVED_CLOSE = (1012, "the room's worker stopped: reconnect and resume")
"""How a connection is closed whose room this process no longer holds."""
CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
CODE_LENGTH = 8

class RoomHost:
    """The rooms of this process, and everything done in them."""

    def __init__(self, settings: Settings, sessions: Sessions, writer: Writer,
                 clock: Callable[[], float]) -> None:
        self.settings, self.sessions, self.writer, self.clock = settings, sessions, writer, clock
        self.address = ""
        """This worker's own WebSocket address, given as ``reconnect_to`` to another worker's
        connection when it enters a room here ("" with one worker)."""
        self.holder = holding.process_name()
        """This process's name as the holder of its races (its name on the bus, if any)."""
        self.room_quota = AddressLimiter(settings.rooms_per_player_per_hour / 3600,
                                         max(1.0, settings.rooms_per_player_per_hour),
                                         settings.http_rate_clients)
        """Rooms each player may open (a rematch's race included): a bucket per player id
        (bounded, as the HTTP one)."""
        self.winnable_quota = AddressLimiter(settings.winnable_rooms_per_player_per_hour / 3600,
                                             max(1.0, settings.winnable_rooms_per_player_per_hour),
                                             settings.http_rate_clients)
        """Rooms asking for a winnable deal each player may open: so one identity cannot take
        the whole pool (``server.rooms.pool``)."""
        self._opening: Counter[tuple[str, str]] = Counter()
        """Public lobbies being opened (their deal drawn, their race stored), by ``("player",
        id)`` and ``("address", address)``: counted with those open, so that many requests
        at once do not all pass the limit before any lobby is open."""
        self.solver = SolverPool(settings, writer, sessions, clock)
        """Where hints and live verdicts are searched: processes of their own, never this
        event loop."""
        self.delivery = Delivery(settings, sessions, writer, clock, self.solver)
        self.rooms = self.delivery.rooms

    # -- restoring ------------------------------------------------------------------------------

    def adopt(self, row: RaceRow) -> Room:
        """Hold a stored race in progress from now on (after a restart, or a dead worker's):
        rebuilt from its stored moves, its deadlines applied."""
        now = self.clock()
        race = restore_race(row, self.settings, now)
        room = Room(race, self.delivery.outbox(), opened=now, epoch=row.holder_epoch)
        self.rooms[race.code] = room
        held = "lobby" if race.phase is Phase.LOBBY else "race"  # (a lobby was never raced)
        self.delivery.deliver(room, race.catch_up(now))
        log.info("%s %s (%s) restored from the database", held, race.code, race.rule_set)
        return room

    # -- requests -------------------------------------------------------------------------------

    async def handle(self, client: Member, message: RoomRequest) -> None:
        """Act on a room request of a member that has said hello; a refusal is raised
        (``Refusal``, ``RaceError``) and nothing has changed. Returns once the reply is out."""
        assert client.player_id is not None
        now = self.clock()
        match message:
            case CreateRoom():
                await self._create_room(client, message)
            case JoinRoom():
                room = self.room(message.code)
                self._may_enter(client, room)
                out = room.race.join(client.player_id, client.name or "", now)
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
                await self._daily(client, message, now)
            case AskHint():
                room = self._current(client)
                given = await self.solver.hint(room.race, client.player_id, client.address,
                                               message.id, now)
                await room.reply(client, given)
            case FollowVerdicts():
                room = self._current(client)
                player_id = client.player_id
                self.solver.follow(room.race, player_id, client.address,
                                   lambda verdict: room.outbox.add([(
                                       [member for member in room.members
                                        if member.player_id == player_id],
                                       as_frame(verdict))]), message.on)
                await room.reply(client, Ok(id=message.id))
            case Rematch():
                await self._rematch(client, message)

    def disconnect(self, client: Member) -> None:
        """The member's connection is gone."""
        room = client.room
        if not isinstance(room, Room) or client.player_id is None:
            return
        room.members.discard(client)
        if not any(member.player_id == client.player_id for member in room.members):
            self.delivery.deliver(room, room.race.disconnect(client.player_id, self.clock()))

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
            listed = client.room.race.legal_move_named(client.player_id, message.move)
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
            room.addresses = {player_id: address for player_id, address in
                              [*room.addresses.items(), (client.player_id, client.address)]
                              if player_id in racers}

    async def _new_code(self) -> str:
        while True:
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if code not in self.rooms and await self.delivery.directory.claim(code):
                return code

    def _may_open(self, client: Member, rule_set: str) -> None:
        if rule_set not in RULE_SET_NAMES:
            raise Refusal(ErrorCode.UNKNOWN_RULE_SET, f"choose one of {', '.join(RULE_SET_NAMES)}")
        if client.room is not None:
            raise Refusal(ErrorCode.IN_ANOTHER_ROOM, "leave your room first")

    async def _create_room(self, client: Member, message: CreateRoom) -> None:
        self._may_open(client, message.rule_set)
        opening = self._may_list(client) if message.public else []
        self._opening.update(opening)
        try:
            deal = message.deal  # (a chosen number is checked by the model, "daily" refused)
            if deal.winnable:
                self._take_winnable(client)
            self._take_room(client)
            seed, winnable = await self._draw(message.rule_set, int(deal.number or 0)
                                              if deal.kind == "number" else None, deal.winnable)
            await self._open(client, message.id, rule_set=message.rule_set, seed=seed,
                             deal_kind=deal.kind, winnable=winnable, seats_max=message.seats,
                             time_limit_s=message.time_limit_s, public=message.public,
                             countdown_s=self.settings.countdown_s)
        finally:
            for key in opening:
                self._opening[key] -= 1
                if not self._opening[key]:
                    del self._opening[key]

    async def _draw(self, rule_set: str, number: int | None,
                    winnable: bool) -> tuple[int, bool | None]:
        """A room's deal: the chosen ``number``, or a new secret seed; asked to be winnable, a
        pooled seed, or after a wait an unproved one (``server.rooms.pool``), and which it is."""
        seed = secrets.randbits(64) if number is None else number
        if not winnable:
            return seed, None
        pooled = await winnable_seed(self.settings, self.sessions, rule_set, self._write)
        return (seed, False) if pooled is None else (pooled, True)

    async def _daily(self, client: Member, message: PlayDaily, now: float) -> None:
        assert client.player_id is not None
        self._may_open(client, message.rule_set)
        self._take_room(client)  # before the claim: a refused room costs no day's play
        day, rule_set = datetime.fromtimestamp(now, UTC).date(), message.rule_set
        pooled = daily_draw(self.settings, rule_set)
        seed, winnable = await self._write(lambda: store.daily_seed(self.sessions, rule_set, day,
                                                                    pooled))
        room = await self._open(client, message.id, rule_set=rule_set, seed=seed,
                                deal_kind="daily", winnable=winnable, seats_max=1,
                                time_limit_s=None,
                                countdown_s=0, daily_day=day)
        self.delivery.deliver(room, room.race.start(client.player_id, now))

    def _may_list(self, client: Member) -> list[tuple[str, str]]:
        """Refuse a public lobby past those one player, or one address, may host at once,
        counting those still being opened (a scan of this worker's rooms, for a request each
        player may make ``rooms_per_player_per_hour``); else what the new lobby counts
        against while it is being opened (``_opening``)."""
        assert client.player_id is not None
        settings = self.settings
        player, address = ("player", client.player_id), ("address", client.address or "")
        by_player, by_address = public_lobbies(self.rooms.values(), client.player_id,
                                               client.address)
        by_player += self._opening[player]
        by_address += self._opening[address]
        if by_player >= settings.public_lobbies_per_player:
            raise Refusal(ErrorCode.TOO_MANY_LOBBIES, "you host too many public lobbies: at "
                          f"most {settings.public_lobbies_per_player} at once; start or leave "
                          "one, or open this room private")
        if by_address >= settings.public_lobbies_per_address:
            raise Refusal(ErrorCode.TOO_MANY_LOBBIES, "your address hosts too many public "
                          f"lobbies: at most {settings.public_lobbies_per_address} at once; "
                          "open this room private")
        return [player] if client.address is None else [player, address]

    def _take_room(self, client: Member) -> None:
        assert client.player_id is not None
        if self.room_quota.take(client.player_id, self.clock()) > 0:
            raise Refusal(ErrorCode.TOO_MANY_ROOMS, "you have opened too many rooms (a "
                          "rematch is one): at most "
                          f"{self.settings.rooms_per_player_per_hour:g} an hour")

    def _take_winnable(self, client: Member) -> None:
        assert client.player_id is not None
        if self.winnable_quota.take(client.player_id, self.clock()) > 0:
            raise Refusal(ErrorCode.TOO_MANY_WINNABLE, "you have asked for too many winnable "
                          "deals: at most "
                          f"{self.settings.winnable_rooms_per_player_per_hour:g} an hour; a "
                          "room without \"winnable\" is welcome")

    async def _open(self, client: Member, request_id: str | None,
                    **race_settings: Any) -> Room:
        """A new room with a new race, hosted by ``client``: stored, then entered. A daily
        deal's race is stored with its host's one play of the day, or refused, in one write."""
        assert client.player_id is not None
        code = await self._new_code()
        race = Race(race_id=secrets.token_hex(8), code=code, algorithm=DEAL_ALGORITHM,
                    host_id=client.player_id, host_name=client.name or "",
                    grace_s=self.settings.reconnect_grace_s, max_race_s=self.settings.max_race_s,
                    idle_s=self.settings.idle_s, **race_settings)
        try:
            stored = await self._store(race)
        except Refusal:
            self.delivery.directory.release(code)
            raise
        if stored is None:
            self.delivery.directory.release(code)
            raise Refusal(ErrorCode.ALREADY_PLAYED,
                          f"you have played today's {race.rule_set} deal")
        room = self.rooms[race.code] = Room(race, self.delivery.outbox(), opened=self.clock(),
                                            host_address=client.address)
        self._enter(client, room)
        self.delivery.directory.listed(room)
        await self._reply_room(client, room, request_id)
        return room

    def _store(self, race: Race) -> Awaitable[RaceRow | None]:
        """Store a new race, in its lobby (a client waits for it)."""
        return self._write(lambda: store.create_race(
            self.sessions, race_id=race.race_id, code=race.code, rule_set=race.rule_set,
            deal_kind=race.deal_kind, seed=race.seed, algorithm=race.algorithm,
            rules=race.rules, host_id=race.host_id, seats_max=race.seats_max,
            time_limit_s=race.time_limit_s, holder=self.holder, daily_day=race.daily_day,
            winnable=race.winnable, public=race.public))

    async def _rematch(self, client: Member, message: Rematch) -> None:
        """The room's next race (``server.core.rematch``), stored before anyone hears of it. The
        room keeps its outbox, members and code; the finished race is in the database."""
        assert client.player_id is not None
        room = self._current(client)
        finished = room.race
        may_rematch(finished, client.player_id)  # before drawing from the pool
        if room.rematching is not None:  # another racer asked first: theirs is ours
            await room.rematching
            if room.race is finished:  # (it failed: this one is tried afresh)
                await self._rematch(client, message)
                return
            await room.reply(client, Ok(id=message.id))
            return
        if finished.winnable is not None:
            self._take_winnable(client)
        self._take_room(client)  # a rematch's race is a room's: the same quota
        room.rematching = asyncio.get_running_loop().create_future()
        try:
            seed, winnable = await self._draw(finished.rule_set, finished.seed if (
                finished.deal_kind == "number") else None, finished.winnable is not None)
            if self.rooms.get(finished.code) is not room:
                raise Refusal(ErrorCode.ROOM_CLOSED, f"room {finished.code} has closed")
            following, out = rematch(finished, client.player_id, race_id=secrets.token_hex(8),
                                     seed=seed, algorithm=DEAL_ALGORITHM, winnable=winnable)
            await self._store(following)
            self.solver.forget_race(finished.race_id)
            room.race, room.opened, room.epoch = following, self.clock(), 1
            self.delivery.deliver(room, out)
        finally:
            room.rematching.set_result(None)
            room.rematching = None
        await room.reply(client, Ok(id=message.id))

    async def _write(self, action: Callable[[], Awaitable[T]]) -> T:
        return await write_for_client(self.writer, action, self.settings.write_wait_s)

    # -- racing ---------------------------------------------------------------------------------

    async def _move(self, client: Member, move: Move, request_id: str | None,
                    now: float) -> None:
        """Validate, store, then acknowledge: an acknowledged move is never lost. The
        connection's next request is read once the reply is out."""
        assert client.player_id is not None
        room = self._current(client)
        sent = self.delivery.deliver(room, room.race.move(client.player_id, move, now, request_id),
                            after_move=True)
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
        missed = None if message.last_seq == 0 else race.events_since(message.last_seq)
        full = missed is None
        if missed is None:
            missed = race.catch_up_state()
        await room.reply(client, Resynced(
            id=message.id, full=full, missed=[event.model_dump(mode="json") for event in missed],
            reconnect_to=self._hint(client)), *self._own_view(client, room, message.id))

    def _reply_room(self, client: Member, room: Room,
                    request_id: str | None) -> asyncio.Future[bool]:
        """The reply to create, join and spectate: the room now, and your own board if you are
        racing in it."""
        state = room.race.room_state(request_id)
        hint = self._hint(client)
        if hint is not None:
            state = state.model_copy(update={"reconnect_to": hint})
        return room.reply(client, state, *self._own_view(client, room, None))

    def _hint(self, client: Member) -> str | None:
        """``reconnect_to`` for a connection held by another worker."""
        return self.address or None if isinstance(client, RemoteMember) else None

    def _own_view(self, client: Member, room: Room,
                  request_id: str | None) -> list[Message]:
        assert client.player_id is not None
        view = room.race.own_view(client.player_id, request_id)
        return [] if view is None else [view]

    # -- delivery and timers --------------------------------------------------------------------
