"""Which process holds each race in progress, kept in the database: the fence that leaves a
room exactly one holder, whatever Redis forgets.

Redis (``server.cluster.redis_bus``) says which worker holds which room, but it keeps nothing on
disk: restarted, it has forgotten every room, and a worker that trusted its silence would take over
rooms another worker still holds, and both would accept moves. So the truth is kept beside the
moves, on the race's row:

- ``holder``: the process that holds the race (its name on the bus, or the one server's);
- ``holder_epoch``: grows by one each time the race is taken;
- ``held_until``: the holder's lease, which it renews every second or so (``renew``: a race
  not renewed has been taken, and its room is let go), and gives up when it stops
  (``release``).

A new race is stored held by the process that opens it, at epoch 1 (``store.create_race``).
``take`` takes the races of some rooms that nobody holds, that the taker holds already, or
whose lease has run out (their holder is dead, stalled or cut off from the database), bumping
their epochs, and reads them back to rebuild them, in one transaction; a race whose holder
still renews its lease is left to it, whatever Redis says. The one server of a deployment
without Redis takes every race in progress at start (``force``): there is nobody else.

Every write of a race (its moves, start and result) checks, in the transaction that makes it,
that the writer's epoch is still the race's (``stale``, ``check``). The check locks the race's
row (an update that changes nothing), so a take waits for a write under way and a write for a
take. A write of a stale epoch fails with ``Fenced``: it is not retried and never
acknowledged, and its process lets go of the room, whose racers reconnect and resume where the
room is now, with every move that was acknowledged.

Leases are compared with the taker's clock: the clocks of the hosts must agree to well within
``LEASE_S`` (NTP keeps them within milliseconds).
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Collection, Mapping
from datetime import datetime, timedelta
from typing import cast

from sqlalchemy import ColumnElement, Table, or_, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession, async_sessionmaker
from sqlalchemy.orm import selectinload

from server.storage.models import EntryRow, RaceRow

LEASE_S = 4.0
"""How long a holder's lease runs. A worker renews it every ``directory.HEARTBEAT_S`` (1 s),
before its Redis heartbeat: its lease has run out before its heartbeat (``redis_bus.WORKER_TTL_S``,
5 s) has, so when Redis says a worker is dead its races may be taken at once."""

_RACES = cast(Table, RaceRow.__table__)


class Fenced(Exception):
    """A write for races that another process holds now."""

    def __init__(self, race_ids: Collection[str]) -> None:
        super().__init__(f"races held by another process now: {', '.join(sorted(race_ids))}")
        self.race_ids = frozenset(race_ids)


def process_name() -> str:
    """A name for this process, unique among every process that ever holds races: host, pid
    and a random part (a pid is used again after a restart)."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}"


def lease_end(now: datetime) -> datetime:
    return now + timedelta(seconds=LEASE_S)


async def stale(connection: AsyncConnection | AsyncSession, epochs: Mapping[str, int]) -> set[str]:
    """Of these races (id: the writer's epoch), those whose epoch has moved on; the rows of the
    others are locked until the transaction ends. One statement, whatever the number of
    races: it is made with every commit of moves."""
    if not epochs:
        return set()
    kept = await connection.execute(
        update(_RACES)
        .where(tuple_(_RACES.c.id, _RACES.c.holder_epoch).in_(list(epochs.items())))
        .values(holder_epoch=_RACES.c.holder_epoch)
        .returning(_RACES.c.id)
    )
    return set(epochs) - set(kept.scalars())


async def check(session: AsyncSession, race_id: str, epoch: int | None) -> None:
    """Raise ``Fenced`` unless ``epoch`` is still the race's (None: the caller holds no
    race, as a maintenance command does, and nothing is checked)."""
    if epoch is not None and await stale(session, {race_id: epoch}):
        raise Fenced([race_id])


async def take(
    sessions: async_sessionmaker[AsyncSession],
    codes: Collection[str] | None,
    holder: str,
    now: datetime,
    force: bool = False,
) -> list[RaceRow]:
    """Take the races in progress of these room codes (None: of every room) that may be taken,
    and return them, oldest first, with what it takes to rebuild them (host, entries and
    players, each entry's moves in order) and their new epochs."""
    taking: ColumnElement[bool] = _RACES.c.ended_at.is_(None)
    if codes is not None:
        taking &= _RACES.c.code.in_(codes)
    if not force:
        taking &= or_(
            _RACES.c.holder.is_(None), _RACES.c.holder == holder, _RACES.c.held_until < now
        )
    async with sessions.begin() as session:
        taken = list(
            (
                await session.execute(
                    update(_RACES)
                    .where(taking)
                    .values(
                        holder=holder,
                        holder_epoch=_RACES.c.holder_epoch + 1,
                        held_until=lease_end(now),
                    )
                    .returning(_RACES.c.id)
                )
            ).scalars()
        )
        if not taken:
            return []
        races = await session.scalars(
            select(RaceRow)
            .where(RaceRow.id.in_(taken))
            .order_by(RaceRow.created_at)
            .options(
                selectinload(RaceRow.host),
                selectinload(RaceRow.entries).selectinload(EntryRow.player),
                selectinload(RaceRow.entries).selectinload(EntryRow.move_log),
            )
        )
        return list(races)


async def holders(
    sessions: async_sessionmaker[AsyncSession], codes: Collection[str]
) -> dict[str, str]:
    """Who holds the races in progress of these room codes, by code (a race nobody holds is
    left out)."""
    async with sessions.begin() as session:
        rows = await session.execute(
            select(RaceRow.code, RaceRow.holder).where(
                RaceRow.code.in_(codes), RaceRow.ended_at.is_(None), RaceRow.holder.is_not(None)
            )
        )
        return {code: holder for code, holder in rows if holder is not None}


async def epochs(
    sessions: async_sessionmaker[AsyncSession], race_ids: Collection[str]
) -> dict[str, int]:
    """The epochs of these races now, by id."""
    async with sessions.begin() as session:
        rows = await session.execute(
            select(RaceRow.id, RaceRow.holder_epoch).where(RaceRow.id.in_(race_ids))
        )
        return {race_id: epoch for race_id, epoch in rows}


async def renew(sessions: async_sessionmaker[AsyncSession], holder: str, now: datetime) -> set[str]:
    """Renew the lease of every race in progress this holder holds, in one statement; return
    their ids (a race of the holder's rooms that is not among them has been taken)."""
    async with sessions.begin() as session:
        renewed = await session.execute(
            update(_RACES)
            .where(_RACES.c.holder == holder, _RACES.c.ended_at.is_(None))
            .values(held_until=lease_end(now))
            .returning(_RACES.c.id)
        )
        return set(renewed.scalars())


async def release(sessions: async_sessionmaker[AsyncSession], holder: str) -> None:
    """The holder stops: its races in progress may be taken at once."""
    async with sessions.begin() as session:
        await session.execute(
            update(_RACES)
            .where(_RACES.c.holder == holder, _RACES.c.ended_at.is_(None))
            .values(holder=None)
        )
