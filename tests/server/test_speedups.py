"""The optional speed-ups (``server.speedups``): a real server on uvloop's loop with orjson
reading the frames races as the default one does, and refuses bad JSON alike."""

from __future__ import annotations

import signal

import pytest
from websockets.asyncio.client import connect

from server.speedups import json_loads
from tests.server.test_abuse import reply
from tests.server.test_crash import open_race, start_process


@pytest.mark.parametrize("library", ["json", "orjson"])
def test_both_json_libraries_refuse_what_the_gateway_calls_bad_json(library: str) -> None:
    loads = json_loads(library)  # type: ignore[arg-type]
    assert loads('{"type": "hello"}') == {"type": "hello"}
    for frame in ("{", "[1,]", "\ud800"):
        with pytest.raises(ValueError):  # json.JSONDecodeError and orjson's are ValueErrors
            loads(frame)


async def test_a_server_on_uvloop_and_orjson_races(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATIENCE_RACE_EVENT_LOOP", "uvloop")
    monkeypatch.setenv("PATIENCE_RACE_JSON_LIBRARY", "orjson")
    server = await start_process(database_url)
    try:
        racers = await open_race(server.url, "octagon", 3)
        for racer in racers:
            await racer.play(3)
        assert all(racer.acked == 3 for racer in racers)
        async with connect(server.url) as ws:
            await ws.send("{not json")
            assert (await reply(ws))["code"] == "bad_json"
        for racer in racers:
            await racer.finish()
        assert not [r for r in racers if r.playing]
    finally:
        server.process.send_signal(signal.SIGTERM)
        await server.process.wait()
