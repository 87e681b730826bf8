"""How rooms are opened: a new room's deal drawn and its race stored, within what each player
and each address may open; a daily deal's one play claimed; a room's next race (a rematch).

The ``RoomHost`` (``server.rooms.host``) asks for a room here and enters its host into it.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from engine.deal import DEAL_ALGORITHM
from engine.registry import RULE_SET_NAMES
from server.core.errors import Refusal
from server.core.limits import AddressLimiter
from server.core.offer import Offer
from server.core.race import Race
from server.core.rematch import answer, may_rematch, racer_gone, rematch
from server.core.terms import RaceTerms
from server.rooms.delivery import Delivery
from server.rooms.pool import daily_draw, winnable_seed
from server.rooms.room import Member, Room, public_lobbies, write_for_client
from server.settings import Settings
from server.storage import holding
from server.storage.deals import daily_seed
from server.storage.engine import Sessions
from server.storage.models import RaceRow
from server.storage.races import create_race
from server.storage.writer import Writer
from wire.protocol import CreateRoom, ErrorCode, PlayDaily

T = TypeVar("T")
log = logging.getLogger("patience_race.rooms")
CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
CODE_LENGTH = 8


class Openings:
    def __init__(
        self,
        settings: Settings,
        sessions: Sessions,
        writer: Writer,
        clock: Callable[[], float],
        delivery: Delivery,
    ) -> None:
        self.settings, self.sessions, self.writer, self.clock = settings, sessions, writer, clock
        self.delivery = delivery
        self.holder = holding.process_name()
        """This process's name as the holder of its races (its name on the bus, if any)."""
        self.room_quota = AddressLimiter(
            settings.rooms_per_player_per_hour / 3600,
            max(1.0, settings.rooms_per_player_per_hour),
            settings.http_rate_clients,
        )
        """Rooms each player may open (a rematch's race included): a bucket per player id
        (bounded, as the HTTP one)."""
        self.winnable_quota = AddressLimiter(
            settings.winnable_rooms_per_player_per_hour / 3600,
            max(1.0, settings.winnable_rooms_per_player_per_hour),
            settings.http_rate_clients,
        )
        """Rooms asking for a winnable deal each player may open: so one identity cannot take
        the whole pool (``server.rooms.pool``)."""
        self._making: set[asyncio.Future[None]] = set()
        """Rematches agreed by a racer's leaving, being made (kept referenced until they are)."""
        self._opening: Counter[tuple[str, str]] = Counter()
        """Public lobbies being opened (their deal drawn, their race stored), by ``("player",
        id)`` and ``("address", address)``: counted with those open, so that many requests
        at once do not all pass the limit before any lobby is open."""

    async def _new_code(self) -> str:
        while True:
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if code not in self.delivery.rooms and await self.delivery.directory.claim(code):
                return code

    def may_open(self, client: Member, rule_set: str) -> None:
        if rule_set not in RULE_SET_NAMES:
            raise Refusal(ErrorCode.UNKNOWN_RULE_SET, f"choose one of {', '.join(RULE_SET_NAMES)}")
        if client.room is not None:
            raise Refusal(ErrorCode.IN_ANOTHER_ROOM, "leave your room first")

    async def create(self, client: Member, message: CreateRoom) -> Room:
        """A new room, its deal drawn and its race stored, hosted by ``client``."""
        self.may_open(client, message.rule_set)
        opening = self._may_list(client) if message.public else []
        self._opening.update(opening)
        try:
            deal = message.deal  # (a chosen number is checked by the model, "daily" refused)
            if deal.winnable:
                self._take_winnable(client)
            self._take_room(client)
            seed, winnable = await self._draw(
                message.rule_set,
                int(deal.number or 0) if deal.kind == "number" else None,
                deal.winnable,
            )
            return await self._open(
                client,
                rule_set=message.rule_set,
                seed=seed,
                deal_kind=deal.kind,
                winnable=winnable,
                seats_max=message.seats,
                time_limit_s=message.time_limit_s,
                public=message.public,
                countdown_s=self.settings.countdown_s,
            )
        finally:
            for key in opening:
                self._opening[key] -= 1
                if not self._opening[key]:
                    del self._opening[key]

    async def _draw(
        self, rule_set: str, number: int | None, winnable: bool
    ) -> tuple[int, bool | None]:
        """A room's deal: the chosen ``number``, or a new secret seed; asked to be winnable, a
        pooled seed, or after a wait an unproved one (``server.rooms.pool``), and which it is."""
        seed = secrets.randbits(64) if number is None else number
        if not winnable:
            return seed, None
        pooled = await winnable_seed(self.settings, self.sessions, rule_set, self._write)
        return (seed, False) if pooled is None else (pooled, True)

    async def quick(
        self,
        rule_set: str,
        rated: bool,
        players: Sequence[tuple[str, str]],
        people: Sequence[str] | None = None,
    ) -> Room:
        """A quick race's room for the players the queue matched (``server.core.matching``),
        their ids and names, longest waiting first: on a secret deal, a seat for each of them
        and for nobody else, stored before anyone hears of it (so a restart keeps who may sit).
        Nobody is seated yet: each of them joins. The server opens it: it takes none of their
        rooms (``_take_room``). Its deal is winnable where the pool has one ready and each of
        ``people`` (the players but a practice bot; all of them by default) has a winnable
        room left (``winnable_rooms_per_player_per_hour``, as ``create`` takes one): else an
        unproved secret one, so that identities matched again and again cannot empty the pool
        that everyone's winnable rooms draw from."""
        asked = self.clock()
        takers = [player_id for player_id, _ in players] if people is None else people
        pooled = [self.winnable_quota.take(player_id, asked) for player_id in takers]
        seed, winnable = await self._draw(rule_set, None, winnable=not any(pooled))
        if winnable is None:
            winnable = False  # (asked for, as every quick race's deal is: none was given)
        code = await self._new_code()
        terms = RaceTerms(
            race_id=secrets.token_hex(8),
            code=code,
            rule_set=rule_set,
            seed=seed,
            algorithm=DEAL_ALGORITHM,
            deal_kind="secret",
            winnable=winnable,
            seats_max=len(players),
            time_limit_s=None,
            quick="rated" if rated else "unrated",
            countdown_s=self.settings.quick_countdown_s,
            grace_s=self.settings.reconnect_grace_s,
            max_race_s=self.settings.max_race_s,
            idle_s=self.settings.idle_s,
        )
        (host_id, host_name), now = players[0], self.clock()
        race = Race(
            terms,
            host_id=host_id,
            host_name=host_name,
            invited=[player_id for player_id, _ in players],
            join_by=now + self.settings.quick_join_s,
        )
        try:
            await self._store(race)
        except Refusal:
            self.delivery.directory.release(code)
            raise
        room = self.delivery.rooms[code] = Room(race, self.delivery.outbox(), opened=now)
        return room

    async def daily(self, client: Member, message: PlayDaily, now: float) -> Room:
        """A room of one for today's deal of a rule set: stored with its host's one play of
        the day, or refused."""
        assert client.player_id is not None
        self.may_open(client, message.rule_set)
        self._take_room(client)  # before the claim: a refused room costs no day's play
        day, rule_set = datetime.fromtimestamp(now, UTC).date(), message.rule_set
        pooled = daily_draw(self.settings, rule_set)
        seed, winnable = await self._write(lambda: daily_seed(self.sessions, rule_set, day, pooled))
        return await self._open(
            client,
            rule_set=rule_set,
            seed=seed,
            deal_kind="daily",
            winnable=winnable,
            seats_max=1,
            time_limit_s=None,
            countdown_s=0,
            daily_day=day,
        )

    def _may_list(self, client: Member) -> list[tuple[str, str]]:
        """Refuse a public lobby past those one player, or one address, may host at once,
        counting those still being opened (a scan of this worker's rooms, for a request each
        player may make ``rooms_per_player_per_hour``); else what the new lobby counts
        against while it is being opened (``_opening``)."""
        assert client.player_id is not None
        settings = self.settings
        player, address = ("player", client.player_id), ("address", client.address or "")
        by_player, by_address = public_lobbies(
            self.delivery.rooms.values(), client.player_id, client.address
        )
        by_player += self._opening[player]
        by_address += self._opening[address]
        if by_player >= settings.public_lobbies_per_player:
            raise Refusal(
                ErrorCode.TOO_MANY_LOBBIES,
                "you host too many public lobbies: at "
                f"most {settings.public_lobbies_per_player} at once; start or leave "
                "one, or open this room private",
            )
        if by_address >= settings.public_lobbies_per_address:
            raise Refusal(
                ErrorCode.TOO_MANY_LOBBIES,
                "your address hosts too many public "
                f"lobbies: at most {settings.public_lobbies_per_address} at once; "
                "open this room private",
            )
        return [player] if client.address is None else [player, address]

    def _take_room(self, client: Member) -> None:
        assert client.player_id is not None
        if self.room_quota.take(client.player_id, self.clock()) > 0:
            raise Refusal(
                ErrorCode.TOO_MANY_ROOMS,
                "you have opened too many rooms (a "
                "rematch is one): at most "
                f"{self.settings.rooms_per_player_per_hour:g} an hour",
            )

    def _take_winnable(self, client: Member) -> None:
        assert client.player_id is not None
        if self.winnable_quota.take(client.player_id, self.clock()) > 0:
            raise Refusal(
                ErrorCode.TOO_MANY_WINNABLE,
                "you have asked for too many winnable "
                "deals: at most "
                f"{self.settings.winnable_rooms_per_player_per_hour:g} an hour; a "
                'room without "winnable" is welcome',
            )

    async def _open(self, client: Member, **race_settings: Any) -> Room:
        """A new room with a new race, hosted by ``client``, stored (the host enters it). A
        daily deal's race is stored with its host's one play of the day, or refused, in one
        write."""
        assert client.player_id is not None
        code = await self._new_code()
        terms = RaceTerms(
            race_id=secrets.token_hex(8),
            code=code,
            algorithm=DEAL_ALGORITHM,
            grace_s=self.settings.reconnect_grace_s,
            max_race_s=self.settings.max_race_s,
            idle_s=self.settings.idle_s,
            **race_settings,
        )
        race = Race(
            terms, host_id=client.player_id, host_name=client.name or "", host_bot=client.bot
        )
        try:
            stored = await self._store(race)
        except Refusal:
            self.delivery.directory.release(code)
            raise
        if stored is None:
            self.delivery.directory.release(code)
            raise Refusal(
                ErrorCode.ALREADY_PLAYED, f"you have played today's {race.terms.rule_set} deal"
            )
        room = self.delivery.rooms[race.terms.code] = Room(
            race, self.delivery.outbox(), opened=self.clock(), host_address=client.address
        )
        return room

    def _store(self, race: Race) -> Awaitable[RaceRow | None]:
        """Store a new race, in its lobby (a client waits for it)."""
        return self._write(
            lambda: create_race(
                self.sessions,
                race_id=race.terms.race_id,
                code=race.terms.code,
                rule_set=race.terms.rule_set,
                deal_kind=race.terms.deal_kind,
                seed=race.terms.seed,
                algorithm=race.terms.algorithm,
                rules=race.terms.rules,
                host_id=race.host_id,
                seats_max=race.terms.seats_max,
                time_limit_s=race.terms.time_limit_s,
                holder=self.holder,
                daily_day=race.terms.daily_day,
                winnable=race.terms.winnable,
                public=race.terms.public,
                quick=race.terms.quick,
                invited=None if race.invited is None else sorted(race.invited),
            )
        )

    async def rematch(self, client: Member, room: Room, accept: bool) -> None:
        """A racer's answer to the room's rematch offer, or the offer they make
        (``server.core.rematch``); once everyone asked has accepted, the room's next race. A
        rematch's race is a room's: making the offer takes one of the maker's rooms (and of
        their winnable rooms, for a winnable deal), as ``create`` does."""
        assert client.player_id is not None
        finished = room.race
        if room.rematching is not None:  # agreed: the next race is being made
            await room.rematching
            if room.race is finished:  # (making it failed: this answer is taken afresh)
                await self.rematch(client, room, accept)
            return
        may_rematch(finished, client.player_id)  # before taking from the quotas
        if accept and finished.offer is None:
            if finished.terms.winnable is not None:
                self._take_winnable(client)
            self._take_room(client)
        said, agreed = answer(finished, client.player_id, accept)
        self.delivery.deliver(room, said)
        if agreed is not None:
            await self._rematch(room, agreed)

    def racer_gone(self, room: Room, player_id: str) -> None:
        """A racer left the room or dropped: the rematch offer open no longer waits for them,
        and if that was the last answer it waited for, the next race is made (any failure to
        make it is logged: nobody's request is waiting for it)."""
        said, agreed = racer_gone(room.race, player_id)
        self.delivery.deliver(room, said)
        if agreed is not None:
            task = asyncio.ensure_future(self._rematch(room, agreed))
            self._making.add(task)
            task.add_done_callback(self._made)

    def _made(self, task: asyncio.Future[None]) -> None:
        self._making.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("a rematch agreed could not be made: %s", task.exception())

    async def _rematch(self, room: Room, offer: Offer) -> None:
        """The room's next race, agreed by ``offer``, stored before anyone hears of it. The
        room keeps its outbox, members and code; the finished race is in the database."""
        finished = room.race
        room.rematching = asyncio.get_running_loop().create_future()
        try:
            seed, winnable = await self._draw(
                finished.terms.rule_set,
                finished.terms.seed if (finished.terms.deal_kind == "number") else None,
                finished.terms.winnable is not None,
            )
            if self.delivery.rooms.get(finished.terms.code) is not room:
                raise Refusal(ErrorCode.ROOM_CLOSED, f"room {finished.terms.code} has closed")
            following, out = rematch(
                finished,
                offer,
                race_id=secrets.token_hex(8),
                seed=seed,
                algorithm=DEAL_ALGORITHM,
                winnable=winnable,
            )
            await self._store(following)
            self.delivery.solver.forget_race(finished.terms.race_id)
            room.race, room.opened, room.epoch = following, self.clock(), 1
            self.delivery.deliver(room, out)
        finally:
            room.rematching.set_result(None)
            room.rematching = None

    async def _write(self, action: Callable[[], Awaitable[T]]) -> T:
        return await write_for_client(self.writer, action, self.settings.write_wait_s)
