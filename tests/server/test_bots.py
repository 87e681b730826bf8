"""Bots labelled (issue 27): ``hello`` says a client is a bot, the account stays one, a race with
a bot rates nobody (and a rebuild decides the same), and every board marks bots. On both
databases; the hop between workers with Redis."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from clients.sdk import RaceClient
from server.storage.models import EntryRow, PlayerRow
from server.storage.ratings import rebuild
from tests.server.cluster.test_bus import two_workers
from tests.server.storage.test_ratings import BEHIND_A_PROXY, secret_race, table
from tests.server.test_abuse import server_with
from tests.server.test_server import Server, Sessions
from wire.protocol import RoomState


async def stored_bot(sessions: Sessions, player_id: str) -> bool:
    async with sessions.begin() as session:
        return (await session.get_one(PlayerRow, player_id)).bot


async def test_a_player_made_a_bot_stays_one_whatever_later_hellos_say(
    server: Server, sessions: Sessions
) -> None:
    client = await RaceClient.connect(server.url)
    made = await client.hello(name="Robo", bot=True)
    assert made.bot and made.token is not None
    again = await client.hello(token=made.token)
    assert again.bot and again.player_id == made.player_id
    assert (await client.hello(token=made.token, bot=False)).bot
    assert await stored_bot(sessions, made.player_id)
    await client.close()
    person = await RaceClient.connect(server.url)
    ann = await person.hello(name="Ann")
    assert not ann.bot and not await stored_bot(sessions, ann.player_id)
    watcher = await RaceClient.connect(server.url)
    assert not (await watcher.hello(bot=True)).bot  # anonymous: no account to be a bot
    for connection in (person, watcher):
        await connection.close()


async def test_a_token_hello_as_a_bot_marks_the_account_for_ever(
    server: Server, sessions: Sessions
) -> None:
    ann = await server.client("Ann")
    assert ann.token is not None and ann.player_id is not None
    assert (await ann.hello(token=ann.token, bot=True)).bot
    assert await stored_bot(sessions, ann.player_id)
    assert (await ann.hello(token=ann.token)).bot
    await ann.close()


async def test_a_bot_joining_by_the_hop_is_marked_on_its_seat(
    database_url: str, redis_url: str, sessions: Sessions
) -> None:
    """The bot's connection is on the second worker, the room on the first: the mark goes
    with the hop."""
    async with two_workers(database_url, redis_url) as (first, second):
        ann = await first.client("Ann")
        bot = await RaceClient.connect(second.url, follow_reconnect_to=False)
        await bot.hello(name="Robo", bot=True)
        room = await ann.create_room("octagon", seats=2)
        joined = await bot.join(room.code)
        assert [(seat.name, seat.bot) for seat in joined.seats] == [("Ann", False), ("Robo", True)]
        seen = await ann.next_event(RoomState)
        assert [seat.bot for seat in seen.seats] == [False, True]
        for client in (ann, bot):
            await client.close()


async def test_a_race_with_a_bot_rates_nobody_and_marks_the_bot_everywhere(
    database_url: str, sessions: Sessions
) -> None:
    """Ann and Bob race Robo, a bot, on a secret deal from addresses of their own: nobody is
    rated (stored at the start, so a rebuild finds the same), and Robo is marked in the
    ranking, on the deal's board and in the race's record."""
    tokens: dict[str, str | None] = {}
    async with server_with(database_url, **BEHIND_A_PROXY) as server:
        (finished, *_) = await secret_race(
            server, ["Ann", "Bob", "Robo"], tokens, bots=frozenset({"Robo"})
        )
        assert all(entry.rating is None for entry in finished.ranking)
        assert {entry.name: entry.bot for entry in finished.ranking} == {
            "Ann": False,
            "Bob": False,
            "Robo": True,
        }
        assert finished.seed is not None
        status, board = await server.http_get(
            f"/api/leaderboards/all-fours?board=deal&deal={finished.seed}"
        )
        assert status == 200
        assert {line["name"]: line["bot"] for line in board["entries"]} == {
            "Ann": False,
            "Bob": False,
            "Robo": True,
        }
        watcher = await server.client("Cy")
        over_websocket = await watcher.leaderboard("all-fours", board="deal", deal=finished.seed)
        assert {line.name: line.bot for line in over_websocket.entries} == {
            line["name"]: line["bot"] for line in board["entries"]
        }
        await watcher.close()
        status, record = await server.http_get(f"/api/races/{finished.race_id}")
        assert status == 200
        robo = {line["player_id"] for line in record["players"] if line["name"] == "Robo"}
        assert marked(record["players"]) == marked(record["results"]) == robo
    async with sessions.begin() as session:
        rated_as = set(
            await session.scalars(
                select(EntryRow.rated_as).where(EntryRow.race_id == finished.race_id)
            )
        )
    assert rated_as == {None}
    live = await table(sessions)
    assert live == ([], [])
    assert await rebuild(sessions) == 0
    assert await table(sessions) == live


def marked(lines: list[dict[str, Any]]) -> set[str]:
    """The player ids of the lines marked as bots."""
    return {line["player_id"] for line in lines if line["bot"]}


async def test_a_rated_player_who_turns_bot_is_marked_on_the_rated_board_and_rated_no_more(
    database_url: str, sessions: Sessions
) -> None:
    """Ann's ratings of before stay (who was rated in a race was decided at its start), marked
    on the rated board, over HTTP; her races from then on rate nobody."""
    tokens: dict[str, str | None] = {}
    async with server_with(database_url, **BEHIND_A_PROXY) as server:
        for _ in range(2):
            (rated, *_) = await secret_race(server, ["Ann", "Bob"], tokens)
            assert all(entry.rating is not None for entry in rated.ranking)
        (unrated, *_) = await secret_race(server, ["Ann", "Bob"], tokens, bots=frozenset({"Ann"}))
        assert all(entry.rating is None for entry in unrated.ranking)
        (again, *_) = await secret_race(server, ["Ann", "Bob"], tokens)  # a bot for ever
        assert all(entry.rating is None for entry in again.ranking)
        status, board = await server.http_get("/api/ratings/all-fours")
    assert status == 200
    assert {line["name"]: (line["bot"], line["races"]) for line in board["lines"]} == {
        "Ann": (True, 2),
        "Bob": (False, 2),
    }
    live = await table(sessions)
    assert await rebuild(sessions) == 2
    assert await table(sessions) == live
