"""docs/protocol.md tells the truth: its example sessions, played against a real server, get the
frames the page shows, in the order it shows them; and it names every status word the schema has.

A session is a fenced block with the info string ``session``. Each line is one of:

- ``Ann > {...}``: what Ann sends, complete JSON (a room ``code`` is replaced by the real one);
- ``Ann < {...}`` or ``Both < {...}``: the next frame Ann (or each of the two) receives, maybe
  shortened with ``…``. Its ``type`` is checked, and where the line shows them its ``id`` and
  ``seq``, a room's ``phase``, the ``status`` of a ``progress`` or ``move_ok``, a welcome's
  ``bot`` and an error's ``code``; values that differ from run to run (player ids, codes,
  tokens, times) are not;
- ``Ann … 40 more moves …``: Ann makes that many moves, each the one move besides ``resign`` in
  her ``legal_moves``, and each is answered as her last move shown above was;
- ``# ...``: a comment.

The order is checked per player: lines for different players may interleave in any way. At the
end nobody may have received a frame the page does not show.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from server.net.schema import protocol_schema
from tests.server.test_server import Server

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
FRAME_TIMEOUT_S = 10.0
QUIET_S = 0.5

LINE = re.compile(r"^(?P<who>[A-Z][a-z]+)\s+(?P<way>[<>])\s+(?P<json>\{.*\})\s*$")
MORE = re.compile(r"^(?P<who>[A-Z][a-z]+)\s+…\s+(?P<count>\d+) more moves\b")
SCALAR = r'("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|null|true|false)'
CHECKED = {
    "type": None,
    "id": None,
    "seq": None,
    "phase": {"room"},
    "status": {"progress", "move_ok"},
    "code": {"error"},
    "bot": {"welcome"},
}
"""The keys a received line is checked on, and for which types (None: all). The first
occurrence of each in the line is the message's own: a room's seats come after its phase."""


@dataclass(frozen=True)
class Step:
    number: int
    """The line's number in docs/protocol.md."""
    who: str
    way: str
    """``>`` sent, ``<`` received, ``…`` more moves."""
    text: str = ""
    count: int = 0


@dataclass(frozen=True)
class Session:
    title: str
    steps: list[Step]


def sessions(markdown: str) -> list[Session]:
    """Every ``session`` block of the page, named after the heading above it."""
    found: list[Session] = []
    heading, block, start = "", None, 0
    for number, line in enumerate(markdown.splitlines(), start=1):
        if block is None and line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif block is None and line.strip() == "```session":
            block, start = [], number
        elif block is not None and line.startswith("```"):
            found.append(
                Session(
                    heading,
                    [
                        step
                        for offset, text in enumerate(block, start + 1)
                        if (step := parse_line(offset, text))
                    ],
                )
            )
            block = None
        elif block is not None:
            block.append(line)
    return found


def parse_line(number: int, text: str) -> Step | None:
    if not text.strip() or text.startswith("#"):
        return None
    if match := LINE.match(text):
        return Step(number, match["who"], match["way"], match["json"])
    if match := MORE.match(text):
        return Step(number, match["who"], "…", count=int(match["count"]))
    raise AssertionError(f"docs/protocol.md:{number}: not a session line: {text!r}")


def shown(text: str) -> dict[str, Any]:
    """What a received line shows of the values ``CHECKED`` names."""
    kind = re.search(r'"type":\s*"(\w+)"', text)
    assert kind, f"a received line shows its type: {text}"
    values: dict[str, Any] = {}
    for key, kinds in CHECKED.items():
        if kinds is not None and kind[1] not in kinds:
            continue
        if match := re.search(rf'"{key}":\s*{SCALAR}', text):
            values[key] = json.loads(match[1])
    return values


@dataclass
class Player:
    ws: ClientConnection
    legal_moves: list[str] = field(default_factory=list)
    answer: list[Step] = field(default_factory=list)
    """The lines that answered this player's last move shown, for ``more moves``."""


class Play:
    """One session played against the server."""

    def __init__(self, server: Server, session: Session) -> None:
        self.server, self.session = server, session
        self.players: dict[str, Player] = {}
        self.room_code: str | None = None
        self.moves_made = 0

    async def run(self) -> None:
        steps = self.session.steps
        for index, step in enumerate(steps):
            if step.way == ">":
                await self.send(step)
                if '"move"' in step.text or '"resign"' in step.text:
                    self.players[step.who].answer = _answer(steps[index + 1 :])
            elif step.way == "<":
                for who in self.receivers(step):
                    await self.receive(who, step, shown(step.text))
            else:
                await self.more_moves(step)
        for who, player in self.players.items():
            try:
                extra = await asyncio.wait_for(player.ws.recv(), QUIET_S)
            except TimeoutError:
                continue
            raise AssertionError(
                f"{self.session.title}: at the end {who} also received a frame "
                f"the page does not show: {extra}"
            )

    def receivers(self, step: Step) -> list[str]:
        return list(self.players) if step.who == "Both" else [step.who]

    async def send(self, step: Step) -> None:
        if step.who not in self.players:
            self.players[step.who] = Player(await connect(self.server.url))
        message = json.loads(step.text)
        if "code" in message:
            assert self.room_code, f"docs/protocol.md:{step.number}: no room code yet"
            message["code"] = self.room_code
        await self.players[step.who].ws.send(json.dumps(message))

    async def receive(self, who: str, step: Step, expected: dict[str, Any]) -> dict[str, Any]:
        where = f"docs/protocol.md:{step.number} ({self.session.title})"
        try:
            frame = await asyncio.wait_for(self.players[who].ws.recv(), FRAME_TIMEOUT_S)
        except TimeoutError:
            raise AssertionError(f"{where}: {who} expected {expected}, got nothing") from None
        message = json.loads(frame)
        got = {key: message.get(key) for key in expected}
        assert got == expected, f"{where}: {who} expected {expected}, got {frame[:300]}"
        if message["type"] == "room":
            self.room_code = message["code"]
        moves = message.get("view", message).get("legal_moves")
        if moves is not None:
            self.players[who].legal_moves = moves
        return message

    async def more_moves(self, step: Step) -> None:
        player = self.players[step.who]
        assert player.answer, f"docs/protocol.md:{step.number}: no move of {step.who}'s above"
        for _ in range(step.count):
            (move,) = [move for move in player.legal_moves if move != "resign"]
            self.moves_made += 1
            await player.ws.send(
                json.dumps({"type": "move", "move": move, "id": f"more-{self.moves_made}"})
            )
            for answer in player.answer:
                for who in self.receivers(answer):
                    await self.receive(who, answer, {"type": shown(answer.text)["type"]})


def _answer(steps: list[Step]) -> list[Step]:
    """The received lines up to the next line sent."""
    answer = []
    for step in steps:
        if step.way != "<":
            break
        answer.append(step)
    return answer


SESSIONS = sessions(DOC.read_text(encoding="utf-8"))


def test_the_page_has_its_sessions() -> None:
    titles = [session.title for session in SESSIONS]
    assert titles[0] == "Minimal client", titles
    assert "A complete session" in titles and "The daily deal" in titles, titles


@pytest.mark.parametrize("session", SESSIONS, ids=[session.title for session in SESSIONS])
async def test_a_session_on_the_page_plays_as_shown(server: Server, session: Session) -> None:
    play = Play(server, session)
    try:
        await play.run()
    finally:
        for player in play.players.values():
            await player.ws.close()


def status_words(markdown: str) -> set[str]:
    """The words listed in the page's status tables (first cell, in backquotes)."""
    section = markdown.split("### Status words", 1)[1].split("\n#", 1)[0]
    return set(re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE))


def test_the_page_lists_every_status_word_of_the_schema() -> None:
    definitions = protocol_schema()["$defs"]
    words: set[str] = set()
    for model in ("SeatInfo", "ProgressEvent", "RankEntry", "ViewModel", "MoveAccepted"):
        words |= set(definitions[model]["properties"]["status"]["enum"])
    assert status_words(DOC.read_text(encoding="utf-8")) == words
