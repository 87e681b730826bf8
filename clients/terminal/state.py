"""What the terminal racer knows of its room and race, built from the server's messages alone.

No I/O: the session (``clients/terminal/session.py``) feeds it the replies and room events as
they come, and the screens draw from it. The phase it reports picks the screen: no room (the
start form), ``lobby``/``countdown`` (the room), ``racing`` (your board), ``finished`` (results).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wire.protocol import (
    Countdown,
    MoveAccepted,
    ProgressEvent,
    RaceFinished,
    RaceStarted,
    RematchOffer,
    RematchPending,
    RoomState,
    SeatInfo,
    ServerMessage,
    ViewModel,
    YourView,
)


@dataclass
class OwnBoard:
    """Your board as the server last described it: a whole view, then the piles each accepted
    move changed."""

    rule_set: str
    piles: dict[str, list[str | None]]
    legal_moves: list[str]
    status: str
    reason: str
    on_foundations: int
    total: int
    moves: int
    notes: list[str]
    changed: frozenset[str] = frozenset()
    last_move: str = ""
    last_events: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, view: ViewModel) -> OwnBoard:
        return cls(
            view.rule_set,
            {pile.pile: list(pile.cards) for pile in view.piles},
            list(view.legal_moves),
            view.status,
            view.reason,
            view.on_foundations,
            view.total,
            view.moves,
            list(view.notes),
        )

    def accept(self, ack: MoveAccepted) -> None:
        for pile in ack.changed:
            self.piles[pile.pile] = list(pile.cards)
        self.changed = frozenset(pile.pile for pile in ack.changed)
        self.legal_moves = list(ack.legal_moves)
        self.status, self.on_foundations, self.moves = ack.status, ack.on_foundations, ack.moves
        self.reason = ""  # an acknowledgement does not say why a game ended; a view does
        self.notes = list(ack.notes)
        self.last_move, self.last_events = ack.move, list(ack.events)

    @property
    def in_progress(self) -> bool:
        return self.status == "in_progress"


class RaceState:
    """The room you are in, the racers' progress, your board and the result.

    Room events are taken only for the room you are entering or in (``expect``, ``enter``); a
    new room gets a new state, so nothing left over from a room you left shows up in it."""

    def __init__(self, player_id: str) -> None:
        self.player_id = player_id
        self.code: str | None = None
        self.room: RoomState | None = None
        self.seats: dict[str, SeatInfo] = {}
        self.starts_at_ms: int | None = None
        self.started: RaceStarted | None = None
        self.board: OwnBoard | None = None
        self.finished: RaceFinished | None = None
        self.rematch: RematchPending | None = None
        """The rematch offer open, once the race is over."""
        self.rematch_declined_by: str | None = None
        """Who ended the last rematch offer without a rematch, until another is made."""

    def expect(self, code: str) -> None:
        """Take the events of the room with this code from now on (sent before the reply)."""
        self.code = code.upper()

    def enter(self, room: RoomState) -> None:
        self.code = room.code
        self._room(room)

    @property
    def phase(self) -> str | None:
        """None (in no room), ``lobby``, ``countdown`` (the race is about to start, or has and
        your board is on its way), ``racing`` (your board is here) or ``finished``."""
        if self.room is None:
            return None
        if self.finished is not None or self.room.phase == "finished":
            return "finished"
        if self.board is not None:
            return "racing"
        if self.starts_at_ms is not None or self.room.phase == "racing":
            return "countdown"
        return self.room.phase

    @property
    def me(self) -> SeatInfo | None:
        return self.seats.get(self.player_id)

    @property
    def finished_as(self) -> str | None:
        """How your own game ended (won, lost, resigned, timed_out, abandoned), or None while it
        goes on. The clock ends it with a room event, not with an answer to a move."""
        if self.board is not None and not self.board.in_progress:
            return self.board.status
        me = self.me
        return me.status if me is not None and me.status not in ("waiting", "racing") else None

    def name_of(self, player_id: str) -> str:
        seat = self.seats.get(player_id)
        return seat.name if seat is not None else "a racer who left"

    @property
    def is_host(self) -> bool:
        """Whether this player may start the race early: the host, but in a quick race's room,
        which starts by itself, nobody."""
        room = self.room
        return room is not None and room.quick is None and room.host == self.player_id

    def apply(self, message: ServerMessage) -> None:
        """A room event or your view (anything else is not about the room and is ignored)."""
        if self.code is None:
            return
        match message:
            case RoomState() if message.code == self.code:
                self._room(message)
            case Countdown():
                self.starts_at_ms = message.starts_at_ms
            case RaceStarted():
                self.started = message
            case YourView():
                self.board = OwnBoard.of(message.view)
            case ProgressEvent() if message.player_id in self.seats:
                self.seats[message.player_id] = self.seats[message.player_id].model_copy(
                    update={
                        "on_foundations": message.on_foundations,
                        "total": message.total,
                        "moves": message.moves,
                        "status": message.status,
                    }
                )
            case RaceFinished():
                self.finished = message
            case RematchOffer():
                self.rematch_declined_by = message.declined_by
                still_open = message.declined_by is None and bool(message.waiting)
                self.rematch = (
                    RematchPending(accepted=message.accepted, waiting=message.waiting)
                    if still_open
                    else None
                )

    def accept(self, ack: MoveAccepted) -> None:
        """Your move (or resignation) was accepted: your board, and your seat, since the room's
        progress event for your own move is not sent to you (the reply says the same)."""
        if self.board is not None:
            self.board.accept(ack)
        me = self.me
        if me is not None:
            self.seats[self.player_id] = me.model_copy(
                update={
                    "on_foundations": ack.on_foundations,
                    "moves": ack.moves,
                    "status": "racing" if ack.status == "in_progress" else ack.status,
                }
            )

    def _room(self, room: RoomState) -> None:
        if room.phase == "lobby":  # (after a rematch: the finished race's are gone)
            self.started, self.board, self.finished = None, None, None
            self.rematch_declined_by = None
        self.room = room
        self.rematch = room.rematch
        self.starts_at_ms = room.starts_at_ms
        self.seats = {seat.player_id: seat for seat in room.seats}
