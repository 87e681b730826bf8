"""The quick race's queue in one process (``LocalBus``), and what every queue shares.

A player asks with ``quick_race`` and waits as a ``Seeker`` (``server.core.matching``) of one
queue: a rule set, rated or not. Every ``WAVE_S`` the pure ``wave`` forms the groups; each gets
a quick room (``Openings.quick``), and each of its players hears ``matched`` and is joined into
it through the bus, as their own ``join`` would be, so they get the ``room`` a join gets. Those
still waiting hear ``queue``. A player leaves the queue with ``leave_queue``, by closing their
connection, or by being matched.

Across workers the queue is in Redis instead (``server.cluster.redis_quick``); the checks, the
counts and the messages are the same, here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.server import broadcast
from websockets.protocol import State

from engine.registry import RULE_SET_NAMES
from server.cluster.practice import PracticeBots
from server.core.errors import Refusal, Refused
from server.core.matching import WAVE_S, Seeker, bot_due, seeker_window, wave
from server.core.said import as_frame
from server.rooms.host import RoomHost
from server.rooms.room import Client, Room, RoomRequest
from server.settings import Settings
from server.storage.ratings import shown_rating
from wire.protocol import (
    ErrorCode,
    JoinRoom,
    LeaveQueue,
    Matched,
    Message,
    Ok,
    Queued,
    QueueStatus,
    QuickRace,
)

log = logging.getLogger("patience_race.quick")

Counts = dict[str, dict[str, int]]
"""Players waiting, by rule set, then ``rated`` and ``unrated`` (``GET /api/quick``)."""
Request = Callable[[Client, RoomRequest], Awaitable[None]]
"""The bus's ``request``: how a matched connection is joined into its room."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A seeker in a rule set's queue, and the connection it waits on."""

    rule_set: str
    seeker: Seeker
    worker: str
    connection_id: str
    request_id: str | None = None
    """The ``quick_race``'s id: the ``room`` the player is joined into answers it too."""
    address: str = ""
    """The address the player asked from: one practice bot at a time for each
    (``PracticeBots.free``)."""

    @property
    def queue(self) -> tuple[str, bool]:
        return self.rule_set, self.seeker.rated

    def as_json(self) -> dict[str, Any]:
        seeker = self.seeker
        return {
            "rule_set": self.rule_set,
            "name": seeker.name,
            "rating": seeker.rating,
            "rated": seeker.rated,
            "since": seeker.since,
            "bot_after_s": seeker.bot_after_s,
            "worker": self.worker,
            "conn": self.connection_id,
            "id": self.request_id,
            "addr": self.address,
        }

    @classmethod
    def from_json(cls, player_id: str, data: dict[str, Any]) -> Entry:
        return cls(
            data["rule_set"],
            Seeker(
                player_id,
                data["name"],
                data["rating"],
                data["rated"],
                data["since"],
                data["bot_after_s"],
            ),
            data["worker"],
            data["conn"],
            data["id"],
            data.get("addr", ""),
        )


def may_seek(client: Client, message: QuickRace) -> None:
    """Refuse what no queue takes: a rule set the server has not, a connection in a room, a
    bot account in the rated queue (bots race unrated quick races, never rated ones)."""
    if message.rule_set not in RULE_SET_NAMES:
        raise Refusal(ErrorCode.UNKNOWN_RULE_SET, f"choose one of {', '.join(RULE_SET_NAMES)}")
    if client.room is not None:
        raise Refusal(ErrorCode.IN_ANOTHER_ROOM, "leave your room first")
    if client.bot and message.rated:
        raise Refusal(
            ErrorCode.BOTS_NOT_RATED,
            "bots race in private rooms and unrated quick races, never in rated races: "
            'ask with "rated": false',
        )


def already_queued() -> Refusal:
    return Refusal(
        ErrorCode.ALREADY_QUEUED,
        "you are waiting in the quick race queue (on this connection or another): "
        "leave_queue first",
    )


def queue_full(most: int) -> Refusal:
    return Refusal(
        ErrorCode.QUEUE_FULL, f"the quick race queue holds its {most} players: try again later"
    )


def not_queued() -> Refusal:
    return Refusal(ErrorCode.NOT_QUEUED, "you are not waiting in the quick race queue")


def counts(entries: Iterable[Entry]) -> Counts:
    """How many wait in each queue, every rule set named."""
    waiting = {rule_set: {"rated": 0, "unrated": 0} for rule_set in RULE_SET_NAMES}
    for entry in entries:
        waiting[entry.rule_set]["rated" if entry.seeker.rated else "unrated"] += 1
    return waiting


def groups(entries: Iterable[Entry], now: float) -> list[list[Entry]]:
    """The groups a wave forms now, queue by queue, each longest waiting first."""
    by_queue: dict[tuple[str, bool], dict[str, Entry]] = {}
    for entry in entries:
        by_queue.setdefault(entry.queue, {})[entry.seeker.player_id] = entry
    return [
        [queue[seeker.player_id] for seeker in group]
        for queue in by_queue.values()
        for group in wave([entry.seeker for entry in queue.values()], now)
    ]


def practice_due(entries: Iterable[Entry], now: float) -> list[Entry]:
    """Those who asked for the practice bot and have waited as long as they said."""
    by_player = {entry.seeker.player_id: entry for entry in entries}
    return [
        by_player[seeker.player_id]
        for seeker in bot_due([entry.seeker for entry in by_player.values()], now)
    ]


def group_room(host: RoomHost, group: Sequence[Entry]) -> Awaitable[Room]:
    """Open the quick room of a group formed by a wave (its first has waited longest)."""
    first = group[0]
    return host.openings.quick(
        first.rule_set,
        first.seeker.rated,
        [(entry.seeker.player_id, entry.seeker.name) for entry in group],
    )


async def practice_room(host: RoomHost, bots: PracticeBots, entry: Entry) -> Matched:
    """An unrated quick room for the seeker and a practice bot, which joins it now."""
    bot = await bots.player()
    seeker = entry.seeker
    room = await host.openings.quick(
        entry.rule_set, False, [(seeker.player_id, seeker.name), bot], people=[seeker.player_id]
    )
    code = room.race.terms.code
    bots.race(code, entry.address)
    return Matched(rule_set=entry.rule_set, rated=False, code=code, racers=2, practice=True)


def queued(message: QuickRace, entry: Entry, waiting: int, now: float) -> Queued:
    return Queued(
        id=message.id,
        rule_set=entry.rule_set,
        rated=entry.seeker.rated,
        waiting=waiting,
        window=seeker_window(entry.seeker, now),
    )


def statuses(entries: Sequence[Entry], now: float) -> list[tuple[Entry, QueueStatus]]:
    """What each seeker hears at a wave: their queue's count, their window, their wait."""
    waiting = counts(entries)
    return [
        (
            entry,
            QueueStatus(
                rule_set=entry.rule_set,
                rated=entry.seeker.rated,
                waiting=waiting[entry.rule_set]["rated" if entry.seeker.rated else "unrated"],
                window=seeker_window(entry.seeker, now),
                waited_s=int(now - entry.seeker.since),
            ),
        )
        for entry in entries
    ]


def matched(group: Sequence[Entry], code: str) -> Matched:
    first = group[0]
    return Matched(rule_set=first.rule_set, rated=first.seeker.rated, code=code, racers=len(group))


async def enter(request: Request, client: Client, said: Matched, request_id: str | None) -> None:
    """A matched connection of this worker: it hears ``matched`` and is joined into its room
    as a ``join`` of its own would be, with the ``quick_race``'s id (``request_id``): the
    reply, ``room``, follows and answers the ``quick_race`` too. A join refused (the connection
    closed, or entered a room meanwhile) is the player's loss: the room begins with those who
    came."""
    send(client, said)
    try:
        await request(client, JoinRoom(type="join", id=request_id, code=said.code))
    except Refused as refused:
        log.info("a matched player did not join %s: %s", said.code, refused.message)


def send(client: Client, message: Message) -> None:
    broadcast([client.ws], as_frame(message))


class LocalQueue:
    """The queues of one process: its seekers, and a wave every ``WAVE_S`` while any wait."""

    def __init__(
        self,
        settings: Settings,
        host: RoomHost,
        request: Request,
        wave_s: float = WAVE_S,
    ) -> None:
        self.settings, self.host, self.request, self.wave_s = settings, host, request, wave_s
        self.entries: dict[str, Entry] = {}
        """The seekers, by player id."""
        self.clients: dict[str, Client] = {}
        """Their connections, by connection id."""
        self.practice = PracticeBots(settings, host.sessions, host.writer)
        self._waves: asyncio.Task[None] | None = None
        self._entering: set[asyncio.Task[None]] = set()

    def seeking(self, client: Client) -> bool:
        return client.connection_id in self.clients

    async def seek(self, client: Client, message: QuickRace) -> None:
        assert client.player_id is not None
        may_seek(client, message)
        if client.player_id in self.entries:
            raise already_queued()
        if len(self.entries) >= self.settings.quick_queue_max:
            raise queue_full(self.settings.quick_queue_max)
        rating = await shown_rating(self.host.sessions, client.player_id, message.rule_set)
        if client.player_id in self.entries:  # (asked twice at once)
            raise already_queued()
        now = self.host.clock()
        entry = Entry(
            message.rule_set,
            Seeker(
                client.player_id,
                client.name or "",
                rating,
                message.rated,
                now,
                message.bot_after_s,
            ),
            "",
            client.connection_id,
            message.id,
            client.address or "",
        )
        self.entries[client.player_id] = entry
        self.clients[client.connection_id] = client
        waiting = sum(other.queue == entry.queue for other in self.entries.values())
        send(client, queued(message, entry, waiting, now))
        if self._waves is None:
            self._waves = asyncio.create_task(self._run())

    def leave(self, client: Client, message: LeaveQueue) -> None:
        if not self.drop(client):
            raise not_queued()
        send(client, Ok(id=message.id))

    def drop(self, client: Client) -> bool:
        """The connection waits no more (it left, or closed); whether it was waiting."""
        if self.clients.pop(client.connection_id, None) is None:
            return False
        assert client.player_id is not None  # (the one it queued as: ``Gateway._hello``)
        del self.entries[client.player_id]
        return True

    def _still(self, entry: Entry) -> Client | None:
        """The entry's connection, if it waits still as the entry (a wave's rooms are opened
        one after another: meanwhile some of those it matched may have gone)."""
        if self.entries.get(entry.seeker.player_id) is not entry:
            return None
        return self.clients[entry.connection_id]

    def counts(self) -> Counts:
        return counts(self.entries.values())

    async def _run(self) -> None:
        """A wave every ``wave_s`` until nobody waits (the next ``seek`` starts them again)."""
        while True:
            await asyncio.sleep(self.wave_s)
            try:
                await self.wave()
            except Exception:  # a failed wave must not stop the queue
                log.exception("a quick race wave failed")
            if not self.entries:
                self._waves = None
                return

    async def wave(self) -> None:
        """Match the queues now: open a room for each group formed, and tell those left."""
        now = self.host.clock()
        for group in groups(self.entries.values(), now):
            await self._open(group)
        for entry in practice_due(self.entries.values(), now):
            if self.practice.free(entry.address):
                await self._practise(entry)
        for entry, status in statuses(list(self.entries.values()), self.host.clock()):
            send(self.clients[entry.connection_id], status)

    async def _open(self, group: list[Entry]) -> None:
        """A room for the group, taken out of the queue first (so a player who leaves while
        the room is being stored is invited still, and simply does not come). Should the room
        not open (the database does not take it), they wait on in the queue."""
        still = [self._still(entry) for entry in group]
        clients = [client for client in still if client is not None]
        if len(clients) < len(group):
            return  # the next wave matches those left
        for client in clients:
            self.drop(client)
        try:
            room = await group_room(self.host, group)
        except Refused as refused:
            log.warning("a quick room could not be opened: %s", refused.message)
            for entry, client in zip(group, clients, strict=True):
                if client.player_id not in self.entries and client.ws.state is State.OPEN:
                    self.entries[entry.seeker.player_id] = entry
                    self.clients[client.connection_id] = client
            return
        said = matched(group, room.race.terms.code)
        for entry, client in zip(group, clients, strict=True):
            self._enter(client, said, entry.request_id)

    async def _practise(self, entry: Entry) -> None:
        """The seeker races the practice bot (should the room not open, they wait on)."""
        client = self._still(entry)
        if client is None:
            return
        self.drop(client)
        try:
            said = await practice_room(self.host, self.practice, entry)
        except Refused as refused:
            log.warning("a practice room could not be opened: %s", refused.message)
            if client.ws.state is State.OPEN:
                self.entries[entry.seeker.player_id] = entry
                self.clients[client.connection_id] = client
            return
        self._enter(client, said, entry.request_id)

    def _enter(self, client: Client, said: Matched, request_id: str | None) -> None:
        task = asyncio.create_task(enter(self.request, client, said, request_id))
        self._entering.add(task)
        task.add_done_callback(self._entering.discard)

    async def close(self) -> None:
        """Stop the waves and the practice bots (the server is stopping)."""
        if self._waves is not None:
            self._waves.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._waves
            self._waves = None
        await self.practice.close()
