"""The server's settings: one pydantic-settings object, read from ``PATIENCE_RACE_*`` variables.

Made once by the caller (``Settings()``) and passed to whatever needs it; nothing reads the
environment at import time.
"""

from __future__ import annotations

from pydantic import field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

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


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PATIENCE_RACE_")

    database_url: str = "sqlite+aiosqlite:///patience-race.sqlite3"
    """A SQLAlchemy URL; a plain ``postgresql://`` or ``sqlite:///`` one gets its async driver."""
    host: str = "127.0.0.1"
    port: int = 8765
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
    IPv6 /64); one more gets ``too_many_connections`` and is closed (1008)."""
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
    """Rooms (``create_room`` and ``daily``) one player may open an hour, bursts of as many;
    past it, ``too_many_rooms``."""
    shutdown_s: float = 3.0
    """How long a graceful shutdown (SIGTERM, Ctrl-C) may take in all, well inside a container's
    10 s stop timeout: storing what is queued, telling the clients, closing their connections.
    A connection not closed by then is dropped; a write the database has not taken by then is
    given up (it was not acknowledged: its client resumes without it)."""
    http_rate_per_s: float = 2.0
    """Requests under ``/api/`` a client address may make per second, on average (a token
    bucket per address: an IPv4 address, or an IPv6 /64); past it, 429 with Retry-After."""
    http_rate_burst: float = 20.0
    """How many it may make at once."""
    http_rate_clients: int = 10_000
    """Client addresses the HTTP rate limit keeps a bucket for, the least recently seen
    forgotten first (the table is bounded, whoever connects)."""
    http_cache_bytes: int = 64 * 1024 * 1024
    """The most the HTTP API keeps of finished races' records and replays (their JSON), the
    least recently asked for dropped first; a long replay is about 0.5 MB."""

    @property
    def safe_database_url(self) -> str:
        """The database URL with any password hidden, for logs and messages."""
        scheme, separator, rest = self.database_url.partition("://")
        credentials, at, location = rest.rpartition("@")
        if not at or ":" not in credentials:
            return self.database_url
        user = credentials.split(":", 1)[0]
        return f"{scheme}{separator}{user}:***@{location}"

    @field_validator("database_url")
    @classmethod
    def _with_async_driver(cls, url: str) -> str:
        return async_url(url)
