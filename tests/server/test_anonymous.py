"""Watching by link without a name: ``hello`` with neither name nor token (on both databases)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from clients.sdk import RaceClient, RequestRefused
from server.storage.models import PlayerRow
from tests.server.test_server import Server, Sessions, play_to_end, race_of
from wire.protocol import CLIENT_MESSAGE, ProgressEvent, RaceFinished, YourView


async def anonymous(server: Server) -> RaceClient:
    client = await RaceClient.connect(server.url)
    welcome = await client.hello()
    assert welcome.anonymous and welcome.player_id == "" and welcome.token is None
    return client


async def test_an_anonymous_connection_watches_a_race_and_makes_no_player(
    server: Server, sessions: Sessions
) -> None:
    (ann, bob), code = await race_of(server, "all-fours", ["Ann", "Bob"])
    watcher = await anonymous(server)
    room = await watcher.spectate(code)
    assert room.spectators == 1 and [s.name for s in room.seats] == ["Ann", "Bob"]
    await play_to_end(ann)
    await bob.next_event(YourView)
    await bob.resign()
    progress = await watcher.next_event(ProgressEvent)
    assert progress.player_id in {ann.player_id, bob.player_id}
    finished = await watcher.next_event(RaceFinished, timeout=20)
    assert finished.seed is not None
    assert (await watcher.race_record(finished.race_id))["race_id"] == finished.race_id
    board = await watcher.leaderboard("all-fours", board="deal", deal=finished.seed, around_me=True)
    assert board.me is None
    async with sessions() as session:
        players = await session.scalar(select(func.count()).select_from(PlayerRow))
    assert players == 2


@pytest.mark.parametrize(
    "request_",
    [
        ("create_room", {"rule_set": "octagon"}),
        ("join", {"code": "ABCD2345"}),
        ("ready", {}),
        ("start", {}),
        ("move", {"move": "resign"}),
        ("resign", {}),
        ("daily", {"rule_set": "octagon"}),
        ("hint", {}),
        ("rematch", {}),
    ],
)
async def test_an_anonymous_connection_may_not_open_join_race_or_rematch(
    server: Server, request_: tuple[str, dict[str, str]]
) -> None:
    watcher = await anonymous(server)
    kind, fields = request_
    with pytest.raises(RequestRefused) as refused:
        await watcher.request(CLIENT_MESSAGE.validate_python({"type": kind, **fields}))
    assert refused.value.code == "anonymous"


async def test_an_anonymous_spectator_in_a_room_is_refused_a_seat_and_a_rematch(
    server: Server,
) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room("octagon", seats=2)
    watcher = await anonymous(server)
    watching = await watcher.spectate(room.code)
    assert watching.spectators == 1  # counted in the room, with no room event for it
    for refused_request in (watcher.ready(), watcher.rematch(), watcher.join(room.code)):
        with pytest.raises(RequestRefused) as refused:
            await refused_request
        assert refused.value.code == "anonymous"
    await watcher.leave()
    assert (await watcher.spectate(room.code)).spectators == 1


async def test_a_name_after_an_anonymous_hello_makes_a_player_who_may_race(server: Server) -> None:
    ann = await server.client("Ann")
    watched = await ann.create_room("octagon", seats=2)
    client = await anonymous(server)
    await client.spectate(watched.code)
    with pytest.raises(RequestRefused) as in_room:  # not someone else inside the room
        await client.hello(name="Cy")
    assert in_room.value.code == "in_another_room"
    await client.leave()
    welcome = await client.hello(name="Cy")
    assert not welcome.anonymous and welcome.token is not None
    room = await client.create_room("octagon", seats=2)
    assert room.seats[0].name == "Cy"
