"""Players' names against the real server: a name that could hide, reorder or break text is
refused with ``invalid_message`` (the connection stays); a good one is stored and shown trimmed
and in NFC.

Frames are sent as raw JSON: the SDK checks a name with the same model before sending it.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest
from sqlalchemy import select
from websockets.asyncio.client import ClientConnection, connect

from server.storage.models import PlayerRow
from tests.server.test_server import Server, Sessions
from wire.protocol import Hello

BAD_NAMES = [
    "",
    "   ",
    "\u3000",  # empty once trimmed
    "Ann\x00",
    "Ann\nBob",
    "\tAnn",
    "\x1b[31mAnn",
    "Ann\x7f",
    "Ann\x85",  # control (Cc)
    "Ann\u202eevil",
    "\u202aAnn",
    "\u2066Ann\u2069",
    "Ann\u061c",  # bidirectional controls
    "An\u200bn",
    "\ufeffAnn",
    "Ann\u2060",
    "Ann\U000e0041",  # invisible format (Cf)
    "Ann\u2028Bob",
    "Ann\u2029",  # line and paragraph breaks
    "Ann\ud800",  # a lone surrogate
    "\u200d",
    "A" * 33,
    "e\u0301" * 33,  # nothing seen; too long
]
GOOD_NAMES = {
    "  Zoe\u0308 ": "Zo\u00eb",  # trimmed, NFD to NFC
    "e\u0301" * 32: "\u00e9" * 32,  # 64 given, 32 once NFC
    "\U0001f469\u200d\U0001f4bb Ann": "\U0001f469\u200d\U0001f4bb Ann",  # an emoji sequence
    "\u0645\u06cc\u200c\u0631\u0648": "\u0645\u06cc\u200c\u0631\u0648",  # Persian with ZWNJ
    "[/] <b>": "[/] <b>",  # markup is only text
}


async def say(ws: ClientConnection, message: dict[str, Any]) -> dict[str, Any]:
    await ws.send(json.dumps(message))
    reply: dict[str, Any] = json.loads(await ws.recv())
    return reply


@pytest.mark.parametrize("name", BAD_NAMES, ids=ascii)
async def test_a_bad_name_is_refused_and_the_connection_stays(server: Server, name: str) -> None:
    async with connect(server.url) as ws:
        refused = await say(ws, {"type": "hello", "id": "1", "name": name})
        assert (refused["type"], refused["code"], refused["id"]) == (
            "error",
            "invalid_message",
            "1",
        )
        assert refused["message"].startswith("name: ")
        welcome = await say(ws, {"type": "hello", "id": "2", "name": "Ann"})
        assert (welcome["type"], welcome["name"]) == ("welcome", "Ann")


@pytest.mark.parametrize("given, stored", GOOD_NAMES.items(), ids=ascii)
async def test_a_name_is_stored_and_shown_trimmed_and_in_nfc(
    server: Server, sessions: Sessions, given: str, stored: str
) -> None:
    async with connect(server.url) as ws, connect(server.url) as other:
        welcome = await say(ws, {"type": "hello", "name": given})
        assert welcome["name"] == stored
        room = await say(ws, {"type": "create_room", "rule_set": "octagon"})
        await say(other, {"type": "hello", "name": "Bob"})
        joined = await say(other, {"type": "join", "code": room["code"]})
        assert [seat["name"] for seat in joined["seats"]] == [stored, "Bob"]
    async with sessions.begin() as session:
        assert (
            await session.scalar(select(PlayerRow.name).where(PlayerRow.id == welcome["player_id"]))
            == stored
        )


def test_the_model_and_its_schema_say_the_rule() -> None:
    assert Hello(type="hello", name=" Zoe\u0308").name == unicodedata.normalize("NFC", "Zoë")
    with pytest.raises(ValueError, match="format"):
        Hello(type="hello", name="Ann\u202e")
    schema = Hello.model_json_schema()["properties"]["name"]
    assert "NFC" in schema["description"]
