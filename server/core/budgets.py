"""What one connection, one address and one player may cost the server: pure, no I/O.

The shell (``server.service``) asks these before acting on anything, and passes the time in, so
each is tested with plain numbers and each costs microseconds, whatever a client sends:

- ``frame_problem``: a frame is refused unread when it is binary or over the size limit in
  bytes (UTF-8, as the protocol counts it, not characters).
- ``Budget``: a connection's messages a second (a token bucket), and its allowance of errors:
  every message refused (past the rate) or not understood (bad JSON, unknown type, invalid
  fields, too large, binary), and every request refused with one of ``COUNTED_REFUSALS``,
  takes one from it, and it comes back slowly. A connection that runs it out is closed
  (1008): a flood, even one that earns a token now and then.
- ``AddressBook``: connections per client address, new players (``hello`` with a name)
  per address a minute, and the reads of boards and race records per address a second (one
  allowance for the HTTP API and the WebSocket's ``leaderboard`` and ``race_record``).
- ``invalid_text``: the error for a message pydantic refused, in words for the fields a person
  fills in, built from its error locations without rebuilding any schema.
- ``request_id``: the id a reply echoes, only if it can be sent back.
- ``WATCHING``: what a connection without an identity (a ``hello`` with neither name nor
  token) may ask.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from server.core.limits import AddressLimiter, client_host, client_key
from wire.protocol import (
    CLIENT_MESSAGE,
    ErrorCode,
    GetLeaderboard,
    GetRace,
    LeaveRoom,
    Resume,
    Spectate,
)

CLIENT_KINDS: tuple[str, ...] = tuple(CLIENT_MESSAGE.json_schema()["discriminator"]["mapping"])
"""The client message types, read once from the schema (reading it costs milliseconds)."""
UNKNOWN_TYPE = f"type must be one of: {', '.join(CLIENT_KINDS)}"
UTF8_MOST_BYTES = 4
WATCHING = (Spectate, LeaveRoom, Resume, GetLeaderboard, GetRace)
"""What an anonymous connection may ask: to watch a room (``resume`` is a racer's, and refused
as for any spectator), the boards and race records; never to open, join or race."""


COUNTED_REFUSALS = frozenset({ErrorCode.UNKNOWN_ROOM, ErrorCode.RATE_LIMITED})
"""Refusals of a request understood that take one from the allowance of errors, as a message
not understood does: a room code nobody holds (guessing codes costs a directory lookup each,
on every worker), and a request past a rate of the address or the player (a read, a hint)."""


def frame_problem(frame: str | bytes, max_bytes: int) -> tuple[ErrorCode, str] | None:
    """Why a frame is refused unread (an error code and message), or None. A text frame is
    encoded to count its bytes only when its characters could be more than ``max_bytes``."""
    if isinstance(frame, bytes):
        return ErrorCode.INVALID_MESSAGE, "text frames only: send JSON in a text frame"
    if len(frame) > max_bytes or (
        len(frame) * UTF8_MOST_BYTES > max_bytes and len(frame.encode()) > max_bytes
    ):
        return ErrorCode.TOO_LARGE, f"a message may be at most {max_bytes} bytes (UTF-8)"
    return None


DEAL_NUMBER_WORDS = 'the deal number must be 1 to 20 digits (0-9), sent as text: "42"'
CODE_WORDS = "a room code is 4 to 16 letters and digits"
RULE_SET_WORDS = "the rule set must be one of the rule set names (at most 40 characters)"
FIELD_WORDS: dict[tuple[str, ...], str] = {
    ("create_room", "deal", "number"): DEAL_NUMBER_WORDS,
    ("create_room", "seats"): "the seats must be a whole number from 2 to 8",
    ("create_room", "time_limit_s"): "the time limit must be 30 to 86400 seconds, or none",
    ("create_room", "rule_set"): RULE_SET_WORDS,
    ("daily", "rule_set"): RULE_SET_WORDS,
    ("leaderboard", "rule_set"): RULE_SET_WORDS,
    ("leaderboard", "deal"): DEAL_NUMBER_WORDS,
    ("leaderboard", "day"): "the day must be a date written YYYY-MM-DD",
    ("leaderboard", "limit"): "the limit must be a whole number from 1 to 100",
    ("join", "code"): CODE_WORDS,
    ("spectate", "code"): CODE_WORDS,
    ("resume", "code"): CODE_WORDS,
    ("resume", "last_seq"): "last_seq must be a whole number, 0 or more",
}
"""What a known field must be, in words, by the error's location (the message's type, then the
field): said instead of the field's check (``deal.number: String should match pattern``)."""


def invalid_text(invalid: ValidationError) -> str:
    """The first few problems, each in words: a known field's rule (``FIELD_WORDS``), a
    validator's own sentence, or else the field named with pydantic's words (``name: Input
    should be a valid string``)."""
    return "; ".join(
        _problem(error)
        for error in invalid.errors(include_url=False, include_context=False, include_input=False)[
            :3
        ]
    )


def _problem(error: ErrorDetails) -> str:
    if error["type"] == "value_error":  # a validator of ours, which says it in words
        return error["msg"].removeprefix("Value error, ")
    words = FIELD_WORDS.get(tuple(str(part) for part in error["loc"]))
    if words is not None:
        return words
    return f"{'.'.join(str(part) for part in error['loc'][1:]) or 'message'}: {error['msg']}"


def request_id(data: Any) -> str | None:
    """The id a reply echoes: the request's, cut at 64 characters, if it is a text that can be
    sent back. JSON's escapes can carry a lone surrogate (``"\\ud800"``), which is no text
    UTF-8 can encode: such an id is not echoed (its error has id null), where it made building
    the error fail and closed the connection (1011)."""
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        return None
    echoed: str = data["id"][:64]
    try:
        echoed.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return echoed


def is_known_type(data: Any) -> bool:
    return isinstance(data, dict) and data.get("type") in CLIENT_KINDS


@dataclass(slots=True)
class Budget:
    """One connection's rate (``rate`` messages a second, bursts of ``burst``) and its
    allowance of errors (``errors`` at most, ``forgive`` a second back)."""

    rate: float
    burst: float
    errors: float
    forgive: float
    stamp: float
    tokens: float = 0.0
    allowance: float = 0.0

    def __post_init__(self) -> None:
        self.tokens, self.allowance = self.burst, self.errors

    def _refill(self, now: float) -> None:
        elapsed = max(0.0, now - self.stamp)
        self.stamp = max(self.stamp, now)
        self.tokens = min(self.burst, self.tokens + elapsed * self.rate)
        self.allowance = min(self.errors, self.allowance + elapsed * self.forgive)

    def allow(self, now: float) -> bool:
        """Count a message: True if it is within the rate."""
        self._refill(now)
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def error(self, now: float) -> bool:
        """Count an error (a message refused or not understood): False once the allowance is
        spent, and the connection is to be closed."""
        self._refill(now)
        self.allowance -= 1
        return self.allowance >= 0


class AddressBook:
    """Connections, new players and reads per client address (``server.core.limits.client_key``:
    an IPv4 address or an IPv6 /64). The table of connections holds only addresses with one
    open; the buckets of new players and of reads are ``AddressLimiter``s, bounded."""

    def __init__(
        self,
        connections_per_address: int,
        new_players_per_min: float,
        max_addresses: int,
        reads_per_s: float,
        reads_burst: float,
    ) -> None:
        self.connections_per_address = connections_per_address
        self._open: dict[str, int] = {}
        self._new_players = AddressLimiter(
            new_players_per_min / 60, max(1.0, new_players_per_min), max_addresses
        )
        self._reads = AddressLimiter(reads_per_s, reads_burst, max_addresses)
        """One bucket per address for the HTTP API and the WebSocket's reads alike: 20
        anonymous connections reading boards got 314-599 a second where HTTP allowed 2."""

    def full(self, address: str) -> bool:
        """Whether ``address`` has as many connections open as it may."""
        return self._open.get(address, 0) >= self.connections_per_address

    def connect(self, address: str) -> bool:
        """Count a new connection from ``address``; False (and not counted) past the cap."""
        open_now = self._open.get(address, 0)
        if open_now >= self.connections_per_address:
            return False
        self._open[address] = open_now + 1
        return True

    def disconnect(self, address: str) -> None:
        left = self._open.get(address, 0) - 1
        if left > 0:
            self._open[address] = left
        else:
            self._open.pop(address, None)

    def new_player(self, address: str, now: float) -> bool:
        """Count a new identity made from ``address``: False past the limit."""
        return self._new_players.take(address, now) == 0.0

    def read(self, address: str, now: float) -> float:
        """Count a read (a request under ``/api/``, a ``leaderboard`` or ``race_record``) of
        ``address``: 0.0 if it is allowed, else how many seconds until the next one would be."""
        return self._reads.take(address, now)


def address_of(
    remote: Any, forwarded_for: str | None = None, trusted_proxies: frozenset[str] = frozenset()
) -> str:
    """The key a connection counts against, from its ``remote_address`` (and, when that is a
    trusted reverse proxy, from the ``X-Forwarded-For`` it sent:
    ``server.core.limits.client_host``)."""
    peer = str(remote[0]) if isinstance(remote, tuple) and remote else str(remote)
    return client_key(client_host(peer, forwarded_for, trusted_proxies))
