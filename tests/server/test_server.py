"""The real server on an ephemeral port, real WebSocket clients (the SDK), a real database.

Every test runs on SQLite and, when PATIENCE_RACE_TEST_POSTGRES_URL is set, on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosedError

from clients.cli import main as cli_main
from clients.sdk import RaceClient, RequestRefused
from engine.cards import Card
from engine.errors import EngineError
from engine.moves import Move
from engine.registry import find_rule_set
from engine.replay import MoveLog, replay
from server.main import own_address, run_server
from server.settings import Settings
from server.storage.models import EntryRow, MoveRow, PlayerRow, RaceRow
from wire.protocol import (
    MoveAccepted,
    ProgressEvent,
    RaceFinished,
    RaceStarted,
    RoomState,
    ShuttingDown,
    YourView,
)

Sessions = async_sessionmaker[AsyncSession]
DEAL = 424242


@dataclass
class Server:
    url: str
    http: str
    settings: Settings
    stop: asyncio.Future[None]
    task: asyncio.Task[None]

    async def client(self, name: str) -> RaceClient:
        client = await RaceClient.connect(self.url)
        await client.hello(name=name)
        return client

    def get(self, path: str) -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(self.http + path) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    async def http_get(self, path: str) -> tuple[int, Any]:
        return await asyncio.to_thread(self.get, path)


async def start_server(settings: Settings, clock: Callable[[], float] = time.time) -> Server:
    """``clock``: the service's (a ``tests.fakeclock.FakeClock`` to pass deadlines by hand)."""
    loop = asyncio.get_running_loop()
    stop: asyncio.Future[None] = loop.create_future()
    bound: asyncio.Future[tuple[str, int]] = loop.create_future()
    task = asyncio.create_task(
        run_server(settings, stop, lambda h, p: bound.set_result((h, p)), clock=clock)
    )
    host, port = await asyncio.wait_for(asyncio.shield(bound), 30)
    return Server(f"ws://{host}:{port}/ws", f"http://{host}:{port}", settings, stop, task)


async def stop_server(server: Server) -> None:
    if not server.stop.done():
        server.stop.set_result(None)
    await server.task


def make_settings(database_url: str, **overrides: Any) -> Settings:
    """The tests' server: a short countdown; no solver search after each race, no fair-play
    check and no winnable pool (tests/server/rooms/test_solver.py, test_fairplay.py and
    test_pool.py turn them on), which would cost every test a process, and the pool's a CPU
    kept busy."""
    return Settings(
        database_url=database_url,
        port=0,
        **{
            "countdown_s": 0.2,
            "reconnect_grace_s": 30,
            "verdict_budget_s": 0.0,
            "fair_play_s": 0.0,
            "winnable_pool_target": 0,
            **overrides,
        },
    )


async def race_of(
    server: Server, rule_set: str, names: list[str], **options: Any
) -> tuple[list[RaceClient], str]:
    clients = [await server.client(name) for name in names]
    room = await clients[0].create_room(
        rule_set, seats=len(names), deal="number", number=DEAL, **options
    )
    for client in clients[1:]:
        await client.join(room.code)
    for client in clients:
        await client.ready()
    return clients, room.code


async def play_to_end(
    client: RaceClient, pick: Callable[[list[str]], str] = lambda m: m[0], pause: float = 0.0
) -> MoveAccepted:
    view = (await client.next_event(YourView)).view
    moves = view.legal_moves
    while True:
        ack = await client.move(pick([m for m in moves if m != "resign"] or moves))
        if ack.status != "in_progress":
            return ack
        moves = ack.legal_moves
        if pause:
            await asyncio.sleep(pause)


async def test_a_whole_race_of_three_ends_ranked_and_stored(
    server: Server, sessions: Sessions, tmp_path: Path
) -> None:
    (ann, bob, cy), code = await race_of(server, "all-fours", ["Ann", "Bob", "Cy"])
    assert (await ann.next_event(RaceStarted)).deal_number == str(DEAL)
    await play_to_end(ann)
    await play_to_end(bob, pause=0.01)
    await cy.next_event(YourView)
    await cy.resign()
    finished = await cy.next_event(RaceFinished, timeout=20)
    assert finished.seed == str(DEAL)
    statuses = {entry.name: entry.status for entry in finished.ranking}
    assert statuses["Cy"] == "resigned" and finished.ranking[-1].name == "Cy"
    assert [e.rank for e in finished.ranking] == [1, 2, 3]
    first, second = finished.ranking[0], finished.ranking[1]
    if first.status == second.status == "won":
        assert first.time_ms is not None and second.time_ms is not None
        assert first.time_ms <= second.time_ms

    async with sessions() as session:
        race = await session.scalar(select(RaceRow).where(RaceRow.code == code))
        assert race is not None and race.ended_at is not None and race.seed == DEAL
        ranks = dict(
            (
                await session.execute(
                    select(EntryRow.player_id, EntryRow.rank).where(EntryRow.race_id == race.id)
                )
            ).all()
        )
        moves = await session.scalar(
            select(func.count()).select_from(MoveRow).where(MoveRow.race_id == race.id)
        )
    assert sorted(ranks.values()) == [1, 2, 3]
    assert moves == sum(entry.moves for entry in finished.ranking)
    status, health = await server.http_get("/healthz")
    stored = health["database"]
    assert stored["moves_stored"] == moves and 1 <= stored["move_commits"] <= moves

    record = await ann.race_record(finished.race_id)
    for player_id, log in record["logs"].items():
        replayed = replay(MoveLog.from_json(log))
        result = next(r for r in record["results"] if r["player_id"] == player_id)
        assert replayed.outcome().status.value == result["status"]
    status, board = await server.http_get(f"/api/leaderboards/all-fours?board=deal&deal={DEAL}")
    assert status == 200 and len(board["entries"]) == 3

    status, exported = await server.http_get(f"/api/races/{finished.race_id}")
    assert status == 200 and exported == record
    path = tmp_path / "race.json"
    path.write_text(json.dumps(exported))
    assert cli_main(["verify", str(path)]) == 0
    forged = dict(exported, seed=str(DEAL + 1))
    path.write_text(json.dumps(forged))
    assert cli_main(["verify", str(path)]) == 1


async def test_progress_reaches_the_room_but_never_anyone_elses_cards(server: Server) -> None:
    (ann, bob), code = await race_of(server, "octagon", ["Ann", "Bob"])
    view = (await ann.next_event(YourView)).view
    await ann.move(view.legal_moves[0])
    progress = await bob.next_event(ProgressEvent)
    assert progress.player_id == ann.player_id and progress.moves == 1
    assert not re.search(r"\b(?:[2-9]|10|[AJQK])[SHDC]\b", progress.model_dump_json())


async def test_a_spectator_sees_progress_and_results(server: Server) -> None:
    (ann, bob), code = await race_of(server, "hidden-cards", ["Ann", "Bob"])
    watcher = await server.client("Wes")
    room = await watcher.spectate(code)
    assert room.spectators == 1
    await ann.next_event(YourView)
    await bob.next_event(YourView)
    await ann.resign()
    await bob.resign()
    finished = await watcher.next_event(RaceFinished)
    assert {entry.status for entry in finished.ranking} == {"resigned"}
    frames = []
    while not watcher._events.empty():
        frames.append(watcher._events.get_nowait())
    assert not any(isinstance(frame, YourView | MoveAccepted) for frame in frames)


async def test_a_finished_room_stays_a_while_then_only_its_record_does(
    sessions: Sessions, database_url: str
) -> None:
    running = await start_server(make_settings(database_url, finished_room_s=0.5))
    try:
        (ann, bob), code = await race_of(running, "hidden-cards", ["Ann", "Bob"])
        await ann.next_event(YourView)
        await bob.next_event(YourView)
        await ann.resign()
        await bob.resign()
        finished = await ann.next_event(RaceFinished)
        late = await running.client("Wes")
        assert (await late.spectate(code)).phase == "finished"
        await asyncio.sleep(1.0)
        with pytest.raises(RequestRefused) as refused:
            await (await running.client("Zed")).spectate(code)
        assert refused.value.code == "unknown_room"
        status, record = await running.http_get(f"/api/races/{finished.race_id}")
        assert status == 200 and {r["status"] for r in record["results"]} == {"resigned"}
        again = await ann.create_room("octagon")
        assert again.code != code
    finally:
        await stop_server(running)


async def test_a_racer_who_drops_resumes_where_they_were(server: Server) -> None:
    (ann, bob), code = await race_of(server, "puss-in-the-corner", ["Ann", "Bob"])
    view = (await ann.next_event(YourView)).view
    ack = await ann.move(view.legal_moves[0])
    seq_before = ann.last_seq
    assert ack.seq is not None and seq_before == ack.seq, "the reply's seq counts as seen"
    await ann.ws.close()
    await asyncio.sleep(0.1)
    bob_view = (await bob.next_event(YourView)).view
    bob_ack = await bob.move(bob_view.legal_moves[0])
    await bob.move(bob_ack.legal_moves[0])
    resynced = await ann.reconnect()
    assert not resynced.full
    assert all(event["seq"] > seq_before for event in resynced.missed)
    assert any(
        event["type"] == "progress" and event["player_id"] == bob.player_id
        for event in resynced.missed
    )
    assert not any(
        event["type"] == "progress" and event["player_id"] == ann.player_id
        for event in resynced.missed
    ), "Ann's own move is not handed back"
    again = (await ann.next_event(YourView)).view
    assert again.moves == 1 and again.legal_moves == ack.legal_moves
    await ann.move(again.legal_moves[0])


async def test_the_daily_deal_is_played_alone_once_and_keeps_its_seed(
    server: Server, sessions: Sessions
) -> None:
    ann = await server.client("Ann")
    async with sessions.begin() as session:  # ranked today: made before today (test_daily.py)
        await session.execute(
            update(PlayerRow)
            .where(PlayerRow.id == ann.player_id)
            .values(created_at=datetime.now(UTC) - timedelta(days=1))
        )
    room = await ann.daily("hidden-cards")
    assert room.deal_kind == "daily" and room.seats_max == 1
    ack = await play_to_end(ann)
    finished = await ann.next_event(RaceFinished)
    assert finished.seed is None
    await ann.leave()
    with pytest.raises(RequestRefused) as again:
        await ann.daily("hidden-cards")
    assert again.value.code == "already_played"
    board = await ann.leaderboard("hidden-cards", board="daily", around_me=True)
    assert board.me is not None and board.me.player_id == ann.player_id
    assert board.entries[0].deal is None
    assert board.me.on_foundations == ack.on_foundations
    record = await ann.race_record(finished.race_id)
    assert record["seed"] is None and record["logs"] is None


async def test_every_frame_shows_only_cards_face_up_for_its_receiver(server: Server) -> None:
    """Capture every frame each racer receives through a whole race; after the end, re-deal
    from the revealed seed and check each card in each frame was face up for that racer."""
    clients = []
    for name in ("Ann", "Bob"):
        client = await RaceClient.connect(server.url, record=True)
        await client.hello(name=name)
        clients.append(client)
    room = await clients[0].create_room("octagon", seats=2)
    await clients[1].join(room.code)
    for client in clients:
        await client.ready()
    await asyncio.gather(*(play_to_end(client, pick=lambda m: m[-1]) for client in clients))
    finished = await clients[0].next_event(RaceFinished)
    seed = int(finished.seed or "")
    checked = 0
    for client in clients:
        game = find_rule_set("octagon")(seed)
        player_id, frames = client.player_id, client.received or []
        for frame in frames:
            message = json.loads(frame)
            turned: set[str] = set()
            if message["type"] == "move_ok":
                # Cards turned during the move, even if a forced redeal then turned them down
                # again (the engine's property tests check that events name only such cards).
                turned = {
                    str(card)
                    for event in game.play(Move.parse(message["move"]))
                    for card in event.cards
                }
            if message["type"] == "race_finished":
                break
            shown = turned | {str(card) for card in game.view().visible_cards()}
            for card in cards_in(message):
                assert card in shown, f"{player_id} was sent {card}, face down for them: {frame}"
                checked += 1
    assert checked > 200, "the frames named cards, and each was checked"


def cards_in(message: Any) -> set[str]:
    if isinstance(message, dict):
        return set().union(*(cards_in(value) for value in message.values()))
    if isinstance(message, list):
        return set().union(*(cards_in(value) for value in message))
    if isinstance(message, str):
        found = set()
        for word in message.replace(",", " ").split():
            try:
                found.add(str(Card.parse(word)) if word == word.upper() else None)
            except EngineError:
                continue
        return {card for card in found if card}
    return set()


@pytest.mark.parametrize(
    "frame, code",
    [  # (frames the connection refuses before any room sees them: tests/server/net)
        ('{"type": "move", "move": "9Z heap:1 -> heap:2"}', "invalid_move"),
        ('{"type": "join", "code": "NOSUCHROOM"}', "unknown_room"),
    ],
)
async def test_a_room_request_refused_gets_a_structured_error_and_the_connection_lives(
    server: Server, frame: str, code: str
) -> None:
    ann = await server.client("Ann")
    await ann.ws.send(frame)
    error = json.loads(await next_error(ann))
    assert error["code"] == code and error["message"]
    welcome = await ann.hello(token=ann.token)
    assert welcome.player_id == ann.player_id


async def next_error(client: RaceClient) -> str:
    async for message in client.events():
        if message.type == "error":
            return message.model_dump_json()
    raise AssertionError("no error came")


async def test_refusals_in_a_race_leave_the_race_unharmed(server: Server) -> None:
    (ann, bob), code = await race_of(server, "hidden-cards", ["Ann", "Bob"], time_limit_s=None)
    late = await server.client("Lee")
    with pytest.raises(RequestRefused) as started:
        await late.join(code)
    assert started.value.code == "already_started"
    view = (await ann.next_event(YourView)).view
    with pytest.raises(RequestRefused) as illegal:
        await ann.move("KS heap:1 -> heap:13 bottom")
    assert illegal.value.code == "illegal_move" and illegal.value.message
    await ann.resign()
    with pytest.raises(RequestRefused) as finished:
        await ann.move(view.legal_moves[0])
    assert finished.value.code == "finished"
    ack = await bob.move((await bob.next_event(YourView)).view.legal_moves[0])
    assert ack.moves == 1


async def test_moves_before_the_start_and_a_full_room_are_refused(server: Server) -> None:
    ann = await server.client("Ann")
    bob = await server.client("Bob")
    cy = await server.client("Cy")
    room = await ann.create_room("octagon", seats=2)
    with pytest.raises(RequestRefused) as early:
        await ann.move("turn")
    assert early.value.code == "not_racing"
    await bob.join(room.code)
    with pytest.raises(RequestRefused) as full:
        await cy.join(room.code)
    assert full.value.code == "room_full"
    assert (await cy.create_room("octagon")).code != room.code, "refused, Cy is in no room"


async def test_a_flood_is_slowed_then_closed_with_a_policy_code(
    sessions: Sessions, database_url: str
) -> None:
    running = await start_server(
        make_settings(database_url, rate_per_s=5, rate_burst=5, flood_close_after=20)
    )
    try:
        async with connect(running.url) as ws:
            for _ in range(40):
                await ws.send('{"type": "leaderboard", "rule_set": "octagon"}')
            codes = []
            with pytest.raises(ConnectionClosedError):
                async for frame in ws:
                    codes.append(json.loads(frame).get("code"))
            assert "rate_limited" in codes
            assert ws.close_code == 1008
        again = await running.client("Ann")
        assert again.player_id
    finally:
        await stop_server(running)


async def test_http_health_games_boards_and_races(server: Server) -> None:
    status, health = await server.http_get("/healthz")
    assert status == 200 and health["status"] == "ok"
    status, games = await server.http_get("/api/games")
    assert status == 200 and len(games) == 7
    status, board = await server.http_get("/api/leaderboards/octagon?period=week")
    assert status == 200 and board["entries"] == []
    status, error = await server.http_get("/api/leaderboards/octagon?period=year")
    assert status == 400 and "period" in error["message"]
    status, error = await server.http_get("/api/leaderboards/chess")
    assert status == 404
    status, error = await server.http_get("/api/races/nope")
    assert status == 404


async def test_shutdown_tells_clients_and_a_restart_resumes_the_race(
    sessions: Sessions, database_url: str
) -> None:
    first = await start_server(make_settings(database_url))
    (ann, bob), code = await race_of(first, "octagon", ["Ann", "Bob"])
    view = (await ann.next_event(YourView)).view
    ack = await ann.move(view.legal_moves[0])
    await stop_server(first)
    assert isinstance(await ann.next_event(ShuttingDown), ShuttingDown)
    second = await start_server(make_settings(database_url))
    try:
        ann.url = second.url
        resynced = await ann.reconnect()
        assert resynced.full
        again = (await ann.next_event(YourView)).view
        assert again.moves == 1 and again.legal_moves == ack.legal_moves
        await ann.move(again.legal_moves[0])
    finally:
        await stop_server(second)


async def test_a_restart_logs_a_lobby_restored_as_a_lobby_and_a_race_as_a_race(
    sessions: Sessions, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    first = await start_server(make_settings(database_url))
    waiting = await (await first.client("Cy")).create_room("all-fours")
    (ann, _), racing = await race_of(first, "octagon", ["Ann", "Bob"])
    await ann.next_event(YourView)
    await stop_server(first)
    with caplog.at_level(logging.INFO, logger="patience_race"):
        second = await start_server(make_settings(database_url))
        await stop_server(second)
    said = [record.getMessage() for record in caplog.records]
    assert f"lobby {waiting.code} (all-fours) restored from the database" in said, said
    assert f"race {racing} (octagon) restored from the database" in said, said


async def test_the_sdk_waits_out_the_rate_limit_and_every_request_is_answered(
    sessions: Sessions, database_url: str
) -> None:
    """A rate-limited request is refused with its own id, and the SDK retries it."""
    running = await start_server(make_settings(database_url, rate_per_s=20, rate_burst=5))
    try:
        ann = await running.client("Ann")
        boards = await asyncio.gather(*(ann.leaderboard("octagon") for _ in range(30)))
        assert len(boards) == 30 and all(board.entries == [] for board in boards)
    finally:
        await stop_server(running)


async def recording_client(server: Server, name: str, own_progress: bool = False) -> RaceClient:
    """A client that keeps every frame it receives, in order (``received``)."""
    client = await RaceClient.connect(server.url, record=True)
    await client.hello(name=name, own_progress=own_progress)
    return client


def frames_of(client: RaceClient) -> list[dict[str, Any]]:
    return [json.loads(frame) for frame in client.received or []]


async def test_a_move_in_a_room_of_four_writes_four_frames(server: Server) -> None:
    """The mover gets their reply and nothing else; each of the three others gets the move's
    progress event, with the seq the reply carries (five frames a move until 2026-11-24)."""
    clients = [await recording_client(server, name) for name in ("Ann", "Bob", "Cy", "Di")]
    ann, others = clients[0], clients[1:]
    room = await ann.create_room("all-fours", seats=4, deal="number", number=DEAL)
    for client in others:
        await client.join(room.code)
    for client in clients:
        await client.ready()
    views = [(await client.next_event(YourView)).view for client in clients]
    await asyncio.sleep(0.2)  # the room snapshot that follows the views has come too
    seen = {client: len(client.received or []) for client in clients}
    ack = await ann.move(views[0].legal_moves[0])
    for client in others:
        progress = await client.next_event(ProgressEvent)
        assert (progress.player_id, progress.moves, progress.seq) == (ann.player_id, 1, ack.seq)
    await asyncio.sleep(0.2)  # nothing else comes
    new = {
        client: [frame["type"] for frame in frames_of(client)[seen[client] :]] for client in clients
    }
    assert new[ann] == ["move_ok"]
    assert [new[client] for client in others] == [["progress"]] * 3


async def test_a_client_that_does_not_ask_still_gets_the_progress_of_its_own_moves(
    server: Server,
) -> None:
    """Protocol v1 as it was: a hello without ``own_progress`` gets every room event, its own
    moves' progress included (then its reply, which carries the same seq); a client that asked
    gets the reply alone."""
    ann = await recording_client(server, "Ann", own_progress=True)
    bob = await recording_client(server, "Bob")
    room = await ann.create_room("all-fours", seats=2, deal="number", number=DEAL)
    await bob.join(room.code)
    for client in (ann, bob):
        await client.ready()
    views = [(await client.next_event(YourView)).view for client in (ann, bob)]
    await asyncio.sleep(0.2)
    seen = {client: len(client.received or []) for client in (ann, bob)}
    ann_ack = await ann.move(views[0].legal_moves[0])
    bob_ack = await bob.move(views[1].legal_moves[0])
    await asyncio.sleep(0.2)
    new = {
        client: [(frame["type"], frame.get("seq")) for frame in frames_of(client)[seen[client] :]]
        for client in (ann, bob)
    }
    assert new[ann] == [
        ("progress", ann_ack.seq),
        ("move_ok", ann_ack.seq),
        ("progress", bob_ack.seq),
    ]
    assert new[bob] == [("progress", ann_ack.seq), ("move_ok", bob_ack.seq)]


async def test_the_move_that_ends_a_game_is_one_progress_event_to_the_others_then_the_reply(
    server: Server,
) -> None:
    ann, bob = [await recording_client(server, name) for name in ("Ann", "Bob")]
    room = await ann.create_room("all-fours", seats=2, deal="number", number=DEAL)
    await bob.join(room.code)
    for client in (ann, bob):
        await client.ready()
    last = await play_to_end(ann)
    await bob.next_event(YourView)
    await bob.resign()
    await ann.next_event(RaceFinished)
    # A racer's progress reaches the others, and their own reply says it to them.
    for mover, other, final in ((ann, bob, last.status), (bob, ann, "resigned")):
        seen = [
            frame
            for frame in frames_of(other)
            if frame["type"] == "progress" and frame["player_id"] == mover.player_id
        ]
        assert [frame["moves"] for frame in seen] == list(range(1, len(seen) + 1))
        assert [frame["status"] for frame in seen] == ["racing"] * (len(seen) - 1) + [final]
        acks = [frame for frame in frames_of(mover) if frame["type"] == "move_ok"]
        assert [ack["seq"] for ack in acks] == [frame["seq"] for frame in seen]
        assert not [
            frame
            for frame in frames_of(mover)
            if frame["type"] == "progress" and frame["player_id"] == mover.player_id
        ]
    types = [frame["type"] for frame in frames_of(bob)]
    assert types[-3:] == ["move_ok", "race_finished", "room"]


async def test_a_racer_who_leaves_the_race_is_shown_gone(server: Server) -> None:
    (ann, bob), code = await race_of(server, "octagon", ["Ann", "Bob"])
    await ann.next_event(YourView)
    await ann.leave()
    left = await bob.next_event(ProgressEvent)
    assert (left.player_id, left.status) == (ann.player_id, "resigned")
    room = await bob.next_event(RoomState)
    assert room.seq == left.seq + 1
    assert [seat.connected for seat in room.seats if seat.player_id == ann.player_id] == [False]
    await bob.resign()
    await bob.next_event(RaceFinished)
    end = await bob.next_event(RoomState)
    assert end.phase == "finished"
    assert {seat.player_id: seat.connected for seat in end.seats} == {
        ann.player_id: False,
        bob.player_id: True,
    }


def test_listening_everywhere_with_redis_advertises_the_advertised_host_or_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``reconnect_to`` must be an address other machines' clients reach: ``0.0.0.0`` is not."""
    redis = "redis://127.0.0.1:6379/0"
    assert (
        own_address(
            Settings(redis_url=redis, host="0.0.0.0", advertise_host="10.0.0.2"), "0.0.0.0", 8800
        )
        == "ws://10.0.0.2:8800/ws"
    )
    assert (
        own_address(Settings(host="0.0.0.0", redis_url=None), "0.0.0.0", 8765)
        == "ws://0.0.0.0:8765/ws"
    )
    assert (
        own_address(Settings(redis_url=redis, advertise_host=None), "127.0.0.1", 8800)
        == "ws://127.0.0.1:8800/ws"
    )
    assert not caplog.records, "no Redis (no reconnect_to), or a host that is an address"
    assert (
        own_address(Settings(redis_url=redis, host="0.0.0.0", advertise_host=None), "0.0.0.0", 8800)
        == "ws://0.0.0.0:8800/ws"
    )
    assert "PATIENCE_RACE_ADVERTISE_HOST" in caplog.text
