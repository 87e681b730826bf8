"""What the browser client needs from the server's HTTP side: its static files
(server/net/static.py), compressed and cacheable, and the replay endpoint
GET /api/races/ID/replay?player=PID, on a real server."""

from __future__ import annotations

import asyncio
import gzip
import http.client
import re
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from websockets.datastructures import Headers

from server.net.static import WEB_ROOT, static_response, web_file
from server.storage.models import RaceRow
from tests.server.test_server import (
    Server,
    play_to_end,
    race_of,
)
from wire.protocol import MoveAccepted, RaceFinished, YourView

Sessions = async_sessionmaker[AsyncSession]


def raw_get(server: Server, path: str) -> tuple[int, str, bytes]:
    """GET the path exactly as written (urllib would normalise ``..`` away)."""
    host, port = server.http.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read()
    finally:
        connection.close()


# -- static files -------------------------------------------------------------------------------


async def test_the_page_and_its_files_are_served_with_their_types(server: Server) -> None:
    status, kind, body = await asyncio.to_thread(raw_get, server, "/")
    assert status == 200 and kind.startswith("text/html")
    assert b'<script type="module" src="/app.js">' in body
    for path, expected in [
        ("/app.js", "text/javascript"),
        ("/board.js", "text/javascript"),
        ("/style.css", "text/css"),
        ("/index.html", "text/html"),
    ]:
        status, kind, _ = await asyncio.to_thread(raw_get, server, path)
        assert (status, kind.split(";")[0]) == (200, expected), path


async def test_unknown_files_and_paths_out_of_the_web_directory_are_not_found(
    server: Server,
) -> None:
    for path in [
        "/nothing.js",
        "/../pyproject.toml",
        "/%2e%2e/pyproject.toml",
        "/..%2f..%2fpyproject.toml",
        "/%2fetc%2fpasswd",
        "/.hidden",
        "/web/app.js",
        "/app.js%00.css",
        "/..\\pyproject.toml",
    ]:
        status, kind, _ = await asyncio.to_thread(raw_get, server, path)
        assert (status, kind) == (404, "application/json"), path
    status, _, body = await asyncio.to_thread(raw_get, server, "/api/nothing")
    assert status == 404 and b"not_found" in body


def test_a_symbolic_link_out_of_the_web_directory_is_not_served(tmp_path: Path) -> None:
    root = tmp_path / "web"
    root.mkdir()
    (root / "app.js").write_text("ok")
    (tmp_path / "secret.js").write_text("secret")
    (root / "link.js").symlink_to(tmp_path / "secret.js")
    (root / "notes.txt").write_text("not a web type")
    assert web_file("/app.js", root) == (root / "app.js").resolve()
    assert web_file("/", root) is None  # no index.html in this directory
    assert web_file("/link.js", root) is None
    assert web_file("/notes.txt", root) is None


def test_a_text_file_is_gzipped_for_a_browser_that_takes_it_with_a_strong_etag(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.js").write_text("export const board = 1;\n" * 200)
    plain = static_response("/app.js", Headers(), tmp_path)
    packed = static_response("/app.js", Headers({"Accept-Encoding": "br, gzip, deflate"}), tmp_path)
    assert plain is not None and packed is not None
    assert "Content-Encoding" not in plain.headers
    assert packed.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(packed.body) == plain.body == (tmp_path / "app.js").read_bytes()
    assert int(packed.headers["Content-Length"]) == len(packed.body) < len(plain.body) // 10
    assert plain.headers["ETag"] != packed.headers["ETag"], "one tag per representation"
    for response in (plain, packed):
        assert re.fullmatch(r'"[0-9a-f]{32}(-gzip)?"', response.headers["ETag"])
        assert response.headers["Cache-Control"] == "no-cache"
        assert response.headers["Vary"] == "Accept-Encoding"
    refused = static_response("/app.js", Headers({"Accept-Encoding": "gzip;q=0"}), tmp_path)
    assert refused is not None and "Content-Encoding" not in refused.headers


def test_a_file_unchanged_since_the_browser_got_it_is_304_and_a_changed_one_is_sent(
    tmp_path: Path,
) -> None:
    file = tmp_path / "style.css"
    file.write_text("body { margin: 0; }\n")
    first = static_response("/style.css", Headers(), tmp_path)
    assert first is not None
    again = static_response(
        "/style.css", Headers({"If-None-Match": first.headers["ETag"]}), tmp_path
    )
    assert again is not None and (again.status_code, again.body) == (304, b"")
    assert again.headers["ETag"] == first.headers["ETag"]
    file.write_text("body { margin: 1px; }\n")  # a new version: a new tag, sent in full
    changed = static_response(
        "/style.css", Headers({"If-None-Match": first.headers["ETag"]}), tmp_path
    )
    assert changed is not None and changed.status_code == 200
    assert changed.body == file.read_bytes() and changed.headers["ETag"] != first.headers["ETag"]


def test_an_image_is_sent_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "icon.png").write_bytes(bytes(range(256)) * 4)
    response = static_response("/icon.png", Headers({"Accept-Encoding": "gzip"}), tmp_path)
    assert response is not None and "Content-Encoding" not in response.headers


async def test_the_server_sends_the_page_gzipped_then_304_once_the_browser_has_it(
    server: Server,
) -> None:
    def get(headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        host, port = server.http.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            connection.request("GET", "/app.js", headers=headers)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    status, headers, body = await asyncio.to_thread(get, {"Accept-Encoding": "gzip"})
    assert (status, headers["Content-Encoding"]) == (200, "gzip")
    assert gzip.decompress(body) == (WEB_ROOT / "app.js").read_bytes()
    status, again, body = await asyncio.to_thread(
        get, {"Accept-Encoding": "gzip", "If-None-Match": headers["ETag"]}
    )
    assert (status, body, again["ETag"]) == (304, b"", headers["ETag"])


# -- replay -----------------------------------------------------------------------------------


async def test_a_finished_race_replays_move_by_move_for_each_racer(server: Server) -> None:
    (ann, bob), _ = await race_of(server, "all-fours", ["Ann", "Bob"])
    opening = (await bob.next_event(YourView)).view
    last: MoveAccepted = await play_to_end(ann)
    await bob.resign()
    finished = await ann.next_event(RaceFinished)

    status, replay = await server.http_get(
        f"/api/races/{finished.race_id}/replay?player={ann.player_id}"
    )
    assert status == 200
    assert (replay["rule_set"], replay["player_id"], replay["name"]) == (
        "all-fours",
        ann.player_id,
        "Ann",
    )
    steps = replay["steps"]
    assert steps[0]["move"] is None and steps[0]["view"] == opening.model_dump(mode="json")
    assert [step["view"]["moves"] for step in steps] == list(range(len(steps)))
    assert steps[-1]["move"] == last.move and steps[-1]["events"] == last.events
    assert steps[-1]["view"]["legal_moves"] == last.legal_moves
    assert steps[-1]["view"]["status"] == last.status
    assert all(step["time_ms"] >= 0 for step in steps)

    status, replay = await server.http_get(
        f"/api/races/{finished.race_id}/replay?player={bob.player_id}"
    )
    assert status == 200 and [step["move"] for step in replay["steps"]] == [None, "resign"]
    assert replay["steps"][-1]["view"]["status"] == "resigned"


async def test_no_replay_before_the_end_nor_of_a_secret_daily_nor_of_nobody(
    server: Server, sessions: Sessions
) -> None:
    (ann, bob), code = await race_of(server, "hidden-cards", ["Ann", "Bob"])
    await ann.next_event(YourView)
    async with sessions() as session:
        race_id = await session.scalar(select(RaceRow.id).where(RaceRow.code == code))
    status, body = await server.http_get(f"/api/races/{race_id}/replay?player={ann.player_id}")
    assert status == 403 and "not over" in body["message"]

    await ann.resign()
    await bob.resign()
    await ann.next_event(RaceFinished)
    status, body = await server.http_get(f"/api/races/{race_id}/replay?player=nobody")
    assert status == 404 and ann.player_id in body["message"]
    status, body = await server.http_get(f"/api/races/{race_id}/replay")
    assert status == 404
    status, body = await server.http_get(f"/api/races/no-such-race/replay?player={ann.player_id}")
    assert status == 404

    await ann.leave()
    await ann.daily("octagon")
    await ann.resign()
    daily = await ann.next_event(RaceFinished)
    status, body = await server.http_get(
        f"/api/races/{daily.race_id}/replay?player={ann.player_id}"
    )
    assert status == 403 and "secret" in body["message"]
