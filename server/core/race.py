"""A race as a pure state machine: seats, ready, countdown, clock, moves, progress, ranking.

No I/O and no clock of its own: every call takes ``now`` (Unix seconds) and returns what it
said (``server.core.said.Said``): the messages to send, as ``Outgoing(to, message)`` where ``to``
is a player id or ``None`` for everyone in the room, and beside them what is to be stored before
they leave (the moves made, the start, the result). ``next_deadline()`` says when the shell must
call ``tick`` (countdown end, time limit or longest race, a racer's idle while, reconnect
grace). Room events get consecutive ``seq`` numbers and the latest are kept
(``server.core.room_events``), so a player who reconnects gets what they missed, or the room
afresh. The shell (``server.rooms``) owns sockets, timers and the database; it turns
``RaceError`` into an error message.

A quick race's room (``invited``: the players the queue matched, ``server.core.matching``) seats
nobody else and has no host who starts it: its countdown begins once every invited player has
joined, or at ``join_by`` with those who came.

Phases: LOBBY -> COUNTDOWN -> RACING -> FINISHED. A racer finishes when they win, resign, have
no legal move and no redeal left, run out of time (the time limit, or the longest a race may run
when it has none), stay away past the grace period, or make no move for the idle while; the race
finishes when every racer has. So no racer, connected or not, can keep a race open for ever.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from enum import Enum

from engine.errors import IllegalMoveError
from engine.moves import RESIGN, Move
from server.core.errors import RaceError
from server.core.offer import Offer
from server.core.racer import FINISHED_AS, Racer, ms, ranking
from server.core.room_events import EVENTS_KEPT, RoomEvents
from server.core.said import Facts, Outgoing, RaceBegan, RaceEnded, Said, as_frame, says
from server.core.terms import RaceTerms
from server.core.views import view_model
from wire.commitment import commitment
from wire.protocol import (
    Countdown,
    ErrorCode,
    ErrorMessage,
    RaceFinished,
    RoomState,
    SeatStatus,
    YourView,
)
from wire.ratings import RatingChange


class Phase(Enum):
    LOBBY = "lobby"
    COUNTDOWN = "countdown"
    RACING = "racing"
    FINISHED = "finished"


class Race:
    def __init__(
        self,
        terms: RaceTerms,
        *,
        host_id: str,
        host_name: str,
        host_bot: bool = False,
        events_kept: int = EVENTS_KEPT,
        events: RoomEvents | None = None,
        invited: Collection[str] | None = None,
        join_by: float | None = None,
    ) -> None:
        """``host_bot``: the host is a bot account (``Hello.bot``). ``events``: the room's event
        log, for a race that follows another in the same room (a rematch); a new one
        otherwise. ``invited``: a quick race's players, who alone may take its seats (none
        seated yet; ``host_id`` names the first, for the record), its countdown begun at
        ``join_by`` at the latest."""
        self.terms = terms
        self.host_id = host_id
        self.phase = Phase.LOBBY
        self.invited = None if invited is None else frozenset(invited)
        self.join_by = join_by
        self.racers: dict[str, Racer] = (
            {} if invited is not None else {host_id: Racer(host_id, host_name, host_bot)}
        )
        self.spectators: set[str] = set()
        self.starts_at: float | None = None
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self.events = RoomEvents(events_kept) if events is None else events
        self.result: RaceFinished | None = None
        self.offer: Offer | None = None
        """The rematch offer open, once the race is over (``server.core.rematch``)."""
        self.commitment = commitment(terms.seed)
        self.facts = Facts()

    @says
    def catch_up(self, now: float) -> list[Outgoing]:
        """After ``resumed``: end the race if everyone had finished, and apply what time did."""
        if self.phase is Phase.RACING and all(r.finished for r in self.racers.values()):
            return self._end(max(r.finished_at or now for r in self.racers.values()))
        return self.tick(now)

    # -- room events --------------------------------------------------------------------------

    def snapshot(self, request_id: str | None, seq: int) -> RoomState:
        """The room as it is now, numbered ``seq`` (``server.core.room_view.room_state``)."""
        terms = self.terms
        return RoomState(
            id=request_id,
            seq=seq,
            code=terms.code,
            rule_set=terms.rule_set,
            deal_kind=terms.deal_kind,
            winnable=terms.winnable,
            phase=self.phase.value,
            public=terms.public,
            quick=terms.quick,
            deal_number=self.deal_number,
            host=self.host_id,
            seats_max=terms.seats_max,
            time_limit_s=terms.time_limit_s,
            seats=[racer.seat_info() for racer in self.racers.values()],
            spectators=len(self.spectators),
            commitment=self.commitment if self.phase is not Phase.LOBBY else None,
            starts_at_ms=None if self.starts_at is None else ms(self.starts_at),
            started_at_ms=None if self.started_at is None else ms(self.started_at),
            rematch=None if self.offer is None else self.offer.pending(),
        )

    @property
    def deal_number(self) -> str | None:
        """The deal's number as far as everyone may know it (``RoomState.deal_number``)."""
        terms = self.terms
        if terms.deal_kind == "number" or (self.phase is Phase.FINISHED and terms.reveals_seed):
            return str(terms.seed)
        return None

    def _room_changed(self) -> Outgoing:
        return self.events.say(self.snapshot(None, self.events.next_seq))

    def announce(self) -> Said:
        """The room as it is now, as a room event: for a race that follows another in the
        room (``server.core.rematch``)."""
        return Said([self._room_changed()])

    def _racer(self, player_id: str) -> Racer:
        racer = self.racers.get(player_id)
        if racer is None:
            raise RaceError(ErrorCode.NOT_IN_ROOM, "you have no seat in this room")
        return racer

    # -- lobby --------------------------------------------------------------------------------

    @says
    def join(self, player_id: str, name: str, now: float, bot: bool = False) -> list[Outgoing]:
        """Take a seat; ``bot``: as a bot account (``Hello.bot``), which a rated quick race
        refuses (bots race in private rooms and unrated quick races)."""
        if player_id in self.racers:  # coming back; already here, nothing changes
            return [] if self.racers[player_id].connected else self.reconnect(player_id, now)
        if bot and self.terms.quick == "rated":
            raise RaceError(
                ErrorCode.BOTS_NOT_RATED,
                "bots race in private rooms and unrated quick races, never in rated races",
            )
        if self.invited is not None and player_id not in self.invited:
            raise RaceError(
                ErrorCode.NOT_INVITED,
                "this quick race's seats are for the players matched into it; you may spectate",
            )
        if self.phase is not Phase.LOBBY:
            raise RaceError(ErrorCode.ALREADY_STARTED, "this race has started; you may spectate it")
        if len(self.racers) >= self.terms.seats_max:
            raise RaceError(ErrorCode.ROOM_FULL, f"all {self.terms.seats_max} seats are taken")
        self.racers[player_id] = Racer(player_id, name, bot)
        self.spectators.discard(player_id)
        out = [self._room_changed()]
        if self.invited is not None and self.invited <= self.racers.keys():
            out += self._begin_countdown(now)
        return out

    def spectate(self, player_id: str, most: int) -> None:
        """Watch the room, one of at most ``most`` spectators. A spectator coming or going is
        no room event: nobody gets a frame for it (spectate and leave within the rate limit
        made the racers of a room 19 times the frames of their race); the count is in the
        next snapshot, and in the spectator's reply."""
        if player_id in self.spectators:
            return
        if len(self.spectators) >= most:
            raise RaceError(
                ErrorCode.TOO_MANY_SPECTATORS,
                f"this room has its {most} spectators: try again later",
            )
        self.spectators.add(player_id)

    @says
    def leave(self, player_id: str, now: float) -> list[Outgoing]:
        if player_id in self.spectators:
            self.spectators.discard(player_id)
            return []  # (no room event: ``spectate``)
        racer = self._racer(player_id)
        if self.phase is Phase.LOBBY or self.phase is Phase.COUNTDOWN:
            del self.racers[player_id]
            if self.phase is Phase.COUNTDOWN and len(self.racers) < 1:
                self.phase, self.starts_at = Phase.LOBBY, None
            if player_id == self.host_id and self.racers:
                self.host_id = next(iter(self.racers))
            return [self._room_changed()]
        # Once the race is on a racer keeps their seat (and their result), gone from the room:
        # leaving resigns a game still going, and the room shows them away.
        was_here = racer.connected
        racer.connected, racer.away_since = False, None
        if self.phase is Phase.RACING and not racer.finished:
            out = self._finish(racer, "resigned", now, resign=True)
            if self.ended_at is not None:
                return out  # that ended the race: its last room snapshot shows them gone
            return [*out, self._room_changed()]
        return [self._room_changed()] if was_here else []

    @says
    def ready(self, player_id: str, ready: bool, now: float) -> list[Outgoing]:
        racer = self._racer(player_id)
        if self.phase is not Phase.LOBBY:
            raise RaceError(ErrorCode.ALREADY_STARTED, "the countdown has begun")
        if racer.ready == ready:  # a repeat changes nothing: no room event
            return []
        racer.ready = ready
        out = [self._room_changed()]
        if (
            self.invited is None
            and len(self.racers) >= 2
            and all(r.ready for r in self.racers.values())
        ):
            out += self._begin_countdown(now)
        return out

    @says
    def start(self, player_id: str, now: float) -> list[Outgoing]:
        self._racer(player_id)
        if self.invited is not None:
            raise RaceError(
                ErrorCode.NOT_HOST, "a quick race starts by itself, once its racers are in"
            )
        if player_id != self.host_id:
            raise RaceError(ErrorCode.NOT_HOST, "only the host may start the race early")
        if self.phase is not Phase.LOBBY:
            raise RaceError(ErrorCode.ALREADY_STARTED, "the countdown has begun")
        return self._begin_countdown(now)

    def _begin_countdown(self, now: float) -> list[Outgoing]:
        self.phase = Phase.COUNTDOWN
        self.starts_at = now + self.terms.countdown_s
        out = [
            self.events.say(
                Countdown(
                    seq=self.events.next_seq,
                    starts_at_ms=ms(self.starts_at),
                    seconds=self.terms.countdown_s,
                )
            )
        ]
        if self.terms.countdown_s <= 0:
            out += self.tick(now)
        return out

    # -- racing -------------------------------------------------------------------------------

    def _start_racing(self, now: float) -> list[Outgoing]:
        assert self.starts_at is not None
        self.phase = Phase.RACING
        self.started_at = self.starts_at
        started = self.terms.race_started(
            self.events.next_seq, ms(self.started_at), self.commitment
        )
        out = [self.events.say(started)]
        self.facts.began = RaceBegan(ms(self.started_at), tuple(self.racers))
        for racer in self.racers.values():
            game = racer.deal(self.terms.new_game(), self.started_at)
            racer.status = "racing"
            out.append(Outgoing(racer.player_id, YourView(view=view_model(game.view()))))
        out.append(self._room_changed())
        for racer in self.racers.values():
            out += self._check_finished(racer, self.started_at)
        return out

    @says
    def move(
        self, player_id: str, move: Move, now: float, request_id: str | None = None
    ) -> list[Outgoing]:
        racer = self._racer(player_id)
        if self.phase is not Phase.RACING:
            raise RaceError(
                ErrorCode.NOT_RACING,
                "the race has not started"
                if self.phase in (Phase.LOBBY, Phase.COUNTDOWN)
                else "the race is over",
            )
        if racer.finished:
            raise RaceError(ErrorCode.FINISHED, f"you have finished ({racer.status})")
        assert racer.game is not None and self.started_at is not None
        deadline = self.next_deadline()
        if deadline is not None and now >= deadline:
            return self._move_after_deadline(racer, move, now, request_id)
        try:
            reply, made = racer.play(move, now, self.started_at, request_id, self.events.next_seq)
        except IllegalMoveError as refused:
            raise RaceError(ErrorCode.ILLEGAL_MOVE, refused.reason) from None
        self.facts.moves.append(made)
        # The room hears of the move first: one progress event, with the racer's final status
        # if the move ended their game, to everyone (but the mover, if they asked: see ``but``).
        # Then the mover's reply, which says the same and that event's seq (so a client can do
        # with one frame fewer per move: the profile's largest cost is a system call per
        # frame). Then, if that was the race's last game, the race's end (its result is stored
        # before it is announced: the reply does not wait for that).
        out = [self._progress(racer, but=player_id), Outgoing(player_id, reply)]
        if racer.finished:
            out += self._end_if_all_finished(now)
        return out

    def _move_after_deadline(
        self, racer: Racer, move: Move, now: float, request_id: str | None
    ) -> list[Outgoing]:
        """A deadline (the time limit, an idle while) passed before the timer woke the race:
        apply it now, then answer the move as one sent after it. Every request gets exactly one
        reply, and what the deadline did reaches the room even when the move is refused."""
        out = self.tick(now)
        if self.phase is not Phase.RACING:
            refusal = RaceError(ErrorCode.NOT_RACING, "the race is over")
        elif racer.finished:
            refusal = RaceError(ErrorCode.FINISHED, f"you have finished ({racer.status})")
        else:
            try:
                return [*out, *self.move(racer.player_id, move, now, request_id)]
            except RaceError as refused:
                refusal = refused
        return [
            *out,
            Outgoing(
                racer.player_id,
                ErrorMessage(id=request_id, code=refusal.code, message=refusal.message),
            ),
        ]

    def resign(self, player_id: str, now: float, request_id: str | None = None) -> Said:
        return self.move(player_id, RESIGN, now, request_id)

    def _progress(self, racer: Racer, but: str | None = None) -> Outgoing:
        return self.events.say(racer.progress_event(self.events.next_seq), but)

    def _check_finished(self, racer: Racer, now: float) -> list[Outgoing]:
        assert racer.game is not None
        outcome = racer.game.outcome()
        if not outcome.is_over or racer.finished:
            return []
        return self._finish(racer, FINISHED_AS[outcome.status], now)

    def _finish(
        self, racer: Racer, status: SeatStatus, now: float, resign: bool = False
    ) -> list[Outgoing]:
        if resign:
            assert self.started_at is not None
            self.facts.moves.extend(racer.resign(now, self.started_at))
        racer.status, racer.finished_at = status, now
        return [self._progress(racer), *self._end_if_all_finished(now)]

    def _end_if_all_finished(self, now: float) -> list[Outgoing]:
        return self._end(now) if all(r.finished for r in self.racers.values()) else []

    def _end(self, now: float) -> list[Outgoing]:
        self.phase = Phase.FINISHED
        self.ended_at = now
        assert self.started_at is not None
        ranked = ranking(self.racers.values(), self.started_at)
        self.result = self.terms.race_finished(self.events.next_seq, ranked)
        announced = self.events.say(self.result)
        self.facts.ended = RaceEnded(now, ranked, announced)
        return [announced, self._room_changed()]

    def rate(self, ratings: Mapping[str, RatingChange]) -> None:
        """The rating changes storing the result made: from now on the result, and the room
        event that announced it (``result_frame``), carry them."""
        assert self.result is not None
        self.result = self.result.model_copy(
            update={
                "ranking": [
                    entry.model_copy(update={"rating": ratings.get(entry.player_id)})
                    for entry in self.result.ranking
                ]
            }
        )
        self.events.replace(self.result.seq, self.result_frame())

    def result_frame(self) -> str:
        assert self.result is not None
        return as_frame(self.result)

    # -- time ---------------------------------------------------------------------------------

    def _limit(self) -> float | None:
        """When the race ends for whoever is still racing (``RaceTerms.limit``), if racing."""
        if self.phase is not Phase.RACING or self.started_at is None:
            return None
        return self.terms.limit(self.started_at)

    def _idle_until(self, racer: Racer) -> float | None:
        """When a racer still racing is finished for making no move."""
        if self.phase is not Phase.RACING or racer.finished or self.started_at is None:
            return None
        return racer.last_moved(self.started_at) + self.terms.idle_s

    def next_deadline(self) -> float | None:
        """The soonest of: the countdown's end, the time limit, each racer's idle deadline
        (``_idle_until``) and each away racer's grace. Asked on every move, so written as one
        pass over the racers (the profile found it at 3 % of the server's CPU as lists)."""
        phase = self.phase
        if phase is Phase.FINISHED:
            return None
        if phase is Phase.LOBBY:
            soonest = self._quick_start()
        else:
            soonest = self.starts_at if phase is Phase.COUNTDOWN else self._limit()
        for racer in self.racers.values():
            if racer.finished_at is not None:
                continue
            for when in (
                self._idle_until(racer),
                None if racer.away_since is None else racer.away_since + self.terms.grace_s,
            ):
                if when is not None and (soonest is None or when < soonest):
                    soonest = when
        return soonest

    def _quick_start(self) -> float | None:
        """When a quick race's lobby begins its countdown with those who came: none while
        nobody has (a race of nobody waits for its first racer)."""
        return self.join_by if self.invited is not None and self.racers else None

    @says
    def tick(self, now: float) -> list[Outgoing]:
        out: list[Outgoing] = []
        quick_start = self._quick_start()
        if self.phase is Phase.LOBBY and quick_start is not None and now >= quick_start:
            out += self._begin_countdown(now)
        if self.phase is Phase.COUNTDOWN and self.starts_at is not None and now >= self.starts_at:
            out += self._start_racing(now)
        for racer in list(self.racers.values()):
            if racer.away_since is None or now < racer.away_since + self.terms.grace_s:
                continue
            if self.phase is Phase.LOBBY or self.phase is Phase.COUNTDOWN:
                out += self.leave(racer.player_id, now)
            elif self.phase is Phase.RACING and not racer.finished:
                out += self._finish(
                    racer, "abandoned", racer.away_since + self.terms.grace_s, resign=True
                )
        limit = self._limit()
        for racer in list(self.racers.values()):
            idle_until = self._idle_until(racer)
            # Whichever came first: a racer idle past the time limit was timed out by it.
            if (
                idle_until is not None
                and now >= idle_until
                and (limit is None or idle_until < limit)
            ):
                out += self._finish(racer, "abandoned", idle_until, resign=True)
        if limit is not None and now >= limit:
            for racer in self.racers.values():
                if not racer.finished and self.phase is Phase.RACING:
                    out += self._finish(racer, "timed_out", limit)
        return out

    # -- connections --------------------------------------------------------------------------

    def disconnect(self, player_id: str, now: float) -> Said:
        self.spectators.discard(player_id)
        racer = self.racers.get(player_id)
        if racer is None or not racer.connected:
            return Said()
        racer.connected, racer.away_since = False, now
        return Said([self._room_changed()])

    def reconnect(self, player_id: str, now: float) -> Said:
        racer = self._racer(player_id)
        racer.connected, racer.away_since = True, None
        return Said([self._room_changed()])
