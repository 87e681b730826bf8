"""The server's settings: one pydantic-settings object, read from ``PATIENCE_RACE_*`` variables.

Made once by the caller (``Settings()``) and passed to whatever needs it; nothing reads the
environment at import time.
"""

from __future__ import annotations

import os
from collections.abc import Collection

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from engine.registry import RULE_SET_NAMES
from engine.solver.compiled import RULE_SETS as COMPILED_RULE_SETS
from server.speedups import EventLoop, JsonLibrary

ASYNC_DRIVERS = {
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
    "sqlite": "sqlite+aiosqlite",
}
"""Plain URL schemes and the asyncio driver the server uses for each."""


def async_url(url: str) -> str:
    """``postgresql://...`` becomes ``postgresql+asyncpg://...`` and ``sqlite:///...`` becomes
    ``sqlite+aiosqlite:///...``; a URL that already names a driver is left alone."""
    scheme, separator, rest = url.partition("://")
    if not separator or scheme not in ASYNC_DRIVERS:
        return url
    return f"{ASYNC_DRIVERS[scheme]}://{rest}"


SLOW_TO_POOL = frozenset({"four-corners"})
"""Rule sets the pool leaves out where the Python search answers them: it found a win in 2
Four Corners deals of 408 at 2 s (docs/winnability.md), so filling their pool would keep a core
busy for hours."""


def pooled_rule_sets(compiled: Collection[str]) -> tuple[str, ...]:
    """The rule sets the winnable pool is filled for by default, given those the compiled core
    searches (``engine.solver.compiled.RULE_SETS``): every one, but those of ``SLOW_TO_POOL``
    that the Python search would have to answer."""
    return tuple(name for name in RULE_SET_NAMES if name not in SLOW_TO_POOL or name in compiled)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PATIENCE_RACE_")

    database_url: str = "sqlite+aiosqlite:///patience-race.sqlite3"
    """A SQLAlchemy URL; a plain ``postgresql://`` or ``sqlite:///`` one gets its async driver."""
    host: str = "127.0.0.1"
    port: int = 8765
    redis_url: str | None = None
    """Redis, for rooms across worker processes and machines (``server.cluster.redis_bus``); without
    it the server is one process holding every room, and needs nothing else installed."""
    redis_prefix: str = "patience-race:"
    """What every Redis key and channel of this service begins with."""
    workers: int | None = None
    """Worker processes behind the one public port (``server.cluster.workers``); by default as many
    as the machine has cores when ``redis_url`` is set, else 1 (and more than 1 needs it)."""
    advertise_host: str | None = None
    """The host name clients reach this machine by, in ``reconnect_to`` (default: ``host``)."""
    worker_port: int | None = None
    """Where worker N also listens on its own, on ``host``, as ``worker_port + N`` (0: any free
    port); its address there is the ``reconnect_to`` for rooms it holds. By default the ports
    after the public one: ``port + 1 + N`` (8766, 8767... for 8765), or any free port when
    ``port`` is 0 (tests)."""
    max_frame_bytes: int = 16384
    reconnect_grace_s: float = 60.0
    max_race_s: float = 2 * 3600.0
    """The longest a race runs, time limit or none (a longer time limit ends here too): then
    everyone still racing is finished as ``timed_out``."""
    idle_s: float = 600.0
    """How long a racer may make no move (from the start, or their last move) before the race
    finishes them as ``abandoned``, connected or not; the others race on."""
    finished_room_s: float = 300.0
    """How long a finished race's room stays open (to resume into, or to spectate its result)
    after the result is stored; then it is closed and the race is at ``/api/races/ID``."""
    countdown_s: float = 3.0
    rate_per_s: float = 50.0
    """Messages a connection may send per second, on average (a token bucket)."""
    rate_burst: float = 100.0
    """How many it may send at once."""
    flood_close_after: int = 200
    """A connection's allowance of errors: every message refused past the rate or not
    understood (bad JSON, unknown type, invalid fields, too large, binary) takes one, and
    ``flood_forgive_per_s`` come back a second; a connection that runs it out is closed
    (1008). Sending 30 times the rate is closed within a second; a client that slips now and
    then never is."""
    flood_forgive_per_s: float = 10.0
    """How fast the allowance of errors comes back."""
    connections_per_address: int = 64
    """WebSocket connections open at once from one client address (an IPv4 address or an
    IPv6 /64); one more is refused at the handshake (HTTP 429; one opened at the same moment
    as another gets ``too_many_connections`` and is closed, 1008)."""
    new_players_per_address_per_min: float = 10.0
    """New players (``hello`` with a name) one address may make a minute, bursts of as many;
    past it, ``too_many_players`` (a returning player's token is always welcome)."""
    hello_deadline_s: float = 10.0
    """A connection that has not said hello by then is closed (1008)."""
    idle_timeout_s: float = 900.0
    """A connection that sends nothing for this long, while not in a room whose race is
    counting down or on, is closed (1000)."""
    lobby_empty_s: float = 300.0
    """A lobby nobody has been connected to for this long is closed (its stored row goes)."""
    lobby_max_s: float = 3600.0
    """A lobby not started this long after it was opened is closed; its members get
    ``room_closed``."""
    rooms_per_player_per_hour: float = 30.0
    """Rooms (``create_room``, ``daily``, and ``rematch``: a rematch's race is a room's) one
    player may open an hour, bursts of as many; past it, ``too_many_rooms``."""
    shutdown_s: float = 3.0
    """How long a graceful shutdown (SIGTERM, Ctrl-C) may take in all, well inside a container's
    10 s stop timeout: storing what is queued, telling the clients, closing their connections.
    A connection not closed by then is dropped; a write the database has not taken by then is
    given up (it was not acknowledged: its client resumes without it)."""
    trusted_proxies: frozenset[str] = frozenset()
    """Addresses of reverse proxies (load balancers) in front of the server, e.g.
    ``["10.0.0.5"]``: a connection from one of them counts against the client address its
    ``X-Forwarded-For`` names, not against the proxy. Empty: every peer is the client."""
    commit_window_ms: float = 3.0
    """How long a database write that finds the writer idle waits for others to commit with
    it (``server.storage.writer``), in milliseconds; 0 commits at once. At light load this groups
    the moves of many racers into one commit, for at most this much more acknowledgement latency;
    under heavy load writes queue behind the commit under way and never wait for it."""
    event_loop: EventLoop = "asyncio"
    """``uvloop`` runs the server (each worker) on uvloop's event loop, installed with the
    ``fast`` extra (``server.speedups``); ``asyncio``, the default, needs nothing else."""
    json_library: JsonLibrary = "json"
    """``orjson`` parses incoming frames and the Redis bus's messages with orjson (the ``fast``
    extra); ``json``, the default, is the standard library's."""
    commit_batch_max: int = 1000
    """The window ends early once this many moves are queued."""
    write_wait_s: float = 10.0
    """How long a request that writes (``hello`` with a name, ``create_room``, ``daily``) waits
    for the database to begin its write, behind the writes queued before it and retrying its
    own failures; then it is refused with ``unavailable`` (an attempt under way is let finish,
    within the driver's limits: SQLite's 5 s busy timeout, PostgreSQL's 10 s statement
    timeout)."""
    http_rate_per_s: float = 2.0
    """Requests under ``/api/`` a client address may make per second, on average (a token
    bucket per address: an IPv4 address, or an IPv6 /64); past it, 429 with Retry-After. The
    WebSocket's ``leaderboard`` and ``race_record`` take from the same bucket (past it,
    ``rate_limited``)."""
    http_rate_burst: float = 20.0
    """How many it may make at once."""
    http_rate_clients: int = 10_000
    """Client addresses the HTTP rate limit keeps a bucket for, the least recently seen
    forgotten first (the table is bounded, whoever connects)."""
    http_cache_bytes: int = 64 * 1024 * 1024
    """The most the HTTP API keeps of finished races' records and replays (their JSON), the
    least recently asked for dropped first; a long replay is about 0.5 MB."""
    solver_processes: int = 1
    """Processes that search hints (``server.rooms.solver``), started and warmed up when the server
    starts: hints never run on the event loop, nor wait behind a verdict's search."""
    hint_budget_s: float | None = None
    """How long a hint's search (and a live verdict's) may take; then the answer is
    "unknown". None: by the core that searches the rule set (``engine.hints.hint_budget``),
    0.1 s where the compiled core does (a hint within 200 ms), 1.5 s where the Python search
    does."""
    hint_queue_max: int = 4
    """Hints searched or waiting at once in this process; past it, ``unavailable``."""
    verdict_budget_s: float = 10.0
    """How long the solver searches a race's deal after the race (for the race record); 0: it
    does not."""
    verdict_queue_max: int = 8
    """Deals searched or waiting at once after their races; past it, a deal is not searched."""
    fair_play_s: float = 20.0
    """How long the solver may spend on each racer's fair-play check after a rated race (the
    solver agreement's searches, ``server.core.fairplay``), in the verdicts' processes; 0: rated
    races are not checked."""
    operator_token: SecretStr | None = None
    """The operator's token for the fair-play API (``/api/fairplay``, ``Authorization: Bearer
    TOKEN``); unset, that API answers 404 to everyone."""
    winnable_pool_target: int = 5
    """Deals proved winnable kept ready per rule set for rooms that ask for one
    (``server.rooms.pool``); 0: no pool is filled."""
    winnable_pool_budget_s: float = 2.0
    """How long the pool's filler searches each random deal. Short searches cost the least CPU
    per deal kept, as most wins are found early: the compiled core won 9 Four Corners deals
    of 100 at 1 s and 20 at 10 s (issue 24), 11 s of search per win against 50; at 2 s the
    pool's 5 Four Corners deals take a background core a minute or two."""
    winnable_pool_wait_s: float = 3.0
    """How long a room asking for a winnable deal waits for one when none is ready, before it
    falls back to an unproved secret deal."""
    winnable_pool_rule_sets: tuple[str, ...] = Field(
        default_factory=lambda: pooled_rule_sets(COMPILED_RULE_SETS)
    )
    """The rule sets the pool is filled for: by default all seven where the compiled core
    searches Four Corners, else all but Four Corners (``pooled_rule_sets``); a room of a rule
    set left out asking for a winnable deal falls back at once."""
    daily_winnable: bool = True
    """The daily deal is drawn from the winnable pool (``server.rooms.pool``) when one is ready."""
    hints_per_player_per_min: float = 12.0
    """Hints a player may ask for a minute (bursts of a quarter of it); past it,
    ``rate_limited``."""
    # What one address or player may take of what everyone shares (issue 23: the public
    # list, a room's spectators).
    public_lobbies_per_player: int = 2
    """Public lobbies (``create_room`` with ``public``, not started yet) one player may host
    at once; past it, ``too_many_lobbies`` (a private room is always allowed)."""
    public_lobbies_per_address: int = 5
    """Public lobbies the players of one address (an IPv4 address or an IPv6 /64) may host at
    once; past it, ``too_many_lobbies``. The public list also shows the lobbies of each
    address in turn (``server.cluster.listing``), so one address cannot fill it."""
    spectators_per_room: int = 100
    """Spectators one room may have at once (racers aside); past it,
    ``too_many_spectators``."""

    # -- the quick race (issue 27) ---------------------------------------------------------------
    quick_countdown_s: float = 5.0
    """A quick race's countdown, begun once every player matched has joined its room."""
    quick_join_s: float = 10.0
    """How long a quick room waits for the players matched into it: then its countdown begins
    with those who came."""
    quick_queue_max: int = 10000
    """Players waiting in the quick race queues at once, all together; past it,
    ``queue_full``."""
    practice_bots: int = 16
    """Practice bots racing at once for players who asked for one (``quick_race.bot_after_s``);
    past it, those players wait on in the queue."""

    # -- what one person can gain from ratings and the winnable pool (issue 23, items 1 and 4) --
    rating_provisional_s: float = 24 * 3600.0
    """An identity younger than this at a race's start is provisional there: racers who are
    all provisional race unrated against each other (``server.core.ratings.roles``)."""
    rated_races_per_player_per_hour: int = 20
    """Rated races one player may start an hour, in each rule set together; past it, the race
    runs unrated for them."""
    rating_board_min_races: int = 10
    """Rated races a player needs to be on the rated board (``GET /api/ratings/...``); fewer,
    and their rating is provisional and not shown there."""
    winnable_rooms_per_player_per_hour: float = 4.0
    """Rooms asking for a winnable deal (``create_room`` and ``rematch`` of one) one player may
    open an hour, bursts of as many; past it, ``too_many_winnable``. Below the pool's target,
    so that one identity cannot empty it."""

    # -- the solver's work per address (issue 23) ----------------------------------------------
    verdict_processes: int = 1
    """Processes that search deals after their races and make the fair-play checks
    (``server.rooms.solver``), apart from the hints' and at the lowest priority; none when
    ``verdict_budget_s`` and ``fair_play_s`` are 0."""
    hints_per_address_per_min: float = 24.0
    """Hints the players of one client address may ask for a minute, all together (bursts of
    a quarter of it); past it, ``rate_limited``."""
    hints_at_once_per_address: int = 2
    """Hints from one client address searched or waiting at once, live verdicts' searches
    included; past it, ``rate_limited`` (a live verdict: ``unknown``)."""
    live_verdicts_per_player_per_min: float = 60.0
    """Searches for a player's live verdicts a minute (bursts of a quarter of it; a verdict
    that earlier searches settle costs none); past it, the verdict is ``unknown``."""
    live_verdicts_per_address_per_min: float = 120.0
    """The same for the players of one client address, all together."""
    verdicts_at_once_per_address: int = 2
    """Deals searched or waiting at once after races with a racer from one client address;
    past it, the deal is not searched."""

    @property
    def worker_count(self) -> int:
        if self.workers is not None:
            return self.workers
        return (os.cpu_count() or 1) if self.redis_url else 1

    def worker_own_port(self, index: int) -> int:
        """The port worker ``index`` also listens on (0: any free port), ``worker_port``."""
        if self.worker_port is not None:
            return self.worker_port + index if self.worker_port else 0
        return self.port + 1 + index if self.port else 0

    @property
    def safe_database_url(self) -> str:
        """The database URL with any password hidden, for logs and messages."""
        scheme, separator, rest = self.database_url.partition("://")
        credentials, at, location = rest.rpartition("@")
        if not at or ":" not in credentials:
            return self.database_url
        user = credentials.split(":", 1)[0]
        return f"{scheme}{separator}{user}:***@{location}"

    @field_validator("workers")
    @classmethod
    def _at_least_one(cls, workers: int | None) -> int | None:
        if workers is not None and workers < 1:
            raise ValueError("at least one worker")
        return workers

    @field_validator("database_url")
    @classmethod
    def _with_async_driver(cls, url: str) -> str:
        return async_url(url)
