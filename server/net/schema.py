"""Generate docs/protocol.schema.json from the protocol models: ``python -m server.net.schema``.

``--check`` exits non-zero when the file on disk differs (tests/server/net/test_schema.py does the
same), so the published schema never drifts from the models.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from wire import protocol

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "protocol.schema.json"


def protocol_schema() -> dict[str, Any]:
    client = protocol.CLIENT_MESSAGE.json_schema(ref_template="#/$defs/{model}")
    server = protocol.SERVER_MESSAGE.json_schema(  # as sent: computed fields included
        ref_template="#/$defs/{model}", mode="serialization"
    )
    definitions = {**client.pop("$defs", {}), **server.pop("$defs", {})}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"patience-race protocol v{protocol.PROTOCOL_VERSION}",
        "description": "JSON text frames over one WebSocket; see docs/protocol.md.",
        "$defs": {**definitions, "ClientMessage": client, "ServerMessage": server},
        "oneOf": [{"$ref": "#/$defs/ClientMessage"}, {"$ref": "#/$defs/ServerMessage"}],
    }


def render() -> str:
    return json.dumps(protocol_schema(), indent=2, sort_keys=True) + "\n"


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        current = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else ""
        if current != text:
            print(f"{SCHEMA_PATH} is stale: run python -m server.net.schema", file=sys.stderr)
            return 1
        return 0
    SCHEMA_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
