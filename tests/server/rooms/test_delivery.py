"""Room events reach every member in ``seq`` order, and a reply comes after the room events its
request caused, even while a move waits for its commit (a slow database): the real server, real
sockets, a real lock held on the database by another connection."""

from __future__ import annotations

import asyncio
from typing import Any

from clients.sdk import RaceClient
from tests.server.conftest import moves_locked
from tests.server.test_server import DEAL, Server, frames_of, recording_client
from wire.protocol import ProgressEvent, YourView


def room_event_seqs_in_order(frames: list[dict[str, Any]]) -> list[int]:
    """The ``seq`` of every room event a client got, in the order it got them: the events sent
    to it, and those a ``resumed`` reply handed over (replies themselves carry an ``id``), and
    the progress events of its own moves, which its ``move_ok`` replies stand for.

    Each must be the one after the one before, but for what ``resumed`` hands over: of the room
    snapshots it would hand over, only the latest (docs/protocol.md), so it may skip some."""
    seqs: list[int] = []
    for frame in frames:
        if frame["type"] == "resumed":
            handed = [event["seq"] for event in frame["missed"]]
            assert handed == sorted(set(handed)) and all(seq > seqs[-1] for seq in handed), (
                f"resumed with {handed} after {seqs}"
            )
            seqs += handed
        elif "seq" in frame and (frame.get("id") is None or frame["type"] == "move_ok"):
            assert not seqs or frame["seq"] == seqs[-1] + 1, (
                f"room event {frame['seq']} came after {seqs}"
            )
            seqs.append(frame["seq"])
    return seqs


async def a_write_is_queued(server: Server) -> None:
    """Until the server has a database write queued behind one under way."""
    async with asyncio.timeout(5):
        while (await server.http_get("/healthz"))[1]["database"]["queued_writes"] < 1:
            await asyncio.sleep(0.02)


async def progress_of(client: RaceClient, player_id: str | None, moves: int) -> None:
    async with asyncio.timeout(10):
        while True:
            event = await client.next_event(ProgressEvent)
            if (event.player_id, event.moves) == (player_id, moves):
                return


async def test_room_events_keep_their_order_while_a_move_waits_for_a_slow_commit(
    server: Server, database_url: str
) -> None:
    ann, bob, cy, wes = [
        await recording_client(server, name) for name in ("Ann", "Bob", "Cy", "Wes")
    ]
    racers = (ann, bob, cy)
    room = await ann.create_room("octagon", seats=3, deal="number", number=DEAL)
    for client in (bob, cy):
        await client.join(room.code)
    for client in racers:
        await client.ready()
    legal = {client: (await client.next_event(YourView)).view.legal_moves for client in racers}

    async with moves_locked(database_url):
        bob_moves = asyncio.create_task(bob.move(legal[bob][0]))
        await asyncio.sleep(0.1)  # the writer takes Bob's move, and waits on the lock...
        ann_moves = asyncio.create_task(ann.move(legal[ann][0]))
        await a_write_is_queued(server)  # ...and Ann's waits behind it: both moves accepted
        # Meanwhile Cy's connection drops and comes back, and Wes comes to watch: room events
        # the race numbers after the two progress events.
        cy_back = asyncio.create_task(cy.reconnect())
        wes_in = asyncio.create_task(wes.spectate(room.code))
        await asyncio.wait([cy_back, wes_in], timeout=0.5)
        assert not bob_moves.done() and not ann_moves.done(), "acknowledged once stored"
    await asyncio.gather(bob_moves, ann_moves, cy_back, wes_in)

    # One more move, and every client has everything sent before its progress event.
    ack = await ann.move(next(move for move in (await ann_moves).legal_moves if move != "resign"))
    for client in (bob, cy, wes):
        await progress_of(client, ann.player_id, ack.moves)

    moved_first = max(
        frame["seq"]
        for frame in frames_of(bob)
        if frame["type"] == "progress" and frame["moves"] == 1
    )
    watching = await wes_in
    assert moved_first <= watching.seq, "the moves were accepted before Wes came"
    for client in (ann, bob, cy):
        assert len(room_event_seqs_in_order(frames_of(client))) > 1
    # A spectator coming is no room event: Wes's reply shows the room as of the latest event,
    # and every event after it is newer.
    wes_frames = frames_of(wes)
    (reply_at,) = [
        i for i, f in enumerate(wes_frames) if f.get("id") is not None and f["type"] == "room"
    ]
    later = [f["seq"] for f in wes_frames[reply_at + 1 :] if f.get("id") is None and "seq" in f]
    assert later and min(later) > watching.seq, "the reply to spectate overtook an event"
    ann_frames = [f for f in frames_of(ann) if f["type"] in ("progress", "move_ok")]
    assert ann_frames[-1]["type"] == "move_ok" and ann_frames[-1]["seq"] == max(
        frame["seq"] for frame in frames_of(bob) if frame["type"] == "progress"
    ), "Ann's reply stands for the progress event the others got"
    assert all(f["player_id"] != ann.player_id for f in ann_frames if f["type"] == "progress")
