"""The bots of bench/load.py: racers on our server, and their counterparts on the echo servers.

Against our server a bot is a real racer: it says hello, a room is opened or joined (rooms of 4,
over the rule sets in turn), it gets ready, and it plays legal moves chosen by the engine's
greedy player from the ``legal_moves`` the server sent. When its game ends it leaves and takes
a seat in the next room, so the load stays steady. Against an echo server a bot sends frames of
the size of a typical ``move`` request and counts its own echo as the acknowledgement. Their ids
are the bot's number and a count (``"id":"17-42"``), so that on the room echo, where the other
members' frames are relayed to it as well (as our server sends it the other racers' progress),
a bot tells its own echo from theirs; it skips theirs unread, as it skips room events on ours.

The bots read the server's frames by their first bytes (``{"type":"move_ok","id":"7"``: pydantic
writes fields in declaration order, compactly) and parse JSON only for the frames whose content
they need, so that one process can drive thousands of connections.

With several workers, a bot connects to the public address (the kernel picks a worker), or in
hop mode to one worker's own address: bot ``i`` to worker ``i % workers``. Hop mode seats the
bots either with those of their own worker only (``local``: no request crosses Redis) or with
anyone (``mixed``: a joiner on another worker than the room's host sends every request through
Redis, a "hop"); each move's latency is recorded as a hop or not.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from websockets.asyncio.client import ClientConnection, connect

from bench.echo_server import MAX_SIZE
from bench.load_servers import SEATS, ServerProcess
from engine.moves import Move
from engine.players import GreedyPlayer

REPLY_TIMEOUT_S = 120.0
"""A bot waiting longer than this for a reply or for its room to fill gives up (an error) and
closes its connection. Setting up thousands of racers on SQLite can stall for tens of seconds."""
STOP_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class FleetPlan:
    """What the bots of a round do, whoever the server."""

    mode: str
    """``closed``, ``open`` or ``idle``."""
    rule_sets: tuple[str, ...]
    pace_s: float
    connect_concurrency: int
    echo_move: str
    hop: str | None = None
    """``local`` or ``mixed`` (module docstring), or None: the public address."""


@dataclass
class Stats:
    recording: bool = False
    acks: int = 0
    latencies: list[float] = field(default_factory=list)
    late: int = 0
    """Open loop: moves sent more than ``--pace`` late (the previous ack was slow)."""
    errors: Counter[str] = field(default_factory=Counter)
    set_up: int = 0
    """Bots connected and identified (idle mode: seated in a started race)."""
    failed: int = 0
    """Bots that stopped on an error."""
    games: int = 0
    """Games played to their end within the measured window."""
    hop_latencies: list[float] = field(default_factory=list)
    """Hop mode: the latencies of moves sent to a worker that is not the room's (they are in
    ``latencies`` too)."""

    def ack(self, latency: float, hop: bool = False) -> None:
        if self.recording:
            self.acks += 1
            self.latencies.append(latency)
            if hop:
                self.hop_latencies.append(latency)

    def error(self, what: str) -> None:
        self.errors[what] += 1
        if self.errors[what] <= 3:
            print(f"    bot error: {what}", file=sys.stderr)


parse_move = functools.lru_cache(maxsize=1 << 16)(Move.parse)


def frame_type(frame: bytes) -> bytes:
    """``move_ok`` from ``{"type":"move_ok",...``."""
    return frame[9 : frame.index(b'"', 9)]


class Refused(Exception):
    """The server answered with an error, or something other than what was expected."""


class Bot:
    """One connection and its requests: each gets a fresh id, and the reply is the frame
    that carries it (other frames are room events, skipped unread)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._ids = itertools.count(1)

    async def send(self, request: dict[str, object]) -> bytes:
        request_id = str(next(self._ids))
        await self.ws.send(json.dumps({**request, "id": request_id}, separators=(",", ":")))
        return f'","id":"{request_id}"'.encode()

    async def reply(self, marker: bytes, expected: bytes) -> bytes:
        async with asyncio.timeout(REPLY_TIMEOUT_S):
            while True:
                frame = await self.ws.recv(decode=False)
                kind = frame_type(frame)
                if frame.startswith(marker, 9 + len(kind)):
                    if kind != expected:
                        raise Refused(_error_code(frame))
                    return frame

    async def request(self, request: dict[str, object], expected: bytes) -> bytes:
        return await self.reply(await self.send(request), expected)

    async def hello(self, name: str) -> None:
        """As the project's clients do, without the progress events of its own moves; a server
        from before ``own_progress`` (a ``checkout`` of an older tree) refuses the field, and
        then gets the plain hello it knows."""
        try:
            await self.request({"type": "hello", "name": name, "own_progress": False}, b"welcome")
        except Refused as refused:
            if str(refused) != "invalid_message":
                raise
            await self.request({"type": "hello", "name": name}, b"welcome")


def _error_code(frame: bytes) -> str:
    message = json.loads(frame)
    return str(message.get("code") or message.get("type"))


@dataclass(eq=False)
class Seat:
    """A seat in a room being filled: the first bot to take one opens the room."""

    rule_set: str
    code: asyncio.Future[str]
    worker: int
    """The worker its host is connected to (hop mode), which holds the room."""
    taken: int = 1
    arrived: int = 0
    full: asyncio.Event = field(default_factory=asyncio.Event)

    def arrive(self) -> None:
        self.arrived += 1
        if self.arrived == SEATS:
            self.full.set()


class Matchmaker:
    """Bots that want a race take seats in turn: every fourth one opens a new room."""

    def __init__(self, rule_sets: Sequence[str]) -> None:
        self.rule_sets = itertools.cycle(rule_sets)
        self.open: dict[int, Seat] = {}
        """The room being filled, by queue (hop mode ``local``: one queue per worker)."""

    def seat(self, worker: int = 0, queue: int = 0) -> tuple[Seat, bool]:
        """A seat, and whether this bot (connected to ``worker``) hosts (opens) the room."""
        seat = self.open.get(queue)
        if seat is None:
            code: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            code.add_done_callback(_retrieved)
            self.open[queue] = Seat(next(self.rule_sets), code, worker)
            return self.open[queue], True
        seat.taken += 1
        if seat.taken == SEATS:
            del self.open[queue]
        return seat, False


def _retrieved(future: asyncio.Future[str]) -> None:
    """Mark a room's failure as seen, so that a room nobody joined does not warn about it."""
    if not future.cancelled():
        future.exception()


class Pace:
    """Open loop: the times a bot means to send its moves, ``pace`` apart on average."""

    def __init__(self, pace_s: float, rng: random.Random) -> None:
        self.pace_s, self.rng = pace_s, rng
        self.next_at = time.perf_counter() + rng.uniform(0, pace_s)

    async def wait(self, stats: Stats) -> None:
        now = time.perf_counter()
        if now < self.next_at:
            await asyncio.sleep(self.next_at - now)
        elif now - self.next_at > self.pace_s and stats.recording:
            stats.late += 1
        self.next_at = max(self.next_at, now) + self.pace_s * self.rng.uniform(0.5, 1.5)


async def race_ours(
    bot: Bot,
    matchmaker: Matchmaker,
    stats: Stats,
    rng: random.Random,
    pace: Pace | None,
    idle: bool,
    worker: int = 0,
    queue: int = 0,
) -> None:
    """Race on our server, game after game, until cancelled (idle: one race, no moves)."""
    while True:
        seat, host = matchmaker.seat(worker, queue)
        try:
            if host:
                room = await bot.request(
                    {"type": "create_room", "rule_set": seat.rule_set, "seats": SEATS}, b"room"
                )
                seat.code.set_result(json.loads(room)["code"])
            else:
                async with asyncio.timeout(REPLY_TIMEOUT_S):
                    code = await asyncio.shield(seat.code)
                await bot.request({"type": "join", "code": code}, b"room")
        except BaseException:
            if host and not seat.code.done():
                seat.code.set_exception(Refused("the host could not open the room"))
            raise
        seat.arrive()
        async with asyncio.timeout(REPLY_TIMEOUT_S):
            await seat.full.wait()
        view = await ready_and_view(bot)
        if idle:
            stats.set_up += 1
            return
        await play_game(bot, view, stats, rng, pace, hop=seat.worker != worker)
        if stats.recording:
            stats.games += 1
        await bot.request({"type": "leave"}, b"ok")


async def ready_and_view(bot: Bot) -> dict[str, object]:
    """Send ``ready`` and read until both its ``ok`` and the race's opening ``view`` came (the
    last bot to get ready gets the view first)."""
    marker = await bot.send({"type": "ready"})
    view: bytes | None = None
    acknowledged = False
    async with asyncio.timeout(REPLY_TIMEOUT_S):
        while view is None or not acknowledged:
            frame = await bot.ws.recv(decode=False)
            kind = frame_type(frame)
            if kind == b"view":
                view = frame
            elif frame.startswith(marker, 9 + len(kind)):
                if kind != b"ok":
                    raise Refused(_error_code(frame))
                acknowledged = True
    state: dict[str, object] = json.loads(view)["view"]
    return state


async def play_game(
    bot: Bot,
    state: dict[str, object],
    stats: Stats,
    rng: random.Random,
    pace: Pace | None,
    hop: bool = False,
) -> None:
    player = GreedyPlayer(rng)
    legal, home, status = state["legal_moves"], state["on_foundations"], state["status"]
    while status == "in_progress" and legal:
        assert isinstance(legal, list) and isinstance(home, int)
        move = str(player.choose([parse_move(text) for text in legal], home))
        if pace is not None:
            await pace.wait(stats)
        sent = time.perf_counter()
        marker = await bot.send({"type": "move", "move": move})
        try:
            frame = await bot.reply(marker, b"move_ok")
        except Refused as refused:
            stats.error(f"move refused: {refused}")
            return
        stats.ack(time.perf_counter() - sent, hop)
        ack = json.loads(frame)
        legal, home, status = ack["legal_moves"], ack["on_foundations"], ack["status"]


async def echo_loop(
    ws: ClientConnection, index: int, move: str, stats: Stats, pace: Pace | None, idle: bool
) -> None:
    """Against an echo server: move-sized frames; the bot's own echo is the acknowledgement
    (the room echo's relays of the other members' frames are skipped)."""
    for count in itertools.count(1):
        frame = echo_frame(move, index, count)
        own_echo = frame.encode()
        if pace is not None:
            await pace.wait(stats)
        sent = time.perf_counter()
        await ws.send(frame)
        async with asyncio.timeout(REPLY_TIMEOUT_S):
            while await ws.recv(decode=False) != own_echo:
                pass
        stats.ack(time.perf_counter() - sent)
        if idle:
            stats.set_up += 1
            return


@dataclass
class Fleet:
    """The bots of one round, and their connections (to be cut at the end of the round)."""

    server: ServerProcess
    plan: FleetPlan
    stats: Stats = field(default_factory=Stats)
    matchmaker: Matchmaker | None = None
    connections: list[ClientConnection] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    gate: asyncio.Semaphore | None = None

    def launch(self, count: int) -> None:
        """Start ``count`` more bots; connections and hellos are limited in number at once."""
        if self.gate is None:
            self.gate = asyncio.Semaphore(self.plan.connect_concurrency)
            self.matchmaker = Matchmaker(self.plan.rule_sets)
        first = len(self.tasks)
        self.tasks += [
            asyncio.create_task(self._bot(index)) for index in range(first, first + count)
        ]

    async def _bot(self, index: int) -> None:
        assert self.gate is not None and self.matchmaker is not None
        rng = random.Random(index)
        idle = self.plan.mode == "idle"
        pace = Pace(self.plan.pace_s, rng) if self.plan.mode == "open" else None
        urls = self.server.worker_urls if self.plan.hop else []
        worker = index % len(urls) if urls else 0
        queue = worker if self.plan.hop == "local" else 0
        ws: ClientConnection | None = None
        try:
            async with self.gate:
                ws = await connect(
                    urls[worker] if urls else self.server.url,
                    compression=None,
                    max_size=MAX_SIZE,
                    ping_interval=None,
                    open_timeout=REPLY_TIMEOUT_S,
                )
                self.connections.append(ws)
                if self.server.kind == "ours":
                    bot = Bot(ws)
                    await bot.hello(f"bot{index}")
            if self.server.kind == "echo":
                if not idle:
                    self.stats.set_up += 1
                await echo_loop(ws, index, self.plan.echo_move, self.stats, pace, idle)
                return
            if not idle:
                self.stats.set_up += 1
            await race_ours(bot, self.matchmaker, self.stats, rng, pace, idle, worker, queue)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - a failed bot is counted and reported
            self.stats.failed += 1
            self.stats.error(f"{type(error).__name__}: {error}")
            if ws is not None:
                ws.transport.abort()

    async def all_set_up(self, count: int, label: str) -> float:
        """Wait until ``count`` bots are set up (bounded); return the seconds it took."""
        started = time.perf_counter()
        deadline = started + max(60.0, count / 50)
        reported = started
        while self.stats.set_up + self.stats.failed < count and time.perf_counter() < deadline:
            await asyncio.sleep(0.1)
            if time.perf_counter() - reported > 5:
                reported = time.perf_counter()
                print(f"    {label}: {self.stats.set_up}/{count} set up", file=sys.stderr)
        if self.stats.set_up < count:
            print(f"    {label}: only {self.stats.set_up}/{count} set up", file=sys.stderr)
        return time.perf_counter() - started

    async def cancel(self) -> None:
        """Stop the bots; their connections stay open until the server closes them."""
        for task in self.tasks:
            task.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                asyncio.gather(*self.tasks, return_exceptions=True), STOP_TIMEOUT_S
            )

    def abort(self) -> None:
        """Drop whatever connection is still open."""
        for ws in self.connections:
            ws.transport.abort()


def echo_frame(move: str, bot: int, count: int) -> str:
    """A bot's ``count``-th frame to an echo server: a move request whose id names the bot."""
    return json.dumps({"type": "move", "move": move, "id": f"{bot}-{count}"}, separators=(",", ":"))
