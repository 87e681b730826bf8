"""Requests the server refuses, each with its protocol error code (``ErrorCode``).

::

    Refused (Exception)   ``code`` an ErrorCode, ``message`` a sentence for a person
    ├── RaceError         the race refuses (server/core/race.py: seats, phase, moves)
    └── Refusal           the shell refuses (server/service.py: identity, rooms, what a request
    names)

Only the shell turns a ``Refused`` into an ``error`` message. Frames refused before they are read
as a request (``bad_json``, ``too_large``, ``rate_limited``, ``unknown_type``,
``invalid_message`` from validation) are answered by the shell directly, with the same codes.
"""

from __future__ import annotations

from wire.protocol import ErrorCode


class Refused(Exception):
    """Base of every refusal: a request the server answers with an ``error``."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class RaceError(Refused):
    """A request the race refuses."""


class Refusal(Refused):
    """A request refused by the shell itself (identity, unknown room...)."""
