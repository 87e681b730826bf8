"""Errors the engine raises, split by cause so a caller can answer a person precisely.

::

    EngineError (ValueError)
    ├── InvalidMoveError     the text or JSON is not a move at all ("9Z heap:1")
    ├── IllegalMoveError     a well-formed move the rules refuse now; ``reason`` says why
    ├── UnknownRuleSetError  no rule set has that name
    ├── InvalidLogError      a move log file that cannot be read
    └── InvalidPositionError a position that is not in the documented form, or not a
                             position of its rule set (docs/position.md)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.moves import Move


class EngineError(ValueError):
    """Base of every error the engine raises on purpose."""


class InvalidMoveError(EngineError):
    """The input does not describe a move (bad syntax, unknown pile or card)."""


class IllegalMoveError(EngineError):
    """A well-formed move that the rules do not allow in this position."""

    def __init__(self, move: Move, reason: str) -> None:
        super().__init__(f"{move} is not allowed: {reason}")
        self.move = move
        self.reason = reason


class UnknownRuleSetError(EngineError):
    """No registered rule set has the given name."""


class InvalidLogError(EngineError):
    """A move log that is not in the documented format (docs/move-log.md)."""


class InvalidPositionError(EngineError):
    """A position that is not in the documented form (docs/position.md) or does not fit its
    rule set: a pile or card missing, twice or unknown, a state field wrong."""
