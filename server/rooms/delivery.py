"""How what a race says leaves its room: stored first what must be, then handed over in order.

The race (``server.core.race``) returns what it said with the facts to store beside it
(``server.core.said.Said``): the moves made, a start, a result. ``Delivery.deliver`` queues those
writes (``server.storage.writer``) and what was said in the room's outbox
(``server.rooms.outbox``), each message to leave once the write it depends on is committed. It
also keeps the rooms' timers, and forgets rooms that have closed or that another process holds
now.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from websockets.asyncio.server import ServerConnection, broadcast

from server.core.race import Race
from server.core.ratings import RatingRules
from server.core.said import RaceBegan, RaceEnded, Said
from server.rooms.outbox import Addressed, Outbox
from server.rooms.room import Carrier, Directory, Member, OneProcess, RemoteMember, Room
from server.rooms.solver import SolverPool
from server.settings import Settings
from server.storage.engine import Sessions
from server.storage.races import record_start
from server.storage.ranks import ScoredLines
from server.storage.results import Recorded, record_results
from server.storage.writer import Writer

log = logging.getLogger("patience_race.rooms")

MOVED_CLOSE = (1012, "the room's worker stopped: reconnect and resume")
"""How a connection is closed whose room this process no longer holds."""


class Delivery:
    """The rooms of this process as the outside sees them: what leaves them, when, and to whom."""

    def __init__(
        self,
        settings: Settings,
        sessions: Sessions,
        writer: Writer,
        clock: Callable[[], float],
        solver: SolverPool,
    ) -> None:
        self.settings, self.sessions, self.writer, self.clock = settings, sessions, writer, clock
        self.solver = solver
        self.rooms: dict[str, Room] = {}
        self.directory: Directory = OneProcess()
        self.carrier: Carrier = OneProcess()
        """Set by the Redis bus when there are several workers."""
        self.rank_cache: ScoredLines | None = None
        """Set by the service when Redis is configured: given each stored result's lines."""
        self.rating_rules = RatingRules(
            settings.rating_provisional_s,
            settings.rated_races_per_player_per_hour,
            settings.max_race_s,
        )
        self.closing = False
        self._closing: set[asyncio.Future[None]] = set()
        """Connections being closed by ``let_go`` (kept referenced until they are)."""
        writer.on_fenced = self.let_go_of_races

    def outbox(self) -> Outbox:
        return Outbox(self.hand_over)

    def hand_over(self, members: Iterable[Member], frame: str) -> None:
        """Write a frame to the members' connections: at once to this process's own
        (``broadcast`` never waits for a slow reader), by the bus to other workers'."""
        local: list[ServerConnection] = []
        remote: list[RemoteMember] = []
        for member in members:
            if member.ws is not None:
                local.append(member.ws)
            else:
                remote.append(member)
        broadcast(local, frame)
        if remote:
            self.carrier.send_frames(remote, frame)

    def deliver(self, room: Room, said: Said, after_move: bool = False) -> asyncio.Future[bool]:
        """Store what the race said is to be stored, and queue what it said in the room's
        outbox, addressed to the room's members now, in the order it said it; the future is
        done once it has all left.

        The moves the race made are stored before anything it said leaves: a move is
        acknowledged once committed. A race's start is stored, with its seats, before
        ``race_started`` is sent: a race announced as started comes back started, every racer
        seated, after a crash. A race's result is stored before it is announced: the result and
        what follows wait for that. Whatever is queued later waits behind all of it.
        ``after_move`` says that a move made ``said``: the room's timer is then left as it is
        (``_arm``)."""
        race = room.race
        after: asyncio.Future[bool] | None = None
        if said.began is not None:
            after = self._store_start(room, said.began)
        if said.moves:  # (the writer commits in order: once these moves are, so is the start)
            after = self.writer.store_moves(race.terms.race_id, room.epoch, said.moves)
        ended = said.ended
        frames: list[Addressed]
        if ended is None:
            frames = [room.address(outgoing) for outgoing in said]
        else:
            at = next(
                index for index, outgoing in enumerate(said) if outgoing is ended.announced_by
            )
            room.outbox.add([room.address(outgoing) for outgoing in said[:at]], after)
            after = self._store_result(room, ended)
            # Made as it leaves, with the rating changes that storing the result made.
            frames = [
                (room.address(ended.announced_by)[0], race.result_frame),
                *(room.address(outgoing) for outgoing in said[at + 1 :]),
            ]
        self._arm(room, after_move)
        if race.terms.public:
            self.directory.listed(room)
        return room.outbox.add(frames, after)

    def _store_start(self, room: Room, began: RaceBegan) -> asyncio.Future[bool]:
        """Queue the race's start and its seats for storage, with the address each racer came
        from (who may be rated depends on it); the future says when it is stored (False if it
        never will be: the server stopped, or another holds the room)."""
        race_id, epoch = room.race.terms.race_id, room.epoch
        at = datetime.fromtimestamp(began.started_at_ms / 1000, UTC)
        addresses = {player_id: room.addresses.get(player_id, "") for player_id in began.racers}
        return self.writer.run(
            lambda: record_start(
                self.sessions, race_id, at, list(began.racers), epoch, addresses, self.rating_rules
            )
        )

    def _store_result(self, room: Room, ended: RaceEnded) -> asyncio.Future[Any]:
        """Queue the race's result for storage, ranked as the race ranked it. Once it is
        stored the race is told the rating changes storing it made (so the result leaves with
        them), and the room closes a while later."""
        race, epoch = room.race, room.epoch
        ended_at = datetime.fromtimestamp(ended.ended_at, UTC)

        async def store_result() -> Recorded:
            recorded = await record_results(
                self.sessions, race.terms.race_id, ended_at, ended.ranking, epoch
            )
            if self.rank_cache is not None:  # after the commit; it never fails the write
                await self.rank_cache.set_lines(recorded.scored)
            return recorded

        def stored(done: asyncio.Future[Recorded | bool]) -> None:
            recorded = None if done.cancelled() else done.result()
            if isinstance(recorded, Recorded):  # (False: never stored)
                race.rate(recorded.ratings)
            self._close_later(room, race)
            self.solver.after_race(
                race,
                frozenset(
                    address
                    for player_id, address in room.addresses.items()
                    if player_id in race.racers
                ),
                rated=isinstance(recorded, Recorded) and bool(recorded.ratings),
            )

        written = self.writer.run_returning(store_result)
        written.add_done_callback(stored)  # (before the outbox's: the result leaves rated)
        return written

    def _close_later(self, room: Room, race: Race) -> None:
        """Close the room a while after its race's result is stored, unless a rematch has
        put a new race in it meanwhile."""
        if not self.closing:
            asyncio.get_running_loop().call_later(
                self.settings.finished_room_s,
                lambda: self.forget_room(room) if room.race is race else None,
            )

    def forget_room(self, room: Room, release: bool = True) -> None:
        """Close a room: its code is free (unless ``release`` is False: another worker holds
        it now), its members are in no room, its timer is off. (A finished race's room is
        forgotten a while after its result is stored: a server that runs for weeks keeps only
        live rooms.)"""
        if self.rooms.get(room.race.terms.code) is room:
            del self.rooms[room.race.terms.code]
            if release:
                self.directory.release(room.race.terms.code)
        self.solver.forget_race(room.race.terms.race_id)
        for member in room.members:
            member.room = None
        remote = [member for member in room.members if isinstance(member, RemoteMember)]
        if remote:
            self.carrier.out_of_room(remote)
        room.members.clear()
        if room.timer is not None:
            room.timer.cancel()
            room.timer = None

    def let_go_of_races(self, race_ids: frozenset[str]) -> None:
        """Another process holds these races now (``server.storage.holding``): let go of their
        rooms."""
        for room in [room for room in self.rooms.values() if room.race.terms.race_id in race_ids]:
            self.let_go(room)

    def let_go(self, room: Room) -> None:
        """Another process holds the room's race now: forget the room, without releasing its
        code, and close its members' connections (1012), so that their clients reconnect and
        resume where the room is held, with every move that was acknowledged."""
        if self.rooms.get(room.race.terms.code) is not room:
            return
        log.warning("room %s is held by another process now: letting it go", room.race.terms.code)
        members = list(room.members)
        self.forget_room(room, release=False)
        remote = [member for member in members if isinstance(member, RemoteMember)]
        if remote:
            self.carrier.moved(remote)
        for member in members:
            if member.ws is not None:
                self._closing.add(asyncio.ensure_future(member.ws.close(*MOVED_CLOSE)))
        self._closing = {task for task in self._closing if not task.done()}

    def stop_timers(self) -> None:
        """Shutting down: no race is woken again."""
        self.closing = True
        for room in self.rooms.values():
            if room.timer is not None:
                room.timer.cancel()

    def _arm(self, room: Room, after_move: bool = False) -> None:
        """Set the room's timer for the race's next deadline. A move only puts deadlines off
        (the mover's idle deadline) or ends them, never brings one nearer, so after a move a
        timer already set is left as it is: at worst it wakes the race early, and the tick
        that finds nothing due sets it again (working out the deadline after every move was
        2-3 % of the server's CPU)."""
        if after_move and room.timer is not None and not self.closing:
            return
        deadline = room.race.next_deadline()
        if room.timer is not None and deadline == room.deadline and not self.closing:
            return
        if room.timer is not None:
            room.timer.cancel()
            room.timer = None
        room.deadline = deadline
        if deadline is None or self.closing:
            return
        loop = asyncio.get_running_loop()
        room.timer = loop.call_later(max(0.0, deadline - self.clock()), self._wake, room)

    def _wake(self, room: Room) -> None:
        room.timer = None
        self.deliver(room, room.race.tick(self.clock()))
