"""The operator's fair-play API (server/net/fairplay.py) on a real server: not there without
an operator token, refused without the token or with another, and the review itself."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from server.storage.fairplay import record_checks
from tests.server.storage.test_fairplay import RACES, store, verdicts
from tests.server.storage.test_store import NOW, Sessions
from tests.server.test_server import Server, make_settings, start_server, stop_server

TOKEN = "an operator's secret"
PATHS = [
    ("GET", "/api/fairplay"),
    ("GET", "/api/fairplay/someRace"),
    ("POST", "/api/fairplay/someRace/clear"),
    ("POST", "/api/fairplay/players/somePlayer/ban"),
]


def call(
    server: Server, method: str, path: str, token: str | None = None
) -> tuple[int, dict[str, str], Any]:
    request = urllib.request.Request(server.http + path, method=method)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, dict(refused.headers), json.loads(refused.read())


async def ask(
    server: Server, method: str, path: str, token: str | None = TOKEN
) -> tuple[int, dict[str, str], Any]:
    return await asyncio.to_thread(call, server, method, path, token)


@pytest_asyncio.fixture
async def operated(sessions: Sessions, database_url: str) -> AsyncIterator[Server]:
    """The server with an operator token."""
    running = await start_server(make_settings(database_url, operator_token=TOKEN))
    try:
        yield running
    finally:
        await stop_server(running)


@pytest.mark.parametrize(("method", "path"), PATHS)
async def test_without_an_operator_token_the_api_is_not_there(
    server: Server, method: str, path: str
) -> None:
    for token in (None, "", TOKEN):
        status, _, body = await ask(server, method, path, token)
        assert (status, body["error"]) == (404, "not_found")


@pytest.mark.parametrize(("method", "path"), PATHS)
async def test_a_request_without_the_token_or_with_another_is_refused(
    operated: Server, method: str, path: str
) -> None:
    for token in (None, "", TOKEN + "x", TOKEN[:-1], "Basic " + TOKEN):
        status, headers, body = await ask(operated, method, path, token)
        assert (status, body["error"]) == (401, "unauthorized"), token
        assert headers["WWW-Authenticate"].startswith("Bearer")


async def test_the_operator_reviews_held_results_over_http(
    operated: Server, sessions: Sessions
) -> None:
    assert (await ask(operated, "GET", "/api/fairplay"))[::2] == (200, {"held": []})
    ids, race_ids = await store(sessions, RACES)
    await record_checks(sessions, race_ids[1], verdicts(RACES[1], ids, "dan"), NOW)

    status, _, body = await ask(operated, "GET", "/api/fairplay")
    assert status == 200
    assert [(c["race_id"], c["name"], c["status"]) for c in body["held"]] == [
        (race_ids[1], "dan", "flagged")
    ]
    assert body["held"][0]["signals"]["reasons"] == ["even_intervals"]
    status, _, body = await ask(operated, "GET", f"/api/fairplay/{race_ids[1]}")
    assert (status, {c["name"] for c in body["checks"]}) == (200, {"dan", "ann"})
    assert (await ask(operated, "GET", f"/api/fairplay/{race_ids[0]}"))[0] == 404
    assert (await ask(operated, "GET", f"/api/fairplay/{race_ids[1]}/clear"))[0] == 405
    assert (await ask(operated, "POST", f"/api/fairplay/{race_ids[1]}"))[0] == 405

    status, _, body = await ask(operated, "POST", f"/api/fairplay/{race_ids[1]}/clear")
    assert (status, body) == (200, {"race_id": race_ids[1], "cleared": [ids["dan"]]})
    assert (await ask(operated, "POST", f"/api/fairplay/{race_ids[1]}/clear"))[0] == 404
    _, _, board = await ask(operated, "GET", "/api/leaderboards/octagon?board=most_wins", None)
    assert "dan" in [line["name"] for line in board["entries"]]

    status, _, body = await ask(operated, "POST", f"/api/fairplay/players/{ids['dan']}/ban")
    assert (status, body) == (200, {"player_id": ids["dan"], "banned": True})
    _, _, board = await ask(operated, "GET", "/api/leaderboards/octagon?board=most_wins", None)
    assert "dan" not in [line["name"] for line in board["entries"]]
    assert (await ask(operated, "POST", "/api/fairplay/players/nobody/ban"))[0] == 404


async def test_guessing_the_token_costs_the_address_its_allowance(
    sessions: Sessions, database_url: str
) -> None:
    settings = make_settings(
        database_url, operator_token=TOKEN, http_rate_burst=3, http_rate_per_s=0.01
    )
    running = await start_server(settings)
    try:
        statuses = [(await ask(running, "GET", "/api/fairplay", f"guess{n}"))[0] for n in range(5)]
        assert statuses == [401, 401, 401, 429, 429]
        assert (await ask(running, "GET", "/api/fairplay"))[0] == 429  # the right one waits too
    finally:
        await stop_server(running)
