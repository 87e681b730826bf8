"""Optional speed-ups: uvloop's event loop, and orjson to read and write JSON.

Both are opt-in settings (``PATIENCE_RACE_EVENT_LOOP=uvloop``,
``PATIENCE_RACE_JSON_LIBRARY=orjson``) and optional packages
(``pip install 'patience-race[fast]'``): the server runs on the standard library's asyncio and
json with nothing else installed. docs/performance.md has what each saves; the README says why
neither is the default.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

EventLoop = Literal["asyncio", "uvloop"]
JsonLibrary = Literal["json", "orjson"]

Loads = Callable[[str | bytes], Any]
Dumps = Callable[[Any], str]
T = TypeVar("T")


def run(main: Coroutine[Any, Any, T], event_loop: EventLoop) -> T:
    """``asyncio.run(main)``, on uvloop's loop if asked (an ImportError if it is missing)."""
    if event_loop == "asyncio":
        return asyncio.run(main)
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


def json_loads(library: JsonLibrary) -> Loads:
    """The parser of incoming JSON. orjson's errors are ``json.JSONDecodeError``s (and
    ``ValueError``s) too, so callers catch the same exceptions either way."""
    if library == "json":
        return json.loads
    import orjson

    return orjson.loads


def _compact(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))


def json_dumps(library: JsonLibrary) -> Dumps:
    """The writer of JSON text (compact)."""
    if library == "json":
        return _compact
    import orjson

    def dumps(data: Any) -> str:
        return orjson.dumps(data).decode()

    return dumps
