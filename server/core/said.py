"""What a race says when it is fed an event: the messages to send, and the facts to store.

The shell writes what it is handed: the moves made, with their milliseconds; a race's start,
with its seats; a race's result, with the ranking its ratings are computed from. What the race
said may leave only once those are stored (``server.rooms.delivery``): a move is acknowledged
once it is stored, a start announced once it is, a result once it is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from wire.protocol import Message, RankEntry


def as_frame(message: Message) -> str:
    """A message as the JSON text sent on the wire."""
    return message.model_dump_json(by_alias=True)


@dataclass(frozen=True, slots=True)
class Outgoing:
    to: str | None
    message: Message
    frame: str | None = None
    """The message as JSON text when the race has already made it (room events)."""
    but: str | None = None
    """A player whose connections that asked for it (``Hello.own_progress`` false) do not get
    this room event: the mover, for the progress event of their own move, whose reply
    (``move_ok``) carries the same figures and the event's ``seq``."""

    def text(self) -> str:
        return self.frame if self.frame is not None else as_frame(self.message)


@dataclass(frozen=True, slots=True)
class MoveMade:
    """A move the race accepted (or made itself: a resignation for a time-out or an abandoned
    seat): the racer's ``index``-th, 0-based, ``at_ms`` after the race's start."""

    player_id: str
    index: int
    text: str
    at_ms: int


@dataclass(frozen=True, slots=True)
class RaceBegan:
    """The race has started, with these racers seated."""

    started_at_ms: int
    racers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RaceEnded:
    """The race is over: its result, ranked once, to be stored (and rated) before
    ``announced_by``, the message that announces it, leaves."""

    ended_at: float
    ranking: list[RankEntry]
    announced_by: Outgoing


class Said(list[Outgoing]):
    """What the race said, in order; beside it what is to be stored first. A list, so that
    what two calls said is added up as lists are (the facts of a call are the shell's to take
    from the ``Said`` it returned)."""

    __slots__ = ("moves", "began", "ended")

    def __init__(
        self,
        out: Iterable[Outgoing] = (),
        moves: Sequence[MoveMade] = (),
        began: RaceBegan | None = None,
        ended: RaceEnded | None = None,
    ) -> None:
        super().__init__(out)
        self.moves, self.began, self.ended = moves, began, ended


@dataclass(slots=True)
class Facts:
    """What the calls under way have made to store, until the outermost takes it (``says``)."""

    moves: list[MoveMade] = field(default_factory=list)
    began: RaceBegan | None = None
    ended: RaceEnded | None = None
    depth: int = 0

    def taken(self, out: list[Outgoing]) -> Said:
        said = Said(out, self.moves, self.began, self.ended)
        if self.moves:
            self.moves = []
        self.began = self.ended = None
        return said


class Saying(Protocol):
    facts: Facts


S = TypeVar("S", bound=Saying)
P = ParamSpec("P")


def says(
    call: Callable[Concatenate[S, P], list[Outgoing]],
) -> Callable[Concatenate[S, P], Said]:
    """A call that may make something to store (a move, the start, the result), whether the
    shell makes it or another such call does: the outermost call's ``Said`` carries everything
    the calls under it made, and the facts start afresh."""

    @functools.wraps(call)
    def saying(self: S, /, *args: P.args, **kwargs: P.kwargs) -> Said:
        facts = self.facts
        facts.depth += 1
        try:
            out = call(self, *args, **kwargs)
        finally:
            facts.depth -= 1
        return Said(out) if facts.depth else facts.taken(out)

    return saying
