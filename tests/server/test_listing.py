"""The list of open public rooms, ``GET /api/rooms`` (``server.listing``): from one process's
rooms (on both databases), and across two workers through Redis."""

from __future__ import annotations

import asyncio
from typing import Any

from server.listing import LISTED, local_list
from server.outbox import Outbox
from server.rooms import Room
from tests.server.test_bus import hopping, two_workers
from tests.server.test_race import T0, new_race
from tests.server.test_server import Server

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
    expected = [room.race.code for room in reversed(rooms[:-1]) if room.race.public][:LISTED]
    assert [entry["code"] for entry in shown] == expected
    assert shown[0] == {"code": "ROOM0068", "rule_set": "hidden-cards", "host": "Ann",
                        "racers": 1, "seats": 2, "deal_kind": "secret", "time_limit_s": None}


async def test_a_public_room_is_listed_until_it_is_full_or_started(server: Server) -> None:
    ann, bob, cy, di = [await server.client(name) for name in ("Ann", "Bob", "Cy", "Di")]
    assert await listed(server) == []
    first = await ann.create_room("octagon", seats=2, public=True, time_limit_s=600)
    await bob.create_room("octagon", seats=2)  # private: never listed
    second = await cy.create_room("all-fours", seats=3, deal="number", number=7, public=True)
    rooms = await listed(server)
    assert [room["code"] for room in rooms] == [second.code, first.code], "newest first"
    assert rooms[1] == {"code": first.code, "rule_set": "octagon", "host": "Ann", "racers": 1,
                        "seats": 2, "deal_kind": "secret", "time_limit_s": 600}
    assert rooms[0]["deal_kind"] == "number"
    joined = await di.join(first.code)
    assert joined.public
    assert [room["code"] for room in await listed(server)] == [second.code], "full"
    await di.leave()
    assert [room["code"] for room in await listed(server)] == [second.code, first.code]
    await cy.start()
    assert [room["code"] for room in await listed(server)] == [first.code], "started"


async def test_every_worker_lists_the_public_rooms_of_every_worker(
        database_url: str, redis_url: str) -> None:
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
