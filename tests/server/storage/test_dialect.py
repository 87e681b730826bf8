"""Inserts that meet a row already stored (``server.storage.dialect``), on real databases:
SQLite always, PostgreSQL when configured (conftest.py). A row whose primary key is taken is
skipped, the stored row kept; the others are inserted."""

from __future__ import annotations

from datetime import UTC, date, datetime
from types import SimpleNamespace
from typing import Any, cast

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession, async_sessionmaker

from server.storage.dialect import insert, insert_new, insert_or_ignore
from server.storage.models import DailyPlayRow, PlayerRow

Sessions = async_sessionmaker[AsyncSession]
CREATED = datetime(2026, 11, 28, tzinfo=UTC)
DAY = date(2026, 11, 28)


def player(player_id: str, name: str) -> dict[str, Any]:
    return {"id": player_id, "name": name, "token_hash": f"hash-{name}", "created_at": CREATED}


async def players(sessions: Sessions) -> dict[str, str]:
    async with sessions() as session:
        rows = await session.execute(select(PlayerRow.id, PlayerRow.name))
        return {player_id: name for player_id, name in rows}


async def test_insert_new_skips_the_rows_whose_key_is_taken_and_keeps_the_stored_one(
    sessions: Sessions,
) -> None:
    async with sessions.begin() as session:
        await insert_new(await session.connection(), PlayerRow, [player("a", "Ann")])
    async with sessions.begin() as session:
        await insert_new(
            await session.connection(), PlayerRow, [player("a", "Again"), player("b", "Bob")]
        )
    assert await players(sessions) == {"a": "Ann", "b": "Bob"}


async def test_insert_new_stores_a_row_repeated_in_one_call_once(sessions: Sessions) -> None:
    async with sessions.begin() as session:
        await insert_new(
            await session.connection(), PlayerRow, [player("a", "Ann"), player("a", "Again")]
        )
    assert await players(sessions) == {"a": "Ann"}


async def test_insert_new_of_no_rows_stores_nothing(sessions: Sessions) -> None:
    async with sessions.begin() as session:
        await insert_new(await session.connection(), PlayerRow, [])
    assert await players(sessions) == {}


async def test_insert_or_ignore_skips_a_taken_key_of_several_columns_and_says_so(
    sessions: Sessions,
) -> None:
    async with sessions.begin() as session:
        await insert_new(await session.connection(), PlayerRow, [player("a", "Ann")])

    async def claim(day: date) -> bool:
        async with sessions.begin() as session:
            connection = await session.connection()
            stored = await connection.execute(
                insert_or_ignore(connection, DailyPlayRow)
                .values(rule_set="octagon", day=day, player_id="a")
                .returning(DailyPlayRow.player_id)
            )
            return stored.first() is not None

    assert await claim(DAY) is True
    assert await claim(DAY) is False, "the same rule set, day and player: skipped"
    assert await claim(date(2026, 11, 29)) is True
    async with sessions() as session:
        assert len((await session.execute(select(DailyPlayRow))).all()) == 2


def test_an_insert_on_conflict_is_not_written_for_other_databases() -> None:
    elsewhere = cast(AsyncConnection, SimpleNamespace(dialect=SimpleNamespace(name="mysql")))
    with pytest.raises(NotImplementedError, match="mysql"):
        insert(elsewhere, cast(Any, PlayerRow.__table__))
