"""Storing moves, the hot path: every commit of moves, hundreds a second, on a connection held
open and with the two statements it makes written once as the driver takes them.

A commit checks which of its races this process still holds (``server.storage.holding``:
another process may have taken one) and inserts the moves of those, skipping any already
stored, so that a batch can be retried whole. Through SQLAlchemy's statement objects the two
statements cost more than the database's own work when a commit holds a few moves (the open
loop's profile put 28 % of the server's CPU in building and caching them); here they are SQL
text made once per database, and per number of races for the first, the same SQL SQLAlchemy
makes for ``holding.stale`` and ``dialect.insert_new``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from functools import cache
from itertools import chain

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.core.said import MoveMade

INSERT_MOVES = {
    "qmark": (
        'INSERT INTO moves (race_id, player_id, "index", text, at_ms) VALUES (?, ?, ?, ?, ?) '
        'ON CONFLICT (race_id, player_id, "index") DO NOTHING'
    ),
    "numeric_dollar": (
        "INSERT INTO moves (race_id, player_id, index, text, at_ms) "
        "VALUES ($1::VARCHAR, $2::VARCHAR, $3::INTEGER, $4::VARCHAR, $5::INTEGER) "
        "ON CONFLICT (race_id, player_id, index) DO NOTHING"
    ),
}
"""A move stored unless it is already, by the driver's parameter style: SQLite's (aiosqlite)
and PostgreSQL's (asyncpg)."""


@cache
def still_held(paramstyle: str, races: int) -> str:
    """The races of these (id, epoch) pairs whose epoch is still the one given, their rows
    locked until the transaction ends (``holding.stale``)."""
    if paramstyle == "qmark":
        pairs = ", ".join(["(?, ?)"] * races)
        return (
            "UPDATE races SET holder_epoch=races.holder_epoch "
            f"WHERE (races.id, races.holder_epoch) IN (VALUES {pairs}) RETURNING id"
        )
    if paramstyle == "numeric_dollar":
        pairs = ", ".join(f"(${2 * n + 1}, ${2 * n + 2})" for n in range(races))
        return (
            "UPDATE races SET holder_epoch=races.holder_epoch "
            f"WHERE (races.id, races.holder_epoch) IN ({pairs}) RETURNING races.id"
        )
    raise NotImplementedError(f"no SQL written for the parameter style {paramstyle}")


class MoveRecorder:
    """Moves stored over a connection of its own, held open from one batch to the next.

    The server's writer commits a batch of moves before it acknowledges them, hundreds of times
    a second: a session per batch (with a pool checkout, a reset on return, and on PostgreSQL a
    ping) cost 1.0-1.2 ms of CPU per commit, the insert on a held connection 0.45 ms. After any
    error the connection is dropped, and the writer's retry opens a new one."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._connection: AsyncConnection | None = None
        self._paramstyle = engine.dialect.paramstyle
        if self._paramstyle not in INSERT_MOVES:
            raise NotImplementedError(f"no SQL written for {engine.dialect.name}")

    async def __call__(
        self, moves: Mapping[str, Sequence[MoveMade]], epochs: Mapping[str, int]
    ) -> set[str]:
        """Store the moves of each race (by race id) still held at these epochs (race id:
        epoch), in one transaction; return the races held by another process now, whose moves
        are not stored (``server.storage.holding``)."""
        if self._connection is None:
            self._connection = await self._engine.connect()
        connection = self._connection
        try:
            async with connection.begin():
                fenced = set(epochs)
                if epochs:
                    held = await connection.exec_driver_sql(
                        still_held(self._paramstyle, len(epochs)),
                        tuple(chain.from_iterable(epochs.items())),
                    )
                    fenced -= {row[0] for row in held}
                rows = [
                    (race_id, move.player_id, move.index, move.text, move.at_ms)
                    for race_id, made in moves.items()
                    if race_id not in fenced
                    for move in made
                ]
                if rows:
                    await connection.exec_driver_sql(INSERT_MOVES[self._paramstyle], rows)
                return fenced
        except Exception:
            await self.close()
            raise

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):  # it may be the broken one
                await connection.close()
