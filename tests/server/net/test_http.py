"""The HTTP API against hostile clients (server/net/http.py), on a real server with real sockets:
methods other than GET and HEAD, bad query parameters (and the same over the WebSocket), the
rate limit per client address, and the cache of finished races' records and replays
(server/net/records.py)."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from websockets.asyncio.client import connect

import server.net.records as race_records
from server.storage.models import RaceRow
from tests.server.test_server import (
    Server,
    make_settings,
    play_to_end,
    race_of,
    start_server,
    stop_server,
)
from wire.protocol import RaceFinished, YourView

Sessions = async_sessionmaker[AsyncSession]

OTHER_METHODS = ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"]
BAD_LEADERBOARD_QUERIES = [
    ("board=daily&day=2026-13-45", "day"),
    ("board=daily&day=2026-02-30", "day"),
    ("board=daily&day=0000-01-01", "day"),
    # full-width digits: "\d" matches them, int() and date.fromisoformat() read some of them
    ("board=daily&day=%EF%BC%92%EF%BC%90%EF%BC%92%EF%BC%96-01-01", "day"),
    ("board=deal&deal=18446744073709551616", "deal"),
    ("board=deal&deal=99999999999999999999", "deal"),
    ("board=deal&deal=%EF%BC%97", "deal"),
    ("board=deal&deal=-1", "deal"),
    ("limit=%EF%BC%91%EF%BC%90", "limit"),
    ("limit=0", "limit"),
    ("board=deal", "deal"),
    ("colour=red", "colour"),
    ("type=hello", "type"),
    ("rule_set=octagon", "rule_set"),
    ("player=" + "x" * 65, "player"),
    ("player=%00", "player"),
]


def http_request(
    server: Server, method: str, path: str, source: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One request on its own connection, from ``source`` (another loopback address, to be
    another client) if given; every byte of the answer up to the server's end of file, so a
    body sent after a HEAD would show."""
    host, port = server.http.removeprefix("http://").split(":")
    with socket.create_connection(
        (host, int(port)), timeout=10, source_address=None if source is None else (source, 0)
    ) as s:
        s.sendall(f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {
        name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)
    }
    return int(status_line.split()[1]), headers, body


async def request(
    server: Server, method: str, path: str, source: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    return await asyncio.to_thread(http_request, server, method, path, source)


@pytest.fixture
def server_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Everything the server logs (it runs in this process) while the test runs."""
    with caplog.at_level(logging.INFO):
        yield caplog


def second_address_works() -> bool:
    try:
        with socket.socket() as probe:
            probe.bind(("127.0.0.2", 0))
    except OSError:
        return False
    return True


def tracebacks(log: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in log.records
        if record.exc_info is not None or record.levelno >= logging.ERROR
    ]


# -- methods --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/games",
        "/healthz",
        "/",
        "/api/leaderboards/octagon",
        "/api/races/nope",
        "/nothing",
        "/ws",
    ],
)
async def test_only_get_and_head_are_allowed(server: Server, path: str) -> None:
    for method in OTHER_METHODS:
        status, headers, body = await request(server, method, path)
        allowed = "GET" if path == "/ws" else "GET, HEAD"
        assert (status, headers.get("allow")) == (405, allowed), (method, path)
        assert json.loads(body)["error"] == "method_not_allowed"
    if path == "/ws":  # a WebSocket handshake is a GET
        status, headers, body = await request(server, "HEAD", path)
        assert (status, headers.get("allow"), body) == (405, "GET", b"")


@pytest.mark.parametrize(
    "path",
    [
        "/api/games",
        "/healthz",
        "/",
        "/app.js",
        "/api/leaderboards/octagon",
        "/api/races/nope",
        "/nothing",
    ],
)
async def test_head_answers_as_get_without_the_body(server: Server, path: str) -> None:
    """HEAD between two GETs that answered alike (``/healthz`` changes as the server learns
    the winnable pool's counts): it says what they said, without the body."""
    for _ in range(20):
        get_status, get_headers, get_body = await request(server, "GET", path)
        status, headers, body = await request(server, "HEAD", path)
        if (await request(server, "GET", path))[2] == get_body:
            break
    assert status == get_status
    assert body == b""
    assert headers["content-length"] == str(len(get_body)) == get_headers["content-length"]
    assert headers["content-type"] == get_headers["content-type"]


async def test_the_limits_websockets_sets_are_as_documented(server: Server) -> None:
    """docs/protocol.md lists them with the answers they give: kept true here."""
    status, _, _ = await request(server, "GET", "/api/games?" + "a" * 8200)
    assert status == 414
    host, port = server.http.removeprefix("http://").split(":")

    def send(raw: bytes) -> bytes:
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(raw)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        return data

    many = b"".join(b"X-%d: v\r\n" % number for number in range(129))
    assert (await asyncio.to_thread(send, b"GET / HTTP/1.1\r\n" + many + b"\r\n")).startswith(
        b"HTTP/1.1 431 "
    )
    assert (
        await asyncio.to_thread(send, b"POST /api/games HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}")
        == b""
    )


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(("query", "named"), BAD_LEADERBOARD_QUERIES)
async def test_bad_leaderboard_parameters_are_a_400_naming_them(
    server: Server, server_log: pytest.LogCaptureFixture, query: str, named: str
) -> None:
    status, headers, body = await request(server, "GET", f"/api/leaderboards/octagon?{query}")
    assert status == 400, body
    assert headers["content-type"] == "application/json"
    error = json.loads(body)
    assert error["error"] == "bad_request" and named in error["message"]
    assert tracebacks(server_log) == []


async def test_good_edge_values_are_still_accepted(server: Server) -> None:
    for query in [
        "board=deal&deal=18446744073709551615",
        "board=deal&deal=0",
        "board=daily&day=2024-02-29",
        "limit=100",
        "player=someone",
    ]:
        status, _, body = await request(server, "GET", f"/api/leaderboards/octagon?{query}")
        assert status == 200, (query, body)
    status, _, body = await request(server, "GET", "/api/leaderboards/octagon?board=deal&deal=007")
    assert json.loads(body)["deal"] == "7"


WEBSOCKET_BAD_LEADERBOARDS: list[dict[str, Any]] = [
    {"board": "daily", "day": "2026-13-45"},
    {"board": "daily", "day": "2026-02-30"},
    {"board": "daily", "day": "２０２６-01-01"},
    {"board": "daily", "day": "٢٠٢٦-01-01"},
    {"board": "deal", "deal": "18446744073709551616"},
    {"board": "deal", "deal": "99999999999999999999"},
    {"board": "deal", "deal": "７"},
]


NO_DEAL_NUMBERS = [
    ("-1", "a deal number is written in the digits 0-9 only, not '-1'"),
    ("+1", "a deal number is written in the digits 0-9 only, not '+1'"),
    ("9" * 25, "a deal number is at most 2^64-1 = 18446744073709551615, not " + "9" * 25),
]
"""RULINGS principle 7: a signed number is text, not a number (a client hashes a text seed to
its deal number, docs/deals.md); digits alone past 2^64-1, however many, are no deal."""


@pytest.mark.parametrize(("number", "reason"), NO_DEAL_NUMBERS)
async def test_what_is_no_deal_number_is_refused_saying_why_everywhere(
    server: Server, number: str, reason: str
) -> None:
    async with connect(server.url) as ws:
        await ws.send(json.dumps({"type": "hello", "name": "Ann"}))
        assert json.loads(await ws.recv())["type"] == "welcome"
        for asked in (
            {
                "type": "create_room",
                "rule_set": "octagon",
                "deal": {"kind": "number", "number": number},
            },
            {"type": "leaderboard", "rule_set": "octagon", "board": "deal", "deal": number},
        ):
            await ws.send(json.dumps(asked))
            reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert (reply["type"], reply["code"]) == ("error", "invalid_message"), reply
            assert reason in reply["message"], reply
    status, _, body = await request(
        server, "GET", f"/api/leaderboards/octagon?board=deal&deal={quote(number)}"
    )
    assert status == 400 and reason in json.loads(body)["message"], body


async def test_bad_leaderboard_requests_over_the_websocket_are_invalid_messages(
    server: Server, server_log: pytest.LogCaptureFixture
) -> None:
    async with connect(server.url) as ws:
        await ws.send(json.dumps({"type": "hello", "name": "Ann"}))
        assert json.loads(await ws.recv())["type"] == "welcome"
        for number, fields in enumerate(WEBSOCKET_BAD_LEADERBOARDS):
            await ws.send(
                json.dumps(
                    {"type": "leaderboard", "id": str(number), "rule_set": "octagon", **fields}
                )
            )
            reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert (reply["type"], reply["id"], reply["code"]) == (
                "error",
                str(number),
                "invalid_message",
            ), (fields, reply)
            assert next(iter(fields.keys() - {"board"})) in reply["message"]
        await ws.send(json.dumps({"type": "leaderboard", "id": "chess", "rule_set": "chess"}))
        reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert (reply["type"], reply["id"], reply["code"]) == ("error", "chess", "unknown_rule_set")
        await ws.send(
            json.dumps(
                {
                    "type": "leaderboard",
                    "id": "ok",
                    "rule_set": "octagon",
                    "board": "deal",
                    "deal": "18446744073709551615",
                }
            )
        )
        reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert (reply["type"], reply["id"]) == ("leaderboard", "ok")
    assert tracebacks(server_log) == []


@pytest.mark.parametrize("race_id", ["\x00", "a\x00b", "%00", "x" * 200])
async def test_a_race_id_that_no_race_can_have_is_a_404(
    server: Server, server_log: pytest.LogCaptureFixture, race_id: str
) -> None:
    """Sent as it is, not percent-encoded: the path is not decoded, and PostgreSQL refuses a NUL
    in text (a 500 before)."""
    for path in [f"/api/races/{race_id}", f"/api/races/{race_id}/replay?player=someone"]:
        status, _, body = await request(server, "GET", path)
        assert status == 404 and json.loads(body)["error"] == "not_found", path
    assert tracebacks(server_log) == []


# -- rate limit -------------------------------------------------------------------------------


async def test_a_flood_from_one_address_gets_429_with_retry_after(
    sessions: Sessions, database_url: str
) -> None:
    running = await start_server(
        make_settings(database_url, http_rate_per_s=0.01, http_rate_burst=3)
    )
    try:
        answers = [await request(running, "GET", "/api/games") for _ in range(3)]
        assert [status for status, _, _ in answers] == [200, 200, 200]
        for path in [
            "/api/games",
            "/api/leaderboards/octagon",
            "/api/races/nope/replay",
            "/api/nothing",
        ]:
            status, headers, body = await request(running, "GET", path)
            assert status == 429, path
            assert 1 <= int(headers["retry-after"]) <= 100
            assert json.loads(body)["error"] == "too_many_requests"
        status, headers, body = await request(running, "HEAD", "/api/games")
        assert (status, body) == (429, b"") and "retry-after" in headers
        # Health and the browser's files are not under /api/: cheap, and never limited.
        for path in ["/healthz", "/", "/app.js"]:
            assert (await request(running, "GET", path))[0] == 200, path
        if second_address_works():  # Linux: all of 127/8 is this machine
            status, _, _ = await request(running, "GET", "/api/games", source="127.0.0.2")
            assert status == 200
    finally:
        await stop_server(running)


# -- the cache of finished races ----------------------------------------------------------------


class Counted:
    """Wraps a function and counts its calls."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function, self.calls = function, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.function(*args, **kwargs)


async def test_a_finished_race_is_replayed_once_then_answered_from_the_cache(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ann, bob), _ = await race_of(server, "all-fours", ["Ann", "Bob"])
    await play_to_end(ann)
    await bob.next_event(YourView)
    await bob.resign()
    finished = await ann.next_event(RaceFinished)
    records = Counted(race_records.race_record)
    replays = Counted(race_records.replay_steps)
    monkeypatch.setattr(race_records, "race_record", records)
    monkeypatch.setattr(race_records, "replay_steps", replays)

    path = f"/api/races/{finished.race_id}/replay?player={ann.player_id}"
    first = await request(server, "GET", path)
    assert first[0] == 200 and (records.calls, replays.calls) == (1, 1)
    for method in ["GET", "GET", "HEAD"]:
        status, headers, body = await request(server, method, path)
        assert (status, headers["content-length"]) == (200, first[1]["content-length"])
        assert body == (first[2] if method == "GET" else b"")
    assert (records.calls, replays.calls) == (1, 1)

    status, _, record = await request(server, "GET", f"/api/races/{finished.race_id}")
    assert status == 200 and json.loads(record)["seed"] == str(finished.seed)
    assert records.calls == 1  # the record came with the first replay, revealed: kept
    status, _, other = await request(
        server, "GET", f"/api/races/{finished.race_id}/replay?player={bob.player_id}"
    )
    assert status == 200 and json.loads(other)["player_id"] == bob.player_id
    assert (records.calls, replays.calls) == (1, 2)


async def test_a_daily_race_is_not_cached_while_its_seed_is_secret(
    server: Server, sessions: Sessions, monkeypatch: pytest.MonkeyPatch
) -> None:
    ann = await server.client("Ann")
    await ann.daily("octagon")
    await ann.resign()
    daily = await ann.next_event(RaceFinished)
    assert daily.seed is None
    records = Counted(race_records.race_record)
    monkeypatch.setattr(race_records, "race_record", records)

    for _ in range(2):
        status, _, body = await request(server, "GET", f"/api/races/{daily.race_id}")
        record = json.loads(body)
        assert status == 200 and record["seed"] is None and record["logs"] is None
        status, _, _ = await request(
            server, "GET", f"/api/races/{daily.race_id}/replay?player={ann.player_id}"
        )
        assert status == 403
    assert records.calls == 4

    # The day is over (moved back a day rather than waiting for midnight): revealed, then kept.
    async with sessions.begin() as session:
        await session.execute(
            update(RaceRow)
            .where(RaceRow.id == daily.race_id)
            .values(daily_day=datetime.now(UTC).date() - timedelta(days=1))
        )
    for _ in range(2):
        status, _, body = await request(server, "GET", f"/api/races/{daily.race_id}")
        record = json.loads(body)
        assert status == 200 and record["seed"] is not None and record["logs"] is not None
    assert records.calls == 5


async def test_requests_and_connections_make_no_line_in_the_log_but_at_debug(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    """websockets says "connection open" and "connection closed" for each (and a line for each
    HTTP answer): at DEBUG only, or a busy server's log is nothing else."""

    async def requests() -> None:
        for path in ("/healthz", "/api/games", "/"):
            await request(server, "GET", path)
        async with connect(server.url) as ws:
            await ws.send(json.dumps({"type": "hello"}))
            await ws.recv()

    with caplog.at_level(logging.INFO):
        await requests()
        assert [
            record.getMessage() for record in caplog.records if record.name.startswith("websockets")
        ] == []
    with caplog.at_level(logging.DEBUG, logger="websockets.server"):
        await requests()
        said = {
            record.getMessage()
            for record in caplog.records
            if record.name == "websockets.server" and record.levelno == logging.DEBUG
        }
        assert {"connection open", "connection closed"} <= said, said
