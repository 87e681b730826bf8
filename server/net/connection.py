"""Where a connection is handled: one WebSocket, from its first frame to its close.

The ``Gateway`` reads each frame, refuses what breaks the transport's limits
(``server.core.budgets``:
size, rate, the allowance of errors), parses it against the wire models (``wire.protocol``),
answers ``hello``, leaderboards and race records itself, and hands every room request to the
bus (``server.cluster.bus``), which takes it to the room's host wherever that room lives. Refusals
become error messages here.

A connection's requests are handled one at a time: the next is read once the reply to the last
is out (so a move is acknowledged, and its reply sent, before the same player's next move).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime

from pydantic import ValidationError
from websockets.asyncio.server import ServerConnection, broadcast
from websockets.exceptions import ConnectionClosed

from engine.registry import RULE_SET_NAMES
from server.cluster.bus import Bus
from server.cluster.quick import already_queued
from server.cluster.rank_cache import RedisRanks
from server.core.budgets import (
    COUNTED_REFUSALS,
    UNKNOWN_TYPE,
    WATCHING,
    AddressBook,
    Budget,
    address_of,
    frame_problem,
    invalid_text,
    is_known_type,
    request_id,
)
from server.core.errors import RaceError, Refusal
from server.core.said import as_frame
from server.net.boards import leaderboard
from server.rooms.room import ROOM_REQUESTS, Client, write_for_client
from server.settings import Settings
from server.speedups import json_loads
from server.storage.engine import Sessions
from server.storage.players import create_player, mark_bot, player_by_token
from server.storage.races import race_record
from server.storage.writer import Writer
from wire.protocol import (
    CLIENT_MESSAGE,
    ClientMessage,
    ErrorCode,
    ErrorMessage,
    GetLeaderboard,
    GetRace,
    Hello,
    LeaveQueue,
    Message,
    QuickRace,
    RaceRecord,
    ShuttingDown,
    Welcome,
)

log = logging.getLogger("patience_race.server")

FLOOD_CLOSE_CODE = 1008  # policy violation


class Gateway:
    """The connections of this process."""

    def __init__(
        self,
        settings: Settings,
        sessions: Sessions,
        writer: Writer,
        bus: Bus,
        clock: Callable[[], float],
    ) -> None:
        self.settings, self.sessions, self.writer = settings, sessions, writer
        self.rank_cache: RedisRanks | None = None
        """Set by the service when Redis is configured (``server.cluster.rank_cache``)."""
        self.bus, self.clock = bus, clock
        self.clients: dict[str, Client] = {}
        """Open connections, by ``connection_id``."""
        self.loads = json_loads(settings.json_library)
        self.addresses = AddressBook(
            settings.connections_per_address,
            settings.new_players_per_address_per_min,
            settings.http_rate_clients,
            settings.http_rate_per_s,
            settings.http_rate_burst,
        )
        self.closing = False
        self._closing_tasks: set[asyncio.Task[None]] = set()

    async def handle(self, ws: ServerConnection) -> None:
        settings, now = self.settings, self.clock()
        client = Client(
            ws,
            Budget(
                settings.rate_per_s,
                settings.rate_burst,
                settings.flood_close_after,
                settings.flood_forgive_per_s,
                stamp=now,
            ),
            self._address(ws),
            since=now,
        )
        if self.closing:
            await self.close([client], self.settings.shutdown_s)
            return
        if not self.addresses.connect(client.address):
            self.error(
                client,
                None,
                ErrorCode.TOO_MANY_CONNECTIONS,
                f"at most {settings.connections_per_address} connections from one address",
            )
            await ws.close(FLOOD_CLOSE_CODE, "too many connections")
            return
        self.clients[client.connection_id] = client
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
            del self.clients[client.connection_id]
            self.bus.left(client)

    def _address(self, ws: ServerConnection) -> str:
        forwarded = ws.request.headers.get("X-Forwarded-For") if ws.request else None
        return address_of(ws.remote_address, forwarded, self.settings.trusted_proxies)

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
        understood against its allowance of errors (``server.core.budgets.Budget``)."""
        now = client.active = self.clock()
        problem = frame_problem(frame, self.settings.max_frame_bytes)
        if problem is not None:
            return self._unread(client, problem, now)
        try:
            data = self.loads(frame)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return self._unread(client, (ErrorCode.BAD_JSON, "that frame is not JSON"), now)
        except (RecursionError, ValueError):  # JSON, but more than the parser takes; both fit
            # in a frame: nesting a thousand deep, or a number longer than int() reads (4,300
            # digits, Python's guard against quadratic conversion)
            return self._unread(
                client,
                (
                    ErrorCode.BAD_JSON,
                    "that frame is nested too deeply, or holds a number too long, to read",
                ),
                now,
            )
        echoed = request_id(data)
        if not client.budget.allow(now):
            return self._refuse_rate(client, echoed, now)
        try:
            message = CLIENT_MESSAGE.validate_python(data)
        except ValidationError as invalid:
            if not is_known_type(data):
                return self._refuse(client, echoed, ErrorCode.UNKNOWN_TYPE, UNKNOWN_TYPE, now)
            return self._refuse(
                client, echoed, ErrorCode.INVALID_MESSAGE, invalid_text(invalid), now
            )
        try:
            await self._dispatch(client, message)
        except (Refusal, RaceError) as refused:
            if refused.code in COUNTED_REFUSALS and not client.budget.error(now):
                return False
            self.error(client, echoed, refused.code, refused.message)
        return True

    def _refuse(
        self, client: Client, request_id: str | None, code: ErrorCode, text: str, now: float
    ) -> bool:
        """Refuse a frame not understood: it counts against the allowance of errors (and,
        read or not, against the rate); False once the allowance is spent."""
        if not client.budget.error(now):
            return False
        self.error(client, request_id, code, text)
        return True

    def _unread(self, client: Client, problem: tuple[ErrorCode, str], now: float) -> bool:
        """A frame refused before it is read counts against the rate too."""
        if not client.budget.allow(now):
            return self._refuse_rate(client, None, now)
        return self._refuse(client, None, *problem, now)

    def _refuse_rate(self, client: Client, request_id: str | None, now: float) -> bool:
        if not client.budget.error(now):
            return False
        self.error(
            client,
            request_id,
            ErrorCode.RATE_LIMITED,
            f"slow down: at most {self.settings.rate_per_s:g} messages a second",
        )
        return True

    async def _dispatch(self, client: Client, message: ClientMessage) -> None:
        if isinstance(message, Hello):
            await self._hello(client, message)
            return
        if client.player_id is None:
            raise Refusal(ErrorCode.NOT_IDENTIFIED, "say hello first, with a name or your token")
        if client.anonymous and not isinstance(message, WATCHING):
            raise Refusal(
                ErrorCode.ANONYMOUS,
                "you are watching without a name: say hello with a name (or your token) to race",
            )
        if isinstance(message, ROOM_REQUESTS):
            if self.bus.seeking(client):
                raise already_queued()
            await self.bus.request(client, message)
            return
        if isinstance(message, QuickRace):
            await self.bus.seek(client, message)
            return
        if isinstance(message, LeaveQueue):
            await self.bus.leave_queue(client, message)
            return
        self._may_read(client.address)
        if isinstance(message, GetLeaderboard):
            if message.rule_set not in RULE_SET_NAMES:  # as HTTP's 404, not an empty board
                raise Refusal(
                    ErrorCode.UNKNOWN_RULE_SET, f"choose one of {', '.join(RULE_SET_NAMES)}"
                )
            me = None if client.anonymous else client.player_id
            board = await leaderboard(
                self.sessions,
                message,
                me,
                datetime.fromtimestamp(self.clock(), UTC),
                self.rank_cache,
            )
            self.send(client, board)
        elif isinstance(message, GetRace):
            record = await race_record(
                self.sessions, message.race_id, datetime.fromtimestamp(self.clock(), UTC)
            )
            if record is None:
                raise Refusal(ErrorCode.NOT_FOUND, f"no finished race {message.race_id!r}")
            self.send(client, RaceRecord(id=message.id, record=record))

    def read_wait(self, address: str) -> float:
        """Count a read of ``address`` (``AddressBook.read``, the HTTP API's allowance too):
        0.0 if it is allowed, else the seconds until the next one would be."""
        return self.addresses.read(address, self.clock())

    def _may_read(self, address: str) -> None:
        """Refuse a board or a race record past the address's allowance of reads."""
        if self.read_wait(address) > 0:
            settings = self.settings
            raise Refusal(
                ErrorCode.RATE_LIMITED,
                "slow down: at most "
                f"{settings.http_rate_per_s:g} boards and race records a second from "
                f"one address (over HTTP and WebSocket together), "
                f"{settings.http_rate_burst:g} at once",
            )

    async def _hello(self, client: Client, message: Hello) -> None:
        """Who the connection is from now on. Not someone else while in a room: the room knows
        its members by who they were when they came in (an anonymous spectator who gives a
        name, say, leaves the room first).

        A hello with ``bot`` makes its player a bot account, new or known by the token, and
        nothing makes a bot account a person's again: the connection is a bot's if its
        account is, whatever this hello says. A seat taken before keeps the mark it was taken
        with; the race's start reads the account's (``server.storage.races.record_start``)."""
        if message.token is not None:
            known = await player_by_token(self.sessions, message.token)
            if known is None:
                raise Refusal(ErrorCode.BAD_TOKEN, "that token belongs to no player")
            self._same_in_room(client, known.id)
            player, token = known, None
            if message.bot and not known.bot:
                await write_for_client(
                    self.writer,
                    lambda: mark_bot(self.sessions, known.id),
                    self.settings.write_wait_s,
                )
                known.bot = True
        elif message.name is not None:
            self._same_in_room(client, None)
            if not self.addresses.new_player(client.address, self.clock()):
                raise Refusal(
                    ErrorCode.TOO_MANY_PLAYERS,
                    "too many new players from your address: come back with your token, or later",
                )
            name = message.name.strip()
            player, token = await write_for_client(
                self.writer,
                lambda: create_player(self.sessions, name, message.bot),
                self.settings.write_wait_s,
            )
        else:
            self._same_in_room(client, client.player_id if client.anonymous else None)
            self._anonymous(client, message)
            return
        client.player_id, client.name, client.anonymous = player.id, player.name, False
        client.own_progress, client.bot = message.own_progress, player.bot
        self.send(
            client,
            Welcome(
                id=message.id, player_id=player.id, name=player.name, token=token, bot=player.bot
            ),
        )

    def _same_in_room(self, client: Client, player_id: str | None) -> None:
        """Refuse a hello that would make a connection in a room, or waiting in the quick race
        queue, someone else (``player_id`` None: a new player)."""
        if player_id is not None and player_id == client.player_id:
            return
        if client.room is not None:
            raise Refusal(
                ErrorCode.IN_ANOTHER_ROOM, "leave your room first: you came in as someone else"
            )
        if self.bus.seeking(client):
            raise Refusal(
                ErrorCode.ALREADY_QUEUED, "leave the queue first: you are waiting as someone else"
            )

    def _anonymous(self, client: Client, message: Hello) -> None:
        """A hello with neither name nor token: no player is made or named. The connection
        gets an id of its own (never a player's: those have no ``~``), as a spectator in a
        room."""
        client.player_id, client.name, client.anonymous = f"~{client.connection_id}", "", True
        client.own_progress, client.bot = message.own_progress, False
        self.send(client, Welcome(id=message.id, player_id="", name="", anonymous=True))

    async def close(self, clients: list[Client], within: float) -> None:
        """Tell them the server is stopping and close their connections, all at once. Those not
        closed ``within`` seconds are dropped: a client that never answers the close would
        otherwise hold its connection for websockets' close timeout (10 s)."""
        notice = ShuttingDown(
            message="the server is restarting; every accepted move is saved: reconnect and resume"
        )
        closing = {}
        for client in clients:
            self.send(client, notice)
            closing[asyncio.create_task(client.ws.close(1001, "server shutting down"))] = client
        if not closing:
            return
        _, late = await asyncio.wait(closing, timeout=within)
        for task in late:
            closing[task].ws.transport.abort()
        if late:
            await asyncio.wait(late)

    def close_connection(self, client: Client, code: int, reason: str) -> None:
        """Close a connection from outside its handler (``server.sweeper``)."""
        task = asyncio.create_task(client.ws.close(code, reason))
        self._closing_tasks.add(task)
        task.add_done_callback(self._closing_tasks.discard)

    def send(self, client: Client, message: Message) -> None:
        """Queue a frame on the connection at once (``broadcast`` writes synchronously), so
        frames leave in exactly the order the server decided them."""
        broadcast([client.ws], as_frame(message))

    def error(self, client: Client, request_id: str | None, code: ErrorCode, text: str) -> None:
        self.send(client, ErrorMessage(id=request_id, code=code, message=text))
