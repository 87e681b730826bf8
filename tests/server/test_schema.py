"""docs/protocol.schema.json is generated from the protocol models and must be current."""

from __future__ import annotations

import json

from server.protocol import CLIENT_MESSAGE, SERVER_MESSAGE
from server.schema import SCHEMA_PATH, render


def test_published_schema_is_current() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render(), (
        "docs/protocol.schema.json is stale: run python -m server.schema")


def test_schema_names_every_message_type() -> None:
    schema = json.loads(render())
    text = json.dumps(schema)
    for adapter in (CLIENT_MESSAGE, SERVER_MESSAGE):
        for kind in adapter.json_schema()["discriminator"]["mapping"]:
            assert f'"const": "{kind}"' in text or f'"{kind}"' in text
