"""No racer can hold a race open, against the real server with short limits: a racer who never
moves is finished while the others race on, and a race with no time limit still ends, its
result stored either way."""

from __future__ import annotations

import asyncio

from tests.server.test_server import Sessions, make_settings, race_of, start_server, stop_server
from wire.protocol import ProgressEvent, RaceFinished, YourView


async def test_a_racer_who_never_moves_is_finished_and_the_other_races_on(
    sessions: Sessions, database_url: str
) -> None:
    running = await start_server(make_settings(database_url, idle_s=1.0))
    try:
        (ann, bob), code = await race_of(running, "puss-in-the-corner", ["Ann", "Bob"])
        view = (await ann.next_event(YourView)).view
        ack = await ann.move(view.legal_moves[0])
        await asyncio.sleep(0.6)
        ack = await ann.move(ack.legal_moves[0])  # Ann keeps her idle while from running out
        gone = await ann.next_event(ProgressEvent, timeout=5)
        while gone.player_id != bob.player_id:
            gone = await ann.next_event(ProgressEvent, timeout=5)
        assert gone.status == "abandoned"
        assert bob.ws.state.name == "OPEN", "Bob is still connected: only his seat is done"
        await asyncio.sleep(0.3)
        await ann.move(ack.legal_moves[0])  # the race is still on for Ann
        await ann.resign()
        finished = await ann.next_event(RaceFinished, timeout=5)
        assert {entry.name: entry.status for entry in finished.ranking} == {
            "Ann": "resigned",
            "Bob": "abandoned",
        }
        status, record = await running.http_get(f"/api/races/{finished.race_id}")
        assert status == 200
        assert sorted(r["status"] for r in record["results"]) == ["abandoned", "resigned"]
    finally:
        await stop_server(running)


async def test_a_race_without_a_time_limit_ends_at_its_longest(
    sessions: Sessions, database_url: str
) -> None:
    running = await start_server(make_settings(database_url, max_race_s=1.0, idle_s=60))
    try:
        (ann, bob), code = await race_of(running, "hidden-cards", ["Ann", "Bob"])
        await ann.next_event(YourView)
        finished = await ann.next_event(RaceFinished, timeout=5)
        assert [entry.status for entry in finished.ranking] == ["timed_out", "timed_out"]
        assert {entry.time_ms for entry in finished.ranking} == {1000}
        status, record = await running.http_get(f"/api/races/{finished.race_id}")
        assert status == 200
        assert [r["status"] for r in record["results"]] == ["timed_out", "timed_out"]
    finally:
        await stop_server(running)


async def test_deadlines_put_off_by_moves_are_still_kept(
    sessions: Sessions, database_url: str
) -> None:
    """The room's timer is not set again after a move (a move only puts deadlines off): it
    wakes the race at the deadline both racers had at the start, finds nothing due, and is set
    again for the deadlines their moves put off, which end the race."""
    running = await start_server(make_settings(database_url, idle_s=2.0))
    try:
        (ann, bob), code = await race_of(running, "puss-in-the-corner", ["Ann", "Bob"])
        views = [(await racer.next_event(YourView)).view for racer in (ann, bob)]
        await asyncio.sleep(0.6)  # into the race, well before the first deadline (2 s)
        for racer, view in zip((ann, bob), views, strict=True):
            await racer.move(view.legal_moves[0])
        finished = await ann.next_event(RaceFinished, timeout=10)
        for entry in finished.ranking:
            assert entry.status == "abandoned"
            assert entry.time_ms is not None and entry.time_ms >= 2500, (
                f"{entry.name} was finished at the first deadline, as if the move had not put "
                f"it off ({entry.time_ms} ms)"
            )
    finally:
        await stop_server(running)
