"""Plain HTTP on the WebSocket port: health, and JSON under /api.

    GET /healthz                         ok or degraded (database writes failing), and counts
    GET /api/games                       the rule sets, with their table layouts
    GET /api/leaderboards/<rule-set>     ?board=fastest|most_wins|deal|daily &period=today|week|all
                                         &deal=N &day=YYYY-MM-DD &player=ID &limit=N
    GET /api/races/<race-id>             a finished race: players, results, seed, move logs

The query string is validated by the same model as the WebSocket request (``GetLeaderboard``).
WebSocket clients connect to ``/ws``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import ValidationError
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from engine.registry import RULE_SET_NAMES, find_rule_set
from server import store
from server.boards import leaderboard
from server.protocol import GetLeaderboard

if TYPE_CHECKING:
    from websockets.asyncio.server import ServerConnection

    from server.app import Service

WEBSOCKET_PATH = "/ws"


def game_info(name: str) -> dict[str, Any]:
    """A rule set for clients: its names, and where each pile lies on the table (the layout the
    text describes), so a client can draw any rule set's board without knowing it."""
    game = find_rule_set(name)
    return {"name": name, "title": game.title, "source": game.source, "packs": game.packs,
            "layout": [slot.to_json() for slot in game.layout]}


def json_response(status: HTTPStatus, body: Any) -> Response:
    data = json.dumps(body, indent=2).encode()
    headers = Headers([("Content-Type", "application/json"), ("Content-Length", str(len(data))),
                       ("Cache-Control", "no-store")])
    return Response(status.value, status.phrase, headers, data)


def error_response(status: HTTPStatus, message: str) -> Response:
    return json_response(status, {"error": status.phrase.lower().replace(" ", "_"),
                                  "message": message})


class HttpApi:
    def __init__(self, service: Service) -> None:
        self.service = service

    async def __call__(self, connection: ServerConnection, request: Request) -> Response | None:
        url = urlsplit(request.path)
        path = url.path.rstrip("/") or "/"
        if path == WEBSOCKET_PATH:
            return None
        query = dict(parse_qsl(url.query))
        if path == "/healthz":
            return self.health()
        if path == "/api/games":
            return json_response(HTTPStatus.OK, [game_info(name) for name in RULE_SET_NAMES])
        if path.startswith("/api/leaderboards/"):
            return await self.leaderboard(path.removeprefix("/api/leaderboards/"), query)
        if path.startswith("/api/races/"):
            return await self.race(path.removeprefix("/api/races/"))
        return error_response(HTTPStatus.NOT_FOUND, f"nothing at {path}")

    def health(self) -> Response:
        writer = self.service.writer
        body = {
            "status": "degraded" if writer.failing_since is not None else "ok",
            "database": {"writes_failing": writer.failing_since is not None,
                         "last_error": writer.last_error, "queued_writes": writer.pending},
            "rooms": len(self.service.rooms),
            "connections": len(self.service.clients),
        }
        status = HTTPStatus.OK if body["status"] == "ok" else HTTPStatus.SERVICE_UNAVAILABLE
        return json_response(status, body)

    async def leaderboard(self, rule_set: str, query: dict[str, str]) -> Response:
        player = query.pop("player", None)
        try:
            request = GetLeaderboard.model_validate(
                {"type": "leaderboard", "rule_set": rule_set, **query,
                 "around_me": player is not None})
        except ValidationError as invalid:
            return error_response(HTTPStatus.BAD_REQUEST, "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in invalid.errors()))
        if rule_set not in RULE_SET_NAMES:
            return error_response(HTTPStatus.NOT_FOUND, f"no rule set {rule_set!r}")
        board = await leaderboard(self.service.sessions, request, player,
                                        datetime.now(UTC))
        return json_response(HTTPStatus.OK, board.model_dump(mode="json", exclude={"id"}))

    async def race(self, race_id: str) -> Response:
        record = await store.race_record(self.service.sessions, race_id, datetime.now(UTC))
        if record is None:
            return error_response(HTTPStatus.NOT_FOUND, f"no finished race {race_id!r}")
        return json_response(HTTPStatus.OK, record)
