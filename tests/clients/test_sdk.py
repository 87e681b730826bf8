"""The SDK as a newcomer meets it: its docstring's example, run as it is written against a real
server, races to the end; and a wait that cannot end says what it waited for."""

from __future__ import annotations

import asyncio
import re
import sys
import textwrap
from pathlib import Path

import pytest

import clients.sdk
from clients.sdk import RaceClient, StillWaiting
from tests.server.test_server import Server
from wire.protocol import YourView

EXAMPLE_URL = 'URL = "ws://127.0.0.1:8765/ws"'


def docstring_example() -> str:
    """The example of the module's docstring: the indented block after its ``::``."""
    doc = clients.sdk.__doc__
    assert doc is not None
    block = doc.split("::\n", 1)[1]
    lines = []
    for line in block.splitlines():
        if line and not line.startswith("    "):
            break
        lines.append(line)
    return textwrap.dedent("\n".join(lines))


async def test_the_docstring_example_races_to_the_end(server: Server, tmp_path: Path) -> None:
    example = docstring_example()
    assert EXAMPLE_URL in example and example.rstrip().endswith("asyncio.run(main())")
    script = tmp_path / "example.py"
    script.write_text(example.replace(EXAMPLE_URL, f'URL = "{server.url}"'), encoding="utf-8")
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(script), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    printed = out.decode().splitlines()
    assert re.fullmatch(r"Ann: .+, \d+ cards home", printed[0]), printed
    assert sorted(line.split()[1] for line in printed[1:]) == ["Ann", "Bob"], printed
    assert all(" resigned " in line for line in printed[1:]), printed


async def test_a_wait_that_cannot_end_says_what_it_waits_for(server: Server) -> None:
    async with await RaceClient.connect(server.url) as ann:
        await ann.hello(name="Ann")
        room = await ann.create_room("octagon", seats=2)
        await ann.ready()
        with pytest.raises(StillWaiting) as waited:
            await ann.next_event(YourView, timeout=0.5)
    message = str(waited.value)
    assert isinstance(waited.value, TimeoutError)
    assert message.startswith(
        f"waited 0.5 s for a 'view' event in room {room.code}, and none "
        "came: a racer's view comes when the race starts"
    ), message
    assert "ready()" in message and "start()" in message, message
