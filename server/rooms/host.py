"""Where a room lives: its race, the connections in it, its outbox, its timer, its storage.

A ``RoomHost`` keeps the rooms of one process. It takes the room requests (create, join,
spectate, leave, ready, start, move, resign, resume, daily, rematch) of its members, feeds
them to the race (``server.core.race``, a pure state machine), queues what the race accepted for
storage (``server.storage.writer``) and sends what the race said through the room's outbox
(``server.rooms.outbox``: in order, each message once what it depends on is stored).

A member is a connection in the room, wherever it is: a ``Client`` of this process
(``server.net.connection``), whose frames are written to its socket, or a ``RemoteMember``, a
connection held by another worker, whose frames the bus (``server.cluster.bus``) carries there
(``server.rooms.members``). The host does not tell them apart but to hand frames over.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from websockets.asyncio.server import ServerConnection, broadcast

from engine.deal import DEAL_ALGORITHM
from engine.errors import EngineError
from engine.moves import Move
from engine.registry import RULE_SET_NAMES
from server.cluster.listing import public_lobbies
from server.cluster.rank_cache import RedisRanks
from server.core.errors import Refusal
from server.core.limits import AddressLimiter
from server.core.race import Outgoing, Phase, Race, as_frame
from server.core.ratings import RatingRules
from server.core.rematch import may_rematch, rematch
from server.rooms.members import Carrier, Directory, OneProcess, RemoteMember
from server.rooms.outbox import Addressed, Outbox
from server.rooms.pool import daily_draw, winnable_seed
from server.rooms.solver import SolverPool
from server.settings import Settings
from server.storage import holding
from server.storage.deals import daily_seed
from server.storage.engine import Sessions
from server.storage.models import RaceRow
from server.storage.races import AcceptedMove, create_race, record_start
from server.storage.results import record_results
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
    Ok,
    PlayDaily,
    RaceFinished,
    RaceStarted,
    Ready,
    Rematch,
    Resign,
    Resume,
    Resynced,
    Spectate,
    StartRace,
)

if TYPE_CHECKING:
    from server.net.connection import Client

log = logging.getLogger("patience_race.rooms")

T = TypeVar("T")
MOVED_CLOSE = (1012, "the room's worker stopped: reconnect and resume")
"""How a connection is closed whose room this process no longer holds."""
CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
CODE_LENGTH = 8

RoomRequest = (CreateRoom | JoinRoom | Spectate | LeaveRoom | Ready | StartRace | MakeMove
               | Resign | Resume | PlayDaily | AskHint | FollowVerdicts | Rematch)
ROOM_REQUESTS = (CreateRoom, JoinRoom, Spectate, LeaveRoom, Ready, StartRace, MakeMove, Resign,
                 Resume, PlayDaily, AskHint, FollowVerdicts, Rematch)
"""The requests a room answers; the connection's gateway answers the rest itself."""


@dataclass(eq=False, slots=True)
class Room:
    race: Race
    outbox: Outbox
    """Everything said in the room, to leave in the order it was said."""
    members: set[Client | RemoteMember] = field(default_factory=set)
    timer: asyncio.TimerHandle | None = None
    deadline: float | None = None
    """What ``timer`` was set for."""
    saved: dict[str, int] = field(default_factory=dict)
    """How many of each racer's moves are queued for storage."""
    opened: float = 0.0
    """When the room's lobby was opened (or restored, or reopened by a rematch), by the
    service's clock: the lobby's age (``server.sweeper``) and its place in the public list."""
    empty_since: float | None = None
    """Since when nobody has been in the room, as last looked at (``server.sweeper``)."""
    rematching: asyncio.Future[None] | None = None
    """A rematch under way (its deal drawn, its race stored): another racer's waits for it."""
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

    def address(self, outgoing: Outgoing) -> tuple[list[Client | RemoteMember], str]:
        """What the race said, to the members in the room now that it is meant for."""
        to, but = outgoing.to, outgoing.but
        return ([member for member in self.members if (to is None or member.player_id == to)
                 and (but is None or member.player_id != but or member.own_progress)],
                outgoing.text())

    def reply(self, client: Client | RemoteMember, *messages: Message) -> asyncio.Future[bool]:
        """A reply to a request about this room: it leaves after everything said in the room
        before it (the room events the request caused among them)."""
        return self.outbox.add([([client], as_frame(message)) for message in messages])

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


def restore_race(row: RaceRow, settings: Settings, now: float) -> Race:
    """A stored race in progress, rebuilt (the race replays each racer's stored moves).

    The race clock does not run while no server holds it: it carries on from the race's last
    stored move, so the outage is charged to nobody, and to every racer of the race alike."""
    last_move_ms = max((move.at_ms for entry in row.entries for move in entry.move_log),
                       default=0)
    return Race.resumed(
        started_at=None if row.started_at is None else now - last_move_ms / 1000,
        racers=[(entry.player_id, entry.player.name,
                 [(move.text, move.at_ms) for move in entry.move_log]) for entry in row.entries],
        now=now, race_id=row.id, code=row.code, rule_set=row.rule_set, seed=row.seed,
        algorithm=row.algorithm, rules=row.rules, deal_kind=row.deal_kind, host_id=row.host_id,
        host_name=row.host.name, seats_max=row.seats_max, time_limit_s=row.time_limit_s,
        countdown_s=settings.countdown_s, grace_s=settings.reconnect_grace_s,
        max_race_s=settings.max_race_s, idle_s=settings.idle_s, daily_day=row.daily_day,
        winnable=row.winnable, public=row.public)


class RoomHost:
    """The rooms of this process, and everything done in them."""

    def __init__(self, settings: Settings, sessions: Sessions, writer: Writer,
                 clock: Callable[[], float]) -> None:
        self.settings, self.sessions, self.writer, self.clock = settings, sessions, writer, clock
        self.rank_cache: RedisRanks | None = None
        """Set by the service when Redis is configured: given each stored result's lines."""
        self.rooms: dict[str, Room] = {}
        self.directory: Directory = OneProcess()
        self.carrier: Carrier = OneProcess()
        """Set by the Redis bus when there are several workers."""
        self.address = ""
        """This worker's own WebSocket address, given as ``reconnect_to`` to another worker's
        connection when it enters a room here ("" with one worker)."""
        self.holder = holding.process_name()
        """This process's name as the holder of its races (its name on the bus, if any)."""
        self._closing: set[asyncio.Future[None]] = set()
        """Connections being closed by ``let_go`` (kept referenced until they are)."""
        self.closing = False
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
        self.rating_rules = RatingRules(settings.rating_provisional_s,
                                        settings.rated_races_per_player_per_hour,
                                        settings.max_race_s)
        self._opening: Counter[tuple[str, str]] = Counter()
        """Public lobbies being opened (their deal drawn, their race stored), by ``("player",
        id)`` and ``("address", address)``: counted with those open, so that many requests
        at once do not all pass the limit before any lobby is open."""
        self.solver = SolverPool(settings, writer, sessions, clock)
        """Where hints and live verdicts are searched: processes of their own, never this
        event loop."""
        writer.on_fenced = self.let_go_of_races

    # -- restoring ------------------------------------------------------------------------------

    def adopt(self, row: RaceRow) -> Room:
        """Hold a stored race in progress from now on (after a restart, or a dead worker's):
        rebuilt from its stored moves, its deadlines applied."""
        now = self.clock()
        race = restore_race(row, self.settings, now)
        room = Room(race, self._outbox(),
                    saved={pid: len(r.move_times) for pid, r in race.racers.items()}, opened=now,
                    epoch=row.holder_epoch)
        self.rooms[race.code] = room
        held = "lobby" if race.phase is Phase.LOBBY else "race"  # (a lobby was never raced)
        self.deliver(room, race.catch_up(now))
        log.info("%s %s (%s) restored from the database", held, race.code, race.rule_set)
        return room

    def let_go_of_races(self, race_ids: frozenset[str]) -> None:
        """Another process holds these races now (``server.storage.holding``): let go of their
        rooms."""
        for room in [room for room in self.rooms.values() if room.race.race_id in race_ids]:
            self.let_go(room)

    def let_go(self, room: Room) -> None:
        """Another process holds the room's race now: forget the room, without releasing its
        code, and close its members' connections (1012), so that their clients reconnect and
        resume where the room is held, with every move that was acknowledged."""
        if self.rooms.get(room.race.code) is not room:
            return
        log.warning("room %s is held by another process now: letting it go", room.race.code)
        members = list(room.members)
        self.forget_room(room, release=False)
        remote = [member for member in members if isinstance(member, RemoteMember)]
        if remote:
            self.carrier.moved(remote)
        for member in members:
            if member.ws is not None:
                self._closing.add(asyncio.ensure_future(member.ws.close(*MOVED_CLOSE)))
        self._closing = {task for task in self._closing if not task.done()}

    # -- requests -------------------------------------------------------------------------------

    async def handle(self, client: Client | RemoteMember, message: RoomRequest) -> None:
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
                self.deliver(room, out)
                await self._reply_room(client, room, message.id)
            case Spectate():
                room = self.room(message.code)
                self._may_enter(client, room)
                room.race.spectate(client.player_id, self.settings.spectators_per_room)
                self._enter(client, room)
                await self._reply_room(client, room, message.id)
            case LeaveRoom():
                room = self._current(client)
                self.deliver(room, room.race.leave(client.player_id, now))
                if client.player_id not in room.race.racers:
                    room.addresses.pop(client.player_id, None)
                room.members.discard(client)
                client.room = None
                await room.reply(client, Ok(id=message.id))
            case Ready():
                room = self._current(client)
                self.deliver(room, room.race.ready(client.player_id, message.ready, now))
                await room.reply(client, Ok(id=message.id))
            case StartRace():
                room = self._current(client)
                self.deliver(room, room.race.start(client.player_id, now))
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

    def disconnect(self, client: Client | RemoteMember) -> None:
        """The member's connection is gone."""
        room = client.room
        if not isinstance(room, Room) or client.player_id is None:
            return
        room.members.discard(client)
        if not any(member.player_id == client.player_id for member in room.members):
            self.deliver(room, room.race.disconnect(client.player_id, self.clock()))

    def room(self, code: str) -> Room:
        room = self.rooms.get(code.upper())
        if room is None:
            raise Refusal(ErrorCode.UNKNOWN_ROOM, f"there is no room {code!r}")
        return room

    def _read_move(self, client: Client | RemoteMember, message: MakeMove) -> Move:
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

    def _current(self, client: Client | RemoteMember) -> Room:
        if not isinstance(client.room, Room):
            raise Refusal(ErrorCode.NOT_IN_ROOM, "you are in no room")
        return client.room

    def _may_enter(self, client: Client | RemoteMember, room: Room) -> None:
        if client.room is not None and client.room is not room:
            raise Refusal(ErrorCode.IN_ANOTHER_ROOM, "leave your room first")

    def _enter(self, client: Client | RemoteMember, room: Room) -> None:
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
            if code not in self.rooms and await self.directory.claim(code):
                return code

    def _may_open(self, client: Client | RemoteMember, rule_set: str) -> None:
        if rule_set not in RULE_SET_NAMES:
            raise Refusal(ErrorCode.UNKNOWN_RULE_SET, f"choose one of {', '.join(RULE_SET_NAMES)}")
        if client.room is not None:
            raise Refusal(ErrorCode.IN_ANOTHER_ROOM, "leave your room first")

    async def _create_room(self, client: Client | RemoteMember, message: CreateRoom) -> None:
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

    async def _daily(self, client: Client | RemoteMember, message: PlayDaily, now: float) -> None:
        assert client.player_id is not None
        self._may_open(client, message.rule_set)
        self._take_room(client)  # before the claim: a refused room costs no day's play
        day, rule_set = datetime.fromtimestamp(now, UTC).date(), message.rule_set
        pooled = daily_draw(self.settings, rule_set)
        seed, winnable = await self._write(lambda: daily_seed(self.sessions, rule_set, day,
                                                              pooled))
        room = await self._open(client, message.id, rule_set=rule_set, seed=seed,
                                deal_kind="daily", winnable=winnable, seats_max=1,
                                time_limit_s=None,
                                countdown_s=0, daily_day=day)
        self.deliver(room, room.race.start(client.player_id, now))

    def _may_list(self, client: Client | RemoteMember) -> list[tuple[str, str]]:
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

    def _take_room(self, client: Client | RemoteMember) -> None:
        assert client.player_id is not None
        if self.room_quota.take(client.player_id, self.clock()) > 0:
            raise Refusal(ErrorCode.TOO_MANY_ROOMS, "you have opened too many rooms (a "
                          "rematch is one): at most "
                          f"{self.settings.rooms_per_player_per_hour:g} an hour")

    def _take_winnable(self, client: Client | RemoteMember) -> None:
        assert client.player_id is not None
        if self.winnable_quota.take(client.player_id, self.clock()) > 0:
            raise Refusal(ErrorCode.TOO_MANY_WINNABLE, "you have asked for too many winnable "
                          "deals: at most "
                          f"{self.settings.winnable_rooms_per_player_per_hour:g} an hour; a "
                          "room without \"winnable\" is welcome")

    async def _open(self, client: Client | RemoteMember, request_id: str | None,
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
            self.directory.release(code)
            raise
        if stored is None:
            self.directory.release(code)
            raise Refusal(ErrorCode.ALREADY_PLAYED,
                          f"you have played today's {race.rule_set} deal")
        room = self.rooms[race.code] = Room(race, self._outbox(), opened=self.clock(),
                                            host_address=client.address)
        self._enter(client, room)
        self.directory.listed(room)
        await self._reply_room(client, room, request_id)
        return room

    def _store(self, race: Race) -> Awaitable[RaceRow | None]:
        """Store a new race, in its lobby (a client waits for it)."""
        return self._write(lambda: create_race(
            self.sessions, race_id=race.race_id, code=race.code, rule_set=race.rule_set,
            deal_kind=race.deal_kind, seed=race.seed, algorithm=race.algorithm,
            rules=race.rules, host_id=race.host_id, seats_max=race.seats_max,
            time_limit_s=race.time_limit_s, holder=self.holder, daily_day=race.daily_day,
            winnable=race.winnable, public=race.public))

    async def _rematch(self, client: Client | RemoteMember, message: Rematch) -> None:
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
            room.race, room.saved, room.opened, room.epoch = following, {}, self.clock(), 1
            self.deliver(room, out)
        finally:
            room.rematching.set_result(None)
            room.rematching = None
        await room.reply(client, Ok(id=message.id))

    async def _write(self, action: Callable[[], Awaitable[T]]) -> T:
        return await write_for_client(self.writer, action, self.settings.write_wait_s)

    # -- racing ---------------------------------------------------------------------------------

    async def _move(self, client: Client | RemoteMember, move: Move, request_id: str | None,
                    now: float) -> None:
        """Validate, store, then acknowledge: an acknowledged move is never lost. The
        connection's next request is read once the reply is out."""
        assert client.player_id is not None
        room = self._current(client)
        sent = self.deliver(room, room.race.move(client.player_id, move, now, request_id),
                            after_move=True)
        self.solver.moved(room.race, client.player_id)  # (its live verdict, said after these)
        await sent

    async def _resume(self, client: Client | RemoteMember, message: Resume, now: float) -> None:
        assert client.player_id is not None
        room = self.room(message.code)
        race = room.race
        if client.player_id not in race.racers:
            raise Refusal(ErrorCode.NOT_IN_ROOM, "you have no seat in that room")
        self._may_enter(client, room)
        room.members.discard(client)  # the reply hands this connection the room event below
        self.deliver(room, race.reconnect(client.player_id, now))
        self._enter(client, room)
        missed = None if message.last_seq == 0 else race.events_since(message.last_seq)
        full = missed is None
        if missed is None:
            missed = race.catch_up_state()
        await room.reply(client, Resynced(
            id=message.id, full=full, missed=[event.model_dump(mode="json") for event in missed],
            reconnect_to=self._hint(client)), *self._own_view(client, room, message.id))

    def _reply_room(self, client: Client | RemoteMember, room: Room,
                    request_id: str | None) -> asyncio.Future[bool]:
        """The reply to create, join and spectate: the room now, and your own board if you are
        racing in it."""
        state = room.race.room_state(request_id)
        hint = self._hint(client)
        if hint is not None:
            state = state.model_copy(update={"reconnect_to": hint})
        return room.reply(client, state, *self._own_view(client, room, None))

    def _hint(self, client: Client | RemoteMember) -> str | None:
        """``reconnect_to`` for a connection held by another worker."""
        return self.address or None if isinstance(client, RemoteMember) else None

    def _own_view(self, client: Client | RemoteMember, room: Room,
                  request_id: str | None) -> list[Message]:
        assert client.player_id is not None
        view = room.race.own_view(client.player_id, request_id)
        return [] if view is None else [view]

    # -- delivery and timers --------------------------------------------------------------------

    def _outbox(self) -> Outbox:
        return Outbox(self.hand_over)

    def hand_over(self, members: Iterable[Client | RemoteMember], frame: str) -> None:
        """Write a frame to the members' connections: at once to this process's own
        (``broadcast`` never waits for a slow reader), by the bus to other workers'."""
        local: list[ServerConnection] = []
        remote: list[RemoteMember] = []
        for member in members:
            if member.ws is not None:
                local.append(member.ws)
            else:
                remote.append(member)
        broadcast(local, frame)
        if remote:
            self.carrier.send_frames(remote, frame)

    def deliver(self, room: Room, out: list[Outgoing],
                after_move: bool = False) -> asyncio.Future[bool]:
        """Queue what the race said in the room's outbox, addressed to the room's members now,
        in the order the race said it; the future is done once it has all left.

        The moves the race accepted are queued for storage, and what it said waits until they
        are committed. A race's result is stored before it is announced: the result and what
        follows wait for that. A race's start is stored, with its seats, before
        ``race_started`` is sent: a race announced as started comes back started, every racer
        seated, after a crash. Whatever is queued later waits behind all of it. ``after_move``
        says that a move made ``out``: the room's timer is then left as it is (``_arm``)."""
        race = room.race
        after: asyncio.Future[bool] | None = None
        for outgoing in out:
            if isinstance(outgoing.message, RaceStarted):
                after = self._record_start(room, outgoing.message)
        rows = room.unsaved_moves()
        if rows:  # (the writer commits in order: once these moves are, so is the start)
            after = self.writer.store_moves(rows, (race.race_id, room.epoch))
        frames: list[Addressed] = []
        for outgoing in out:
            if isinstance(outgoing.message, RaceFinished):
                room.outbox.add(frames, after)
                frames, after = [], self._store_result(room)
                # Made as it leaves, with the rating changes that storing the result made.
                frames.append((room.address(outgoing)[0], race.result_frame))
                continue
            frames.append(room.address(outgoing))
        self._arm(room, after_move)
        if race.public:
            self.directory.listed(room)
        return room.outbox.add(frames, after)

    def _record_start(self, room: Room, started: RaceStarted) -> asyncio.Future[bool]:
        """Queue the race's start and its seats for storage; the future says when it is
        stored (False if it never will be: the server stopped, or another holds the room)."""
        race, epoch = room.race, room.epoch
        at = datetime.fromtimestamp(started.started_at_ms / 1000, UTC)
        racers = list(race.racers)
        addresses = {player_id: room.addresses.get(player_id, "") for player_id in racers}
        return self.writer.run(lambda: record_start(self.sessions, race.race_id, at,
                                                    racers, epoch, addresses,
                                                    self.rating_rules))

    def _store_result(self, room: Room) -> asyncio.Future[bool]:
        """Queue the race's result for storage; the room closes a while after it is stored."""
        race = room.race
        assert race.ended_at is not None
        ended = datetime.fromtimestamp(race.ended_at, UTC)
        ranking, epoch = race.ranking(), room.epoch

        async def store_result() -> None:
            recorded = await record_results(self.sessions, race.race_id, ended, ranking,
                                            epoch)
            race.rate(recorded.ratings)
            if self.rank_cache is not None:  # after the commit; it never fails the write
                await self.rank_cache.set_lines(recorded.scored)

        stored = self.writer.run(store_result)
        stored.add_done_callback(lambda _: self._close_later(room, race))
        addresses = frozenset(address for player_id, address in room.addresses.items()
                              if player_id in race.racers)
        stored.add_done_callback(lambda _: self.solver.after_race(race, addresses))
        return stored

    def _close_later(self, room: Room, race: Race) -> None:
        """Close the room a while after its race's result is stored, unless a rematch has
        put a new race in it meanwhile."""
        if not self.closing:
            asyncio.get_running_loop().call_later(
                self.settings.finished_room_s,
                lambda: self.forget_room(room) if room.race is race else None)

    def forget_room(self, room: Room, release: bool = True) -> None:
        """Close a room: its code is free (unless ``release`` is False: another worker holds
        it now), its members are in no room, its timer is off. (A finished race's room is
        forgotten a while after its result is stored: a server that runs for weeks keeps only
        live rooms.)"""
        if self.rooms.get(room.race.code) is room:
            del self.rooms[room.race.code]
            if release:
                self.directory.release(room.race.code)
        self.solver.forget_race(room.race.race_id)
        for member in room.members:
            member.room = None
        remote = [member for member in room.members if isinstance(member, RemoteMember)]
        if remote:
            self.carrier.out_of_room(remote)
        room.members.clear()
        if room.timer is not None:
            room.timer.cancel()
            room.timer = None

    def stop_timers(self) -> None:
        """Shutting down: no race is woken again."""
        self.closing = True
        for room in self.rooms.values():
            if room.timer is not None:
                room.timer.cancel()

    def _arm(self, room: Room, after_move: bool = False) -> None:
        """Set the room's timer for the race's next deadline. A move only puts deadlines off
        (the mover's idle deadline) or ends them, never brings one nearer, so after a move a
        timer already set is left as it is: at worst it wakes the race early, and the tick
        that finds nothing due sets it again (working out the deadline after every move was
        2-3 % of the server's CPU)."""
        if after_move and room.timer is not None and not self.closing:
            return
        deadline = room.race.next_deadline()
        if room.timer is not None and deadline == room.deadline and not self.closing:
            return
        if room.timer is not None:
            room.timer.cancel()
            room.timer = None
        room.deadline = deadline
        if deadline is None or self.closing:
            return
        loop = asyncio.get_running_loop()
        room.timer = loop.call_later(max(0.0, deadline - self.clock()), self._wake, room)

    def _wake(self, room: Room) -> None:
        room.timer = None
        self.deliver(room, room.race.tick(self.clock()))


async def write_for_client(writer: Writer, action: Callable[[], Awaitable[T]],
                           within_s: float) -> T:
    """A write a client waits for, through the writer like every write (never beside it: on
    SQLite two writers contend for one lock); ``unavailable`` if the database does not take it
    within ``within_s``."""
    try:
        return await writer.call(action, within_s)
    except WriteGivenUp:
        raise Refusal(ErrorCode.UNAVAILABLE,
                      "the database is busy: try again in a moment") from None


def parse_move(message: MakeMove) -> Move:
    try:
        if isinstance(message.move, str):
            return Move.parse(message.move)
        if isinstance(message.move, ActionObject):
            return Move.act(message.move.action)
        return Move.from_json(message.move.model_dump(by_alias=True, exclude_none=True))
    except EngineError as error:
        raise Refusal(ErrorCode.INVALID_MOVE, str(error)) from None

