"""Move texts with digits of other scripts, against the real server: refused with
``invalid_move``, and the racer's connection and race go on.

``str.isdigit`` and ``int`` take ``²``, ``٣`` and ``①``; the engine reads ASCII digits only
(tests/engine/test_moves.py), and a refusal is never a closed connection.
"""

from __future__ import annotations

import pytest

from clients.sdk import RequestRefused
from tests.server.test_server import Server, race_of
from wire.protocol import YourView

ODD_MOVES = [
    "AS x² heap:1 -> heap:2",
    "AS x① heap:1 -> heap:2",
    "²H heap:1 -> heap:2",
    "1²H heap:1 -> heap:2",
    "AS heap:٣ -> heap:2",
    "AS x٣ heap:1 -> heap:2",
    {"card": "AS", "from": "heap:²", "to": "heap:2"},
]


async def test_a_move_with_other_digits_is_an_invalid_move_and_the_race_goes_on(
    server: Server,
) -> None:
    (ann, bob), _ = await race_of(server, "hidden-cards", ["Ann", "Bob"])
    view = (await ann.next_event(YourView)).view
    for move in ODD_MOVES:
        with pytest.raises(RequestRefused) as refused:
            await ann.move(move)
        assert refused.value.code == "invalid_move", move
    ack = await ann.move(view.legal_moves[0])
    assert ack.moves == 1
    await ann.close()
    await bob.close()


async def test_a_legal_move_written_otherwise_is_read_and_accepted(server: Server) -> None:
    """The server looks a move's text up among the moves it listed; one written otherwise (in
    lower case, with more spaces) is parsed, and is the same move."""
    (ann, bob), _ = await race_of(server, "four-corners", ["Ann", "Bob"])
    view = (await ann.next_event(YourView)).view
    listed = next(move for move in view.legal_moves if move != "resign")
    ack = await ann.move("  " + listed.lower().replace(" ", "  "))
    assert ack.move == listed and ack.moves == 1
    await ann.close()
    await bob.close()
