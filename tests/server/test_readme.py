"""README.md tells the truth: its WebSocket walk-through, played against a real server, races to
the end, and the board it then shows lists both racers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from clients.sdk import RaceClient
from tests.server.test_server import Server
from wire.protocol import CLIENT_MESSAGE, RaceFinished, RoomState, YourView

README = Path(__file__).resolve().parents[2] / "README.md"
BOTH = {"hello", "ready", "resign"}
"""The requests each of the two players sends; Bob sends ``join``, Ann the others."""


def walk_through() -> tuple[list[dict[str, Any]], str]:
    """The requests of "Race with any WebSocket client", and the board it then points to."""
    section = README.read_text(encoding="utf-8").split("## Race with any WebSocket client")[1]
    block = section.split("```")[1]
    requests = [
        json.loads(line.split("<-")[0]) for line in block.splitlines() if line.startswith("{")
    ]
    board = re.search(r"curl '(http://127\.0\.0\.1:8765)(/api/leaderboards/[^']+)'", section)
    assert board, "the walk-through ends on a board"
    return requests, board.group(2)


async def test_the_readme_walk_through_ends_on_a_board_with_both_racers(server: Server) -> None:
    requests, board = walk_through()
    async with (
        await RaceClient.connect(server.url) as ann,
        await RaceClient.connect(server.url) as bob,
    ):
        code = ""
        for request in requests:
            kind = request["type"]
            if kind == "join":
                request = {**request, "code": code}
            if kind == "move":
                await ann.next_event(YourView)
            for player in [ann, bob] if kind in BOTH else [bob] if kind == "join" else [ann]:
                if kind == "hello" and player is bob:  # "each player, with their own name"
                    request = {**request, "name": "Bob"}
                reply = await player.request(CLIENT_MESSAGE.validate_python(request))
                if isinstance(reply, RoomState):
                    code = reply.code
        await ann.next_event(RaceFinished)
    status, answer = await server.http_get(board)
    assert status == 200, answer
    assert sorted(entry["name"] for entry in answer["entries"]) == ["Ann", "Bob"], answer
