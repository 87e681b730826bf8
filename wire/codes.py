"""Every code an ``error`` message can carry, in one enum both sides import."""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Every code an ``error`` message can carry: stable and machine-readable. docs/protocol.md
    says what each means (a test checks it names every one)."""

    # Frames refused before they are read as a request.
    BAD_JSON = "bad_json"
    UNKNOWN_TYPE = "unknown_type"
    INVALID_MESSAGE = "invalid_message"
    TOO_LARGE = "too_large"
    RATE_LIMITED = "rate_limited"
    # Identity.
    NOT_IDENTIFIED = "not_identified"
    BAD_TOKEN = "bad_token"
    ANONYMOUS = "anonymous"
    # What a request names.
    UNKNOWN_RULE_SET = "unknown_rule_set"
    UNKNOWN_ROOM = "unknown_room"
    NOT_FOUND = "not_found"
    # Rooms and seats.
    IN_ANOTHER_ROOM = "in_another_room"
    ROOM_FULL = "room_full"
    ALREADY_STARTED = "already_started"
    NOT_IN_ROOM = "not_in_room"
    NOT_HOST = "not_host"
    NOT_OVER = "not_over"
    NO_REMATCH = "no_rematch"
    TOO_MANY_SPECTATORS = "too_many_spectators"
    BOTS_NOT_RATED = "bots_not_rated"
    # The quick race's queue.
    ALREADY_QUEUED = "already_queued"
    NOT_QUEUED = "not_queued"
    NOT_INVITED = "not_invited"
    QUEUE_FULL = "queue_full"
    # Racing.
    NOT_RACING = "not_racing"
    FINISHED = "finished"
    INVALID_MOVE = "invalid_move"
    ILLEGAL_MOVE = "illegal_move"
    ALREADY_PLAYED = "already_played"
    NO_HINTS = "no_hints"
    # What one connection, address or player may hold (docs/protocol.md, Limits).
    TOO_MANY_CONNECTIONS = "too_many_connections"
    TOO_MANY_PLAYERS = "too_many_players"
    TOO_MANY_ROOMS = "too_many_rooms"
    TOO_MANY_WINNABLE = "too_many_winnable"
    ROOM_CLOSED = "room_closed"
    TOO_MANY_LOBBIES = "too_many_lobbies"
    # The server.
    UNAVAILABLE = "unavailable"
