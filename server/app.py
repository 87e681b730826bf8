"""The asyncio shell: WebSocket frames in, races and database rows out.

Everything that decides anything lives elsewhere: the rules in ``engine``, the race in
``server.race``, the wire format in ``server.protocol``, the storage in ``server.store``. This
module parses frames, enforces the transport limits (frame size, rate), keeps the rooms and the
connections, wakes races at their deadlines, queues writes, sends what each race says through its
room's outbox (``server.outbox``: in order, each message once what it depends on is stored), and
turns refusals into error messages. Plain HTTP on the same port is in ``server.http``.

A connection's requests are handled one at a time: the next is read once the reply to the last
is out (so a move is acknowledged, and its reply sent, before the same player's next move).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncEngine
from websockets.asyncio.server import ServerConnection, broadcast
from websockets.exceptions import ConnectionClosed

from engine.deal import DEAL_ALGORITHM, SEED_MAX
from engine.errors import EngineError
from engine.moves import Move
from engine.registry import RULE_SET_NAMES
from server import store
from server.boards import leaderboard
from server.db import RaceRow, make_sessionmaker
from server.errors import RaceError, Refusal
from server.gateway import (
    UNKNOWN_TYPE,
    AddressBook,
    Budget,
    address_of,
    frame_problem,
    invalid_text,
    is_known_type,
)
from server.limits import AddressLimiter
from server.outbox import Addressed
from server.protocol import (
    CLIENT_MESSAGE,
    ActionObject,
    ClientMessage,
    CreateRoom,
    ErrorCode,
    ErrorMessage,
    GetLeaderboard,
    GetRace,
    Hello,
    JoinRoom,
    LeaveRoom,
    MakeMove,
    Message,
    Ok,
    PlayDaily,
    RaceFinished,
    RaceRecord,
    RaceStarted,
    Ready,
    Resign,
    Resume,
    Resynced,
    ShuttingDown,
    Spectate,
    StartRace,
    Welcome,
)
from server.race import Outgoing, Race, as_frame
from server.rooms import Client, Room
from server.settings import Settings
from server.sweeper import sweep, sweep_interval
from server.writer import Writer

log = logging.getLogger("patience_race.server")

CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
CODE_LENGTH = 8
FLOOD_CLOSE_CODE = 1008  # policy violation


def restore_race(row: RaceRow, settings: Settings, now: float) -> Race:
    """A stored race in progress, rebuilt (the race replays each racer's stored moves).

    The race clock does not run while the server is down: it carries on from the race's last
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
        max_race_s=settings.max_race_s, idle_s=settings.idle_s, daily_day=row.daily_day)


class Service:
    def __init__(self, settings: Settings, engine: AsyncEngine,
                 clock: Callable[[], float] = time.time) -> None:
        self.settings, self.clock = settings, clock
        self.sessions = make_sessionmaker(engine)
        self.rooms: dict[str, Room] = {}
        self.clients: set[Client] = set()
        self.move_recorder = store.MoveRecorder(engine)
        self.writer = Writer(self.move_recorder)
        self.closing = False
        self.closed_by: float | None = None
        """When shutting down: the loop time by which everything must be closed."""
        self.addresses = AddressBook(settings.connections_per_address,
                                     settings.new_players_per_address_per_min,
                                     settings.http_rate_clients)
        self.room_quota = AddressLimiter(settings.rooms_per_player_per_hour / 3600,
                                         max(1.0, settings.rooms_per_player_per_hour),
                                         settings.http_rate_clients)
        """Rooms each player may open: a bucket per player id (bounded, as the HTTP one)."""
        self._sweeper: asyncio.Task[None] | None = None
        self._closing_tasks: set[asyncio.Task[None]] = set()

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        self.writer.start()
        now = self.clock()
        for row in await store.unfinished_races(self.sessions):
            race = restore_race(row, self.settings, now)
            room = Room(race, saved={pid: len(r.move_times) for pid, r in race.racers.items()},
                        opened=now)
            self.rooms[race.code] = room
            self._deliver(room, race.catch_up(now))
            log.info("race %s (%s) restored from the database", race.code, race.rule_set)
        self._sweeper = asyncio.create_task(self._sweep_forever())

    async def _sweep_forever(self) -> None:
        """Close idle connections and stale lobbies (``server.sweeper``) until shutdown."""
        interval = sweep_interval(self.settings)
        while not self.closing:
            await asyncio.sleep(interval)
            try:
                sweep(self, self.clock())
            except Exception:  # a bug here must not stop the sweeping
                log.exception("sweep failed")

    async def shutdown(self) -> None:
        """Store everything queued, tell everyone, close every connection at once: all within
        ``settings.shutdown_s``. From now on no request is acted on.

        Writes the database has not taken by then are given up (none was acknowledged: the
        racers resume without them). A write cut short may hold up the end of the shutdown,
        not the clients, for as long as its driver takes to let go (``Writer.stopped``)."""
        loop = asyncio.get_running_loop()
        self.closing, self.closed_by = True, loop.time() + self.settings.shutdown_s
        if self._sweeper is not None:
            self._sweeper.cancel()
        for room in self.rooms.values():
            if room.timer is not None:
                room.timer.cancel()
        given_up = await self.writer.close(self._time_left())
        if given_up:
            log.warning("stopping with %d database writes not done in time", given_up)
        await self._close(list(self.clients))
        await self.writer.stopped()
        await self.move_recorder.close()

    def _time_left(self) -> float:
        assert self.closed_by is not None
        return max(0.0, self.closed_by - asyncio.get_running_loop().time())

    async def _close(self, clients: list[Client]) -> None:
        """Tell them the server is stopping and close their connections, all at once. Those not
        closed by the shutdown's deadline are dropped: a client that never answers the close
        would otherwise hold its connection for websockets' close timeout (10 s)."""
        notice = ShuttingDown(message="the server is restarting; every accepted move is saved: "
                              "reconnect and resume")
        closing = {}
        for client in clients:
            self._send(client, notice)
            closing[asyncio.create_task(client.ws.close(1001, "server shutting down"))] = client
        if not closing:
            return
        _, late = await asyncio.wait(closing, timeout=self._time_left())
        for task in late:
            closing[task].ws.transport.abort()
        if late:
            await asyncio.wait(late)

    # -- connections ----------------------------------------------------------------------------

    async def handle(self, ws: ServerConnection) -> None:
        settings, now = self.settings, self.clock()
        client = Client(ws, Budget(settings.rate_per_s, settings.rate_burst,
                                   settings.flood_close_after, settings.flood_forgive_per_s,
                                   stamp=now), address_of(ws.remote_address), since=now)
        if self.closing:
            await self._close([client])
            return
        if not self.addresses.connect(client.address):
            self._error(client, None, ErrorCode.TOO_MANY_CONNECTIONS,
                        f"at most {settings.connections_per_address} connections from one "
                        "address")
            await ws.close(FLOOD_CLOSE_CODE, "too many connections")
            return
        self.clients.add(client)
        try:
            async for frame in ws:
                if self.closing:
                    continue  # the server is stopping: it acts on nothing more
                if not await self._receive(client, frame):
                    await self._close_flood(ws)
                    break
        except ConnectionClosed:
            pass
        finally:
            self.addresses.disconnect(client.address)
            self.clients.discard(client)
            if client.room is not None and client.player_id is not None:
                room = client.room
                room.members.discard(client)
                if not any(c.player_id == client.player_id for c in room.members):
                    self._deliver(room, room.race.disconnect(client.player_id, self.clock()))

    async def _close_flood(self, ws: ServerConnection) -> None:
        """Close a flooding connection (1008). Its frames still queued are read and dropped
        meanwhile: unread, they would keep the client's answer to the close from being read,
        and the close would wait out its timeout (10 s) and end abnormally (1006)."""
        closing = asyncio.create_task(ws.close(FLOOD_CLOSE_CODE, "too many messages"))
        try:
            async with asyncio.timeout(ws.close_timeout):
                async for _ in ws:
                    pass
        except TimeoutError:
            pass
        await closing

    async def _receive(self, client: Client, frame: str | bytes) -> bool:
        """Handle one frame; False when the connection is to be closed (a flood).

        Every frame counts against the connection's rate, and every one refused or not
        understood against its allowance of errors (``server.gateway.Budget``)."""
        now = client.active = self.clock()
        problem = frame_problem(frame, self.settings.max_frame_bytes)
        if problem is not None:
            return self._unread(client, problem, now)
        try:
            data = json.loads(frame)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return self._unread(client, (ErrorCode.BAD_JSON, "that frame is not JSON"), now)
        request_id = data["id"][:64] if isinstance(data, dict) and isinstance(
            data.get("id"), str) else None
        if not client.budget.allow(now):
            return self._refuse_rate(client, request_id, now)
        try:
            message = CLIENT_MESSAGE.validate_python(data)
        except ValidationError as invalid:
            if not is_known_type(data):
                return self._refuse(client, request_id, ErrorCode.UNKNOWN_TYPE, UNKNOWN_TYPE, now)
            return self._refuse(client, request_id, ErrorCode.INVALID_MESSAGE,
                                invalid_text(invalid), now)
        try:
            await self._dispatch(client, message)
        except (Refusal, RaceError) as refused:
            self._error(client, request_id, refused.code, refused.message)
        return True

    def _refuse(self, client: Client, request_id: str | None, code: ErrorCode, text: str,
                now: float) -> bool:
        """Refuse a frame not understood: it counts against the allowance of errors (and,
        read or not, against the rate); False once the allowance is spent."""
        if not client.budget.error(now):
            return False
        self._error(client, request_id, code, text)
        return True

    def _unread(self, client: Client, problem: tuple[ErrorCode, str], now: float) -> bool:
        """A frame refused before it is read counts against the rate too."""
        if not client.budget.allow(now):
            return self._refuse_rate(client, None, now)
        return self._refuse(client, None, *problem, now)

    def _refuse_rate(self, client: Client, request_id: str | None, now: float) -> bool:
        if not client.budget.error(now):
            return False
        self._error(client, request_id, ErrorCode.RATE_LIMITED,
                    f"slow down: at most {self.settings.rate_per_s:g} messages a second")
        return True

    async def _dispatch(self, client: Client, message: ClientMessage) -> None:
        if isinstance(message, Hello):
            await self._hello(client, message)
            return
        if client.player_id is None:
            raise Refusal(ErrorCode.NOT_IDENTIFIED, "say hello first, with a name or your token")
        now = self.clock()
        match message:
            case CreateRoom():
                await self._create_room(client, message)
            case JoinRoom():
                room = self._room(message.code)
                self._may_enter(client, room)
                out = room.race.join(client.player_id, client.name or "", now)
                self._enter(client, room)
                self._deliver(room, out)
                await self._reply_room(client, room, message.id)
            case Spectate():
                room = self._room(message.code)
                self._may_enter(client, room)
                out = room.race.spectate(client.player_id)
                self._enter(client, room)
                self._deliver(room, out)
                await self._reply_room(client, room, message.id)
            case LeaveRoom():
                room = self._current(client)
                self._deliver(room, room.race.leave(client.player_id, now))
                room.members.discard(client)
                client.room = None
                await room.reply(client, Ok(id=message.id))
            case Ready():
                room = self._current(client)
                self._deliver(room, room.race.ready(client.player_id, message.ready, now))
                await room.reply(client, Ok(id=message.id))
            case StartRace():
                room = self._current(client)
                self._deliver(room, room.race.start(client.player_id, now))
                await room.reply(client, Ok(id=message.id))
            case MakeMove():
                await self._move(client, self._parse_move(message), message.id, now)
            case Resign():
                await self._move(client, Move.act("resign"), message.id, now)
            case Resume():
                await self._resume(client, message, now)
            case PlayDaily():
                await self._daily(client, message, now)
            case GetLeaderboard():
                if message.rule_set not in RULE_SET_NAMES:  # as HTTP's 404, not an empty board
                    raise Refusal(ErrorCode.UNKNOWN_RULE_SET,
                                  f"choose one of {', '.join(RULE_SET_NAMES)}")
                board = await leaderboard(self.sessions, message, client.player_id,
                                          datetime.fromtimestamp(now, UTC))
                self._send(client, board)
            case GetRace():
                record = await store.race_record(self.sessions, message.race_id,
                                                 datetime.fromtimestamp(now, UTC))
                if record is None:
                    raise Refusal(ErrorCode.NOT_FOUND, f"no finished race {message.race_id!r}")
                self._send(client, RaceRecord(id=message.id, record=record))

    # -- identity -------------------------------------------------------------------------------

    async def _hello(self, client: Client, message: Hello) -> None:
        if message.token is not None:
            player = await store.player_by_token(self.sessions, message.token)
            if player is None:
                raise Refusal(ErrorCode.BAD_TOKEN, "that token belongs to no player")
            token = None
        elif message.name is not None:
            if not self.addresses.new_player(client.address, self.clock()):
                raise Refusal(ErrorCode.TOO_MANY_PLAYERS, "too many new players from your address: "
                              "come back with your token, or later")
            player, token = await store.create_player(self.sessions, message.name.strip())
        else:
            raise Refusal(ErrorCode.INVALID_MESSAGE, "hello needs a name (new player) or a token")
        client.player_id, client.name = player.id, player.name
        self._send(client, Welcome(id=message.id, player_id=player.id, name=player.name,
                                         token=token))

    # -- rooms ----------------------------------------------------------------------------------

    def _room(self, code: str) -> Room:
        room = self.rooms.get(code.upper())
        if room is None:
            raise Refusal(ErrorCode.UNKNOWN_ROOM, f"there is no room {code!r}")
        return room

    def _current(self, client: Client) -> Room:
        if client.room is None:
            raise Refusal(ErrorCode.NOT_IN_ROOM, "you are in no room")
        return client.room

    def _may_enter(self, client: Client, room: Room) -> None:
        if client.room is not None and client.room is not room:
            raise Refusal(ErrorCode.IN_ANOTHER_ROOM, "leave your room first")

    def _enter(self, client: Client, room: Room) -> None:
        """Make the connection a member: it gets what is said in the room from now on."""
        self._may_enter(client, room)
        client.room = room
        room.members.add(client)

    def _new_code(self) -> str:
        while True:
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if code not in self.rooms:
                return code

    def _may_open(self, client: Client, rule_set: str) -> None:
        if rule_set not in RULE_SET_NAMES:
            raise Refusal(ErrorCode.UNKNOWN_RULE_SET, f"choose one of {', '.join(RULE_SET_NAMES)}")
        if client.room is not None:
            raise Refusal(ErrorCode.IN_ANOTHER_ROOM, "leave your room first")

    async def _create_room(self, client: Client, message: CreateRoom) -> None:
        self._may_open(client, message.rule_set)
        deal = message.deal
        if deal.kind == "number":
            if deal.number is None or int(deal.number) > SEED_MAX:
                raise Refusal(ErrorCode.INVALID_MESSAGE, "a chosen deal needs a number 0..2^64-1")
            seed = int(deal.number)
        elif deal.kind == "daily":
            raise Refusal(ErrorCode.INVALID_MESSAGE, "the daily deal is played alone: send 'daily'")
        else:
            seed = secrets.randbits(64)
        await self._open(client, message.id, rule_set=message.rule_set, seed=seed,
                         deal_kind=deal.kind, seats_max=message.seats,
                         time_limit_s=message.time_limit_s,
                         countdown_s=self.settings.countdown_s)

    async def _daily(self, client: Client, message: PlayDaily, now: float) -> None:
        assert client.player_id is not None
        self._may_open(client, message.rule_set)
        day = datetime.fromtimestamp(now, UTC).date()
        seed = await store.daily_seed(self.sessions, message.rule_set, day)
        # One play per player per day, decided by the database however many requests race for
        # it; claimed here, not through the writer, which retries every failed write.
        if not await store.claim_daily(self.sessions, client.player_id, message.rule_set, day):
            raise Refusal(ErrorCode.ALREADY_PLAYED,
                          f"you have played today's {message.rule_set} deal")
        room = await self._open(client, message.id, rule_set=message.rule_set, seed=seed,
                                deal_kind="daily", seats_max=1, time_limit_s=None,
                                countdown_s=0, daily_day=day)
        self._deliver(room, room.race.start(client.player_id, now))

    async def _open(self, client: Client, request_id: str | None, **race_settings: Any) -> Room:
        """A new room with a new race, hosted by ``client``: stored, then entered."""
        assert client.player_id is not None
        if self.room_quota.take(client.player_id, self.clock()) > 0:
            raise Refusal(ErrorCode.TOO_MANY_ROOMS, "you have opened too many rooms: "
                          f"at most {self.settings.rooms_per_player_per_hour:g} an hour")
        race = Race(race_id=secrets.token_hex(8), code=self._new_code(), algorithm=DEAL_ALGORITHM,
                    host_id=client.player_id, host_name=client.name or "",
                    grace_s=self.settings.reconnect_grace_s, max_race_s=self.settings.max_race_s,
                    idle_s=self.settings.idle_s, **race_settings)
        await self.writer.run(lambda: store.create_race(
            self.sessions, race_id=race.race_id, code=race.code, rule_set=race.rule_set,
            deal_kind=race.deal_kind, seed=race.seed, algorithm=race.algorithm,
            rules=race.rules, host_id=race.host_id, seats_max=race.seats_max,
            time_limit_s=race.time_limit_s, daily_day=race.daily_day))
        room = self.rooms[race.code] = Room(race, opened=self.clock())
        self._enter(client, room)
        await self._reply_room(client, room, request_id)
        return room

    # -- racing ---------------------------------------------------------------------------------

    def _parse_move(self, message: MakeMove) -> Move:
        try:
            if isinstance(message.move, str):
                return Move.parse(message.move)
            if isinstance(message.move, ActionObject):
                return Move.act(message.move.action)
            return Move.from_json(message.move.model_dump(by_alias=True, exclude_none=True))
        except EngineError as error:
            raise Refusal(ErrorCode.INVALID_MOVE, str(error)) from None

    async def _move(self, client: Client, move: Move, request_id: str | None,
                    now: float) -> None:
        """Validate, store, then acknowledge: an acknowledged move is never lost. The
        connection's next request is read once the reply is out."""
        assert client.player_id is not None
        room = self._current(client)
        await self._deliver(room, room.race.move(client.player_id, move, now, request_id))

    async def _resume(self, client: Client, message: Resume, now: float) -> None:
        assert client.player_id is not None
        room = self._room(message.code)
        race = room.race
        if client.player_id not in race.racers:
            raise Refusal(ErrorCode.NOT_IN_ROOM, "you have no seat in that room")
        self._may_enter(client, room)
        room.members.discard(client)  # the reply hands this connection the room event below
        self._deliver(room, race.reconnect(client.player_id, now))
        self._enter(client, room)
        missed = None if message.last_seq == 0 else race.events_since(message.last_seq)
        full = missed is None
        if missed is None:
            missed = race.catch_up_state()
        await room.reply(client, Resynced(
            id=message.id, full=full, missed=[event.model_dump(mode="json") for event in missed]),
            *self._own_view(client, room, message.id))

    def _reply_room(self, client: Client, room: Room,
                    request_id: str | None) -> asyncio.Future[bool]:
        """The reply to create, join and spectate: the room now, and your own board if you are
        racing in it."""
        return room.reply(client, room.race.room_state(request_id),
                           *self._own_view(client, room, None))

    def _own_view(self, client: Client, room: Room, request_id: str | None) -> list[Message]:
        assert client.player_id is not None
        view = room.race.own_view(client.player_id, request_id)
        return [] if view is None else [view]

    # -- delivery and timers --------------------------------------------------------------------

    def _deliver(self, room: Room, out: list[Outgoing]) -> asyncio.Future[bool]:
        """Queue what the race said in the room's outbox, addressed to the room's members now,
        in the order the race said it; the future is done once it has all left.

        The moves the race accepted are queued for storage, and what it said waits until they
        are committed. A race's result is stored before it is announced: the result and what
        follows wait for that. Whatever is queued later waits behind all of it."""
        race = room.race
        for outgoing in out:
            if isinstance(outgoing.message, RaceStarted):
                self._record_start(race, outgoing.message)
        rows = room.unsaved_moves()
        after = self.writer.store_moves(rows) if rows else None
        frames: list[Addressed] = []
        for outgoing in out:
            if isinstance(outgoing.message, RaceFinished):
                room.outbox.add(frames, after)
                frames, after = [], self._store_result(room)
            frames.append(room.address(outgoing))
        self._arm(room)
        return room.outbox.add(frames, after)

    def _record_start(self, race: Race, started: RaceStarted) -> None:
        at = datetime.fromtimestamp(started.started_at_ms / 1000, UTC)
        racers = list(race.racers)
        self.writer.run(lambda: store.record_start(self.sessions, race.race_id, at, racers))

    def _store_result(self, room: Room) -> asyncio.Future[bool]:
        """Queue the race's result for storage; the room closes a while after it is stored."""
        race = room.race
        assert race.ended_at is not None
        ended = datetime.fromtimestamp(race.ended_at, UTC)
        ranking = race.ranking()
        stored = self.writer.run(lambda: store.record_results(self.sessions, race.race_id, ended,
                                                              ranking))
        stored.add_done_callback(lambda _: self._close_later(room))
        return stored

    def _close_later(self, room: Room) -> None:
        if not self.closing:
            asyncio.get_running_loop().call_later(self.settings.finished_room_s,
                                                  self._close_room, room)

    def _close_room(self, room: Room) -> None:
        """Forget a finished race's room: a server that runs for weeks keeps only live rooms."""
        self.forget_room(room)

    def forget_room(self, room: Room) -> None:
        """Close a room: its code is free, its members are in no room, its timer is off."""
        if self.rooms.get(room.race.code) is room:
            del self.rooms[room.race.code]
        for member in room.members:
            member.room = None
        room.members.clear()
        if room.timer is not None:
            room.timer.cancel()
            room.timer = None

    def close_connection(self, client: Client, code: int, reason: str) -> None:
        """Close a connection from outside its handler (``server.sweeper``)."""
        task = asyncio.create_task(client.ws.close(code, reason))
        self._closing_tasks.add(task)
        task.add_done_callback(self._closing_tasks.discard)

    def _arm(self, room: Room) -> None:
        """Set the room's timer for the race's next deadline (a move rarely changes it: then
        the timer is left as it is)."""
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
        self._deliver(room, room.race.tick(self.clock()))

    # -- sending --------------------------------------------------------------------------------

    def send(self, client: Client, message: Message) -> None:
        self._send(client, message)

    def _send(self, client: Client, message: Message) -> None:
        """Queue a frame on the connection at once (``broadcast`` writes synchronously), so
        frames leave in exactly the order the server decided them."""
        broadcast([client.ws], as_frame(message))

    def _error(self, client: Client, request_id: str | None, code: ErrorCode, text: str) -> None:
        self._send(client, ErrorMessage(id=request_id, code=code, message=text))
