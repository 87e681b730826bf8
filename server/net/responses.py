"""What the HTTP API answers with: JSON bodies, compact, never cached; a rule set as clients
draw it, and a racer's game step by step (``server.net.http``)."""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from websockets.datastructures import Headers
from websockets.http11 import Response

from engine.registry import find_rule_set
from engine.replay import MoveLog, new_game
from engine.view import Event
from server.core.views import view_model
from server.net.rules_pages import rules_url


def game_info(name: str) -> dict[str, Any]:
    """A rule set for clients: its names, and where each pile lies on the table (the layout the
    text describes), so a client can draw any rule set's board without knowing it."""
    game = find_rule_set(name)
    return {
        "name": name,
        "title": game.title,
        "source": game.source,
        "packs": game.packs,
        "layout": [slot.to_json() for slot in game.layout],
        "rules_url": rules_url(name),
    }


def replay_steps(log: MoveLog) -> list[dict[str, Any]]:
    """A racer's game step by step: the opening, then each move with its time, what followed
    (the forced steps included) and the player's view after it."""
    game = new_game(log)

    def step(move: str | None, time_ms: int | None, events: list[Event]) -> dict[str, Any]:
        return {
            "move": move,
            "time_ms": time_ms,
            "events": [str(event) for event in events],
            "view": view_model(game.view()).model_dump(mode="json"),
        }

    steps = [step(None, 0, game.opening_events)]
    for index, move in enumerate(log.moves):
        events = game.push(move)
        steps.append(step(str(move), None if log.times_ms is None else log.times_ms[index], events))
    return steps


def encode(body: Any) -> bytes:
    # Compact: json.dumps with an indent runs in Python rather than C, and took half of a long
    # replay's answer (32 ms of 64 for 239 moves, 1.4 MB; compact: 6 ms, 0.55 MB).
    return json.dumps(body, separators=(",", ":")).encode()


def json_response(status: HTTPStatus, body: Any) -> Response:
    return encoded_response(status, encode(body))


def encoded_response(status: HTTPStatus, data: bytes) -> Response:
    headers = Headers(
        [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(data))),
            ("Cache-Control", "no-store"),
        ]
    )
    return Response(status.value, status.phrase, headers, data)


def error_response(status: HTTPStatus, message: str) -> Response:
    return json_response(
        status, {"error": status.phrase.lower().replace(" ", "_"), "message": message}
    )
