"""Hostile clients and the boards, on the real server with real databases (issue 10).

- The daily deal is played once per player per day, even when one token asks for it on several
  connections at once: the database decides, and the others get ``already_played``.

Every test runs on SQLite and, when PATIENCE_RACE_TEST_POSTGRES_URL is set, on PostgreSQL.
"""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from clients.sdk import RaceClient, RequestRefused
from server.db import RaceRow
from server.protocol import RaceFinished, RoomState, YourView
from tests.server.test_server import Server

Sessions = async_sessionmaker[AsyncSession]
RULE_SET = "all-fours"


async def same_player(server: Server, client: RaceClient) -> RaceClient:
    """Another connection, as the same player (hello with their token)."""
    other = await RaceClient.connect(server.url)
    await other.hello(token=client.token)
    return other


async def test_simultaneous_daily_requests_with_one_token_open_one_game(
        server: Server, sessions: Sessions) -> None:
    ann = await server.client("Ann")
    connections = [ann, *[await same_player(server, ann) for _ in range(5)]]
    replies = await asyncio.gather(*(client.daily(RULE_SET) for client in connections),
                                   return_exceptions=True)
    opened = [client for client, reply in zip(connections, replies, strict=True)
              if isinstance(reply, RoomState)]
    for client in opened:
        await client.next_event(YourView)
        await client.resign()
        await client.next_event(RaceFinished)
    assert len(opened) == 1, replies
    assert [reply.code for reply in replies if isinstance(reply, RequestRefused)] == [
        "already_played"] * 5
    async with sessions.begin() as session:
        dailies = await session.scalar(select(func.count()).select_from(RaceRow).where(
            RaceRow.host_id == ann.player_id, RaceRow.deal_kind == "daily"))
    assert dailies == 1
    board = await ann.leaderboard(RULE_SET, board="daily")
    assert [entry.player_id for entry in board.entries] == [ann.player_id]
    with pytest.raises(RequestRefused) as again:
        await (await same_player(server, ann)).daily(RULE_SET)
    assert again.value.code == "already_played"
