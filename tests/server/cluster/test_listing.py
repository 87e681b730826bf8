"""The list of open public rooms, ``GET /api/rooms`` (``server.cluster.listing``): from one
process's
rooms (on both databases), and across two workers through Redis; the addresses in turn, and
the public lobbies each player and address may host."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from clients.sdk import RaceClient, RequestRefused
from server.core.lobbies import LISTED
from server.rooms.outbox import Outbox
from server.rooms.room import Room, local_list
from tests.server.cluster.test_bus import hopping, two_workers
from tests.server.core.test_race import T0, new_race
from tests.server.test_abuse import reply, server_with
from tests.server.test_server import Server, Sessions

TRIES = 200
"""How many times a worker's list is read before it is taken not to show a change (the Redis
list is written after the change, by the room's worker)."""


async def listed(server: Server) -> list[dict[str, Any]]:
    status, body = await server.http_get("/api/rooms")
    assert status == 200
    rooms: list[dict[str, Any]] = body["rooms"]
    return rooms


async def codes_become(server: Server, expected: list[str]) -> list[str]:
    for _ in range(TRIES):
        codes = [room["code"] for room in await listed(server)]
        if codes == expected:
            break
        await asyncio.sleep(0.02)
    return codes


def test_the_list_is_the_newest_public_lobbies_with_a_free_seat_and_at_most_fifty() -> None:
    rooms = []
    for index in range(LISTED + 20):
        race = new_race(code=f"ROOM{index:04d}", public=index % 7 != 0, seats_max=2)
        rooms.append(Room(race, Outbox(lambda members, frame: None), opened=T0 + index))
    rooms[-1].race.join("p2", "Bob", T0)  # full
    shown = local_list(rooms)
    assert len(shown) == LISTED
    expected = [room.race.terms.code for room in reversed(rooms[:-1]) if room.race.terms.public][
        :LISTED
    ]
    assert [entry["code"] for entry in shown] == expected
    assert shown[0] == {
        "code": "ROOM0068",
        "rule_set": "hidden-cards",
        "host": "Ann",
        "racers": 1,
        "seats": 2,
        "deal_kind": "secret",
        "time_limit_s": None,
    }


async def test_a_public_room_is_listed_until_it_is_full_or_started(server: Server) -> None:
    ann, bob, cy, di = [await server.client(name) for name in ("Ann", "Bob", "Cy", "Di")]
    assert await listed(server) == []
    first = await ann.create_room("octagon", seats=2, public=True, time_limit_s=600)
    await bob.create_room("octagon", seats=2)  # private: never listed
    second = await cy.create_room("all-fours", seats=3, deal="number", number=7, public=True)
    rooms = await listed(server)
    assert [room["code"] for room in rooms] == [second.code, first.code], "newest first"
    assert rooms[1] == {
        "code": first.code,
        "rule_set": "octagon",
        "host": "Ann",
        "racers": 1,
        "seats": 2,
        "deal_kind": "secret",
        "time_limit_s": 600,
    }
    assert rooms[0]["deal_kind"] == "number"
    joined = await di.join(first.code)
    assert joined.public
    assert [room["code"] for room in await listed(server)] == [second.code], "full"
    await di.leave()
    assert [room["code"] for room in await listed(server)] == [second.code, first.code]
    await cy.start()
    assert [room["code"] for room in await listed(server)] == [first.code], "started"


async def test_every_worker_lists_the_public_rooms_of_every_worker(
    database_url: str, redis_url: str
) -> None:
    async with two_workers(database_url, redis_url) as (first, second):
        ann, cy = await first.client("Ann"), await first.client("Cy")
        bob = await hopping(second, "Bob")
        room = await ann.create_room("octagon", seats=2, public=True)
        await cy.create_room("octagon", seats=2)  # private
        for server in (first, second):
            assert await codes_become(server, [room.code]) == [room.code]
        await bob.join(room.code)  # through the second worker: the room is full
        for server in (first, second):
            assert await codes_become(server, []) == []
        await bob.leave()
        assert await codes_become(second, [room.code]) == [room.code]
        await ann.leave()  # the host alone leaves: nobody is seated, nothing to list
        assert await codes_become(second, []) == []


# -- one address cannot fill the list (issue 23) ---------------------------------------------

FLOODER = "198.51.100.23"


def test_the_addresses_take_turns_so_an_older_honest_room_stays_second() -> None:
    def lobby(code: str, opened: float, address: str) -> Room:
        race = new_race(code=code, public=True, seats_max=2)
        return Room(race, Outbox(lambda members, frame: None), opened=opened, host_address=address)

    honest = lobby("HONEST00", T0, "192.0.2.1")
    flood = [lobby(f"FLOOD{index:03d}", T0 + 1 + index, FLOODER) for index in range(LISTED + 9)]
    shown = local_list([honest, *flood])
    assert len(shown) == LISTED
    assert [entry["code"] for entry in shown[:3]] == ["FLOOD058", "HONEST00", "FLOOD057"]
    assert all(set(entry) == set(shown[1]) for entry in shown)  # no address in the list
    assert "192.0.2.1" not in str(shown)


async def lobby_from(server: Server, address: str, name: str, held: list[ClientConnection]) -> str:
    """A public lobby opened by a new player from ``address`` (behind the trusted proxy),
    its connection kept in ``held``."""
    ws = await connect(server.url, additional_headers={"X-Forwarded-For": address})
    held.append(ws)
    await ws.send(json.dumps({"type": "hello", "name": name}))
    await reply(ws)
    await ws.send(json.dumps({"type": "create_room", "rule_set": "octagon", "public": True}))
    room = await reply(ws)
    assert room["type"] == "room", room
    code: str = room["code"]
    return code


TAKING_TURNS: dict[str, Any] = {
    "trusted_proxies": frozenset({"127.0.0.1"}),
    "public_lobbies_per_player": 5,
    "public_lobbies_per_address": 5,
}


async def honest_room_comes_second(
    honest_server: Server, flood_server: Server, servers: tuple[Server, ...]
) -> None:
    """The honest room, opened first, comes second after three lobbies of one address."""
    held: list[ClientConnection] = []
    honest = await lobby_from(honest_server, "192.0.2.1", "Ann", held)
    flood = [await lobby_from(flood_server, FLOODER, f"Flood {n}", held) for n in range(3)]
    expected = [flood[2], honest, flood[1], flood[0]]
    for server in servers:
        assert await codes_become(server, expected) == expected
    for ws in held:
        await ws.close()


async def test_lobbies_of_one_address_take_turns_with_the_others(
    sessions: Sessions, database_url: str
) -> None:
    async with server_with(database_url, **TAKING_TURNS) as server:
        await honest_room_comes_second(server, server, (server,))


async def test_lobbies_of_one_address_take_turns_with_the_others_across_workers(
    sessions: Sessions, database_url: str, redis_url: str
) -> None:
    async with two_workers(database_url, redis_url, **TAKING_TURNS) as (first, second):
        await honest_room_comes_second(first, second, (first, second))


async def test_public_lobbies_are_bounded_per_player_and_per_address(
    sessions: Sessions, database_url: str
) -> None:
    async with server_with(
        database_url, public_lobbies_per_player=1, public_lobbies_per_address=2
    ) as server:
        ann, bob, cy = [await server.client(name) for name in ("Ann", "Bob", "Cy")]
        await ann.create_room("octagon", public=True)
        second = await RaceClient.connect(server.url)
        await second.hello(token=ann.token)
        with pytest.raises(RequestRefused) as refused:
            await second.create_room("octagon", public=True)
        assert refused.value.code == "too_many_lobbies"
        await second.create_room("octagon")  # private: always allowed
        await bob.create_room("octagon", public=True)
        with pytest.raises(RequestRefused) as refused:
            await cy.create_room("octagon", public=True)
        assert refused.value.code == "too_many_lobbies"
        await ann.start()  # a lobby started is no lobby: the address may open another
        await cy.create_room("octagon", public=True)
