"""Hostile clients and the boards, on the real server with real databases (issue 10).

- The daily deal is played once per player per day, even when one token asks for it on several
  connections at once: the database decides, and the others get ``already_played``.
- Scouting: an identity made today may play today's daily deal and sees its result, but is not
  ranked on today's boards; an older identity is.
- A chosen deal (``deal.kind: "number"``) is practice: its wins are on that deal's board, never
  on the fastest or most wins boards, and the room says so. A secret deal's wins are on all.

Every test runs on SQLite and, when PATIENCE_RACE_TEST_POSTGRES_URL is set, on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import secrets
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from clients.sdk import RaceClient, RequestRefused
from server.storage.models import PlayerRow, RaceRow
from tests.server.test_server import Server, play_to_end
from wire.protocol import RaceFinished, RoomState, YourView

Sessions = async_sessionmaker[AsyncSession]
RULE_SET = "all-fours"
WON_BY_PLAYING_ON = 3
"""An All Fours deal that playing every move as it comes wins (as tests/clients/test_web.py)."""


@pytest.fixture
def deal_won_by_playing_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every deal the server draws (secret, daily) is WON_BY_PLAYING_ON, so a test can win one."""
    monkeypatch.setattr(secrets, "randbits", lambda bits: WON_BY_PLAYING_ON)


async def made_yesterday(sessions: Sessions, client: RaceClient) -> None:
    """Backdate the player's identity to before today (UTC) began."""
    async with sessions.begin() as session:
        await session.execute(
            update(PlayerRow)
            .where(PlayerRow.id == client.player_id)
            .values(created_at=datetime.now(UTC) - timedelta(days=1, hours=1))
        )


async def same_player(server: Server, client: RaceClient) -> RaceClient:
    """Another connection, as the same player (hello with their token)."""
    other = await RaceClient.connect(server.url)
    await other.hello(token=client.token)
    return other


async def daily_to_the_end(client: RaceClient) -> RaceFinished:
    await client.daily(RULE_SET)
    ack = await play_to_end(client)
    assert ack.status == "won"
    return await client.next_event(RaceFinished)


async def test_simultaneous_daily_requests_with_one_token_open_one_game(
    server: Server, sessions: Sessions
) -> None:
    ann = await server.client("Ann")
    await made_yesterday(sessions, ann)  # ranked on today's board, so that it shows the plays
    connections = [ann, *[await same_player(server, ann) for _ in range(5)]]
    replies = await asyncio.gather(
        *(client.daily(RULE_SET) for client in connections), return_exceptions=True
    )
    opened = [
        client
        for client, reply in zip(connections, replies, strict=True)
        if isinstance(reply, RoomState)
    ]
    for client in opened:
        await client.next_event(YourView)
        await client.resign()
        await client.next_event(RaceFinished)
    assert len(opened) == 1, replies
    assert [reply.code for reply in replies if isinstance(reply, RequestRefused)] == [
        "already_played"
    ] * 5
    async with sessions.begin() as session:
        dailies = await session.scalar(
            select(func.count())
            .select_from(RaceRow)
            .where(RaceRow.host_id == ann.player_id, RaceRow.deal_kind == "daily")
        )
    assert dailies == 1
    board = await ann.leaderboard(RULE_SET, board="daily")
    assert [entry.player_id for entry in board.entries] == [ann.player_id]
    with pytest.raises(RequestRefused) as again:
        await (await same_player(server, ann)).daily(RULE_SET)
    assert again.value.code == "already_played"


async def test_an_identity_made_today_plays_the_daily_but_is_not_ranked_today(
    server: Server, sessions: Sessions, deal_won_by_playing_on: None
) -> None:
    old = await server.client("Old")
    await made_yesterday(sessions, old)
    new = await server.client("New")
    for client in (old, new):
        finished = await daily_to_the_end(client)
        assert [(line.player_id, line.status) for line in finished.ranking] == [
            (client.player_id, "won")
        ]  # everyone sees their own result
    daily = await new.leaderboard(RULE_SET, board="daily", around_me=True)
    assert [line.name for line in daily.entries] == ["Old"]
    assert daily.me is None
    fastest = await new.leaderboard(RULE_SET, board="fastest", around_me=True)
    assert [line.name for line in fastest.entries] == ["Old"] and fastest.me is None
    wins = await new.leaderboard(RULE_SET, board="most_wins")
    assert [(line.name, line.wins) for line in wins.entries] == [("Old", 1)]


async def race_to_the_end(ann: RaceClient, bob: RaceClient, **deal: object) -> RoomState:
    """Ann wins (playing every move as it comes), Bob resigns; the room as created."""
    room = await ann.create_room(RULE_SET, **deal)  # type: ignore[arg-type]
    await bob.join(room.code)
    await ann.ready()
    await bob.ready()
    assert (await play_to_end(ann)).status == "won"
    await bob.next_event(YourView)
    await bob.resign()
    await ann.next_event(RaceFinished)
    await ann.leave()
    await bob.leave()
    return room


async def test_a_chosen_deal_is_practice_counted_only_on_its_deal_board(
    server: Server, deal_won_by_playing_on: None
) -> None:
    ann, bob = await server.client("Ann"), await server.client("Bob")
    chosen = await race_to_the_end(ann, bob, deal="number", number=WON_BY_PLAYING_ON)
    assert chosen.deal_kind == "number" and chosen.model_dump().get("ranked") is False
    for board in ("fastest", "most_wins"):
        practice = await ann.leaderboard(RULE_SET, board=board, around_me=True)
        assert practice.entries == [] and practice.me is None, board
    deal = await ann.leaderboard(RULE_SET, board="deal", deal=str(WON_BY_PLAYING_ON))
    assert [(line.name, line.status) for line in deal.entries] == [
        ("Ann", "won"),
        ("Bob", "resigned"),
    ]

    secret = await race_to_the_end(ann, bob)  # the same deal, drawn in secret this time
    assert secret.deal_kind == "secret" and secret.model_dump().get("ranked") is True
    fastest = await ann.leaderboard(RULE_SET, board="fastest")
    assert [(line.name, line.status) for line in fastest.entries] == [("Ann", "won")]
    wins = await ann.leaderboard(RULE_SET, board="most_wins")
    assert [(line.name, line.wins) for line in wins.entries] == [("Ann", 1)]
    deal = await ann.leaderboard(RULE_SET, board="deal", deal=str(WON_BY_PLAYING_ON))
    assert [line.name for line in deal.entries] == ["Ann", "Ann", "Bob", "Bob"]
    status, http = await server.http_get(f"/api/leaderboards/{RULE_SET}?board=fastest")
    assert status == 200 and "Chosen deals are practice" in http["counts"]
