"""docs/protocol.schema.json is generated from the protocol models and must be current, its
status words are every word the server sends there, and its error codes are one list, every one
documented, the only codes the server refuses with."""

from __future__ import annotations

import ast
import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from engine.players import GreedyPlayer, play_out
from engine.registry import find_rule_set
from engine.view import Status
from server.core.race import Phase, Race
from server.core.room_view import room_state
from server.core.said import Outgoing
from server.core.terms import RaceTerms
from server.net.schema import SCHEMA_PATH, protocol_schema, render
from wire.protocol import (
    CLIENT_MESSAGE,
    SERVER_MESSAGE,
    ErrorCode,
    MoveAccepted,
    ProgressEvent,
    RaceFinished,
    RoomState,
    YourView,
)


def test_published_schema_is_current() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render(), (
        "docs/protocol.schema.json is stale: run python -m server.net.schema"
    )


def test_schema_names_every_message_type() -> None:
    schema = json.loads(render())
    text = json.dumps(schema)
    for adapter in (CLIENT_MESSAGE, SERVER_MESSAGE):
        for kind in adapter.json_schema()["discriminator"]["mapping"]:
            assert f'"const": "{kind}"' in text or f'"{kind}"' in text


def status_enum(model: str) -> set[str]:
    status = protocol_schema()["$defs"][model]["properties"]["status"]
    enum = status.get("enum") or next(
        option["enum"] for option in status["anyOf"] if "enum" in option
    )
    return set(enum)


def test_a_games_status_words_are_the_engines() -> None:
    words = {status.value for status in Status}
    assert status_enum("ViewModel") == status_enum("MoveAccepted") == words


T0 = 1_000_000.0


def new_race(seed: int, time_limit_s: int | None) -> Race:
    return Race(
        RaceTerms(
            race_id="r1",
            code="ABCD1234",
            rule_set="all-fours",
            seed=seed,
            algorithm=1,
            deal_kind="number",
            seats_max=3,
            time_limit_s=time_limit_s,
        ),
        host_id="p1",
        host_name="Ann",
    )


def seed_where(rule_set: str, *, won: bool) -> int:
    def wins(seed: int) -> bool:
        game = play_out(find_rule_set(rule_set)(seed), GreedyPlayer(random.Random(1)))
        return game.outcome().status is Status.WON

    return next(seed for seed in range(1, 500) if wins(seed) is won)


@dataclass
class StatusesSeen:
    seats: set[str] = field(default_factory=set)
    progress: set[str] = field(default_factory=set)
    ranking: set[str] = field(default_factory=set)
    games: set[str] = field(default_factory=set)

    def note(self, out: list[Outgoing], race: Race) -> None:
        for message in [outgoing.message for outgoing in out] + [room_state(race)]:
            if isinstance(message, RoomState):
                self.seats |= {seat.status for seat in message.seats}
            elif isinstance(message, ProgressEvent):
                self.progress.add(message.status)
            elif isinstance(message, RaceFinished):
                self.ranking |= {entry.status for entry in message.ranking}
            elif isinstance(message, YourView):
                self.games.add(message.view.status)
            elif isinstance(message, MoveAccepted):
                self.games.add(message.status)

    def play_out(self, race: Race, player_id: str, now: float) -> float:
        player = GreedyPlayer(random.Random(1))
        racer = race.racers[player_id]
        assert racer.game is not None
        while not racer.finished:
            now += 0.5
            self.note(race.move(player_id, player.choose_in(racer.game), now), race)
        return now


def test_the_schema_lists_every_status_word_a_race_gives_and_no_other() -> None:
    """Drive races through every way a racer can be and finish (won, lost, resigned, out of
    time, away past the grace period) and collect the words the race puts in seats, progress
    events, rankings and views."""
    seen = StatusesSeen()
    winner, loser = seed_where("all-fours", won=True), seed_where("all-fours", won=False)

    race = new_race(winner, time_limit_s=None)
    seen.note(race.join("p2", "Bob", T0) + race.join("p3", "Cy", T0), race)
    seen.note(race.start("p1", T0) + race.tick(T0 + race.terms.countdown_s), race)
    now = T0 + race.terms.countdown_s
    seen.note(race.disconnect("p3", now), race)
    now = seen.play_out(race, "p1", now)
    seen.note(race.resign("p2", now + 1), race)
    seen.note(race.tick(now + race.terms.grace_s), race)
    assert race.phase is Phase.FINISHED

    race = new_race(loser, time_limit_s=60)
    seen.note(race.join("p2", "Bob", T0), race)
    seen.note(race.start("p1", T0) + race.tick(T0 + race.terms.countdown_s), race)
    seen.play_out(race, "p1", T0 + race.terms.countdown_s)
    seen.note(race.tick(T0 + race.terms.countdown_s + 60), race)
    assert race.phase is Phase.FINISHED

    finished = {"won", "lost", "resigned", "timed_out", "abandoned"}
    assert seen.seats == finished | {"waiting", "racing"} == status_enum("SeatInfo")
    assert seen.progress == finished | {"racing"}
    assert seen.progress <= status_enum("ProgressEvent")
    assert seen.ranking == finished == status_enum("RankEntry") == status_enum("LeaderboardEntry")
    assert seen.games == status_enum("ViewModel")


ROOT = Path(__file__).resolve().parents[3]


def documented_error_codes() -> set[str]:
    """The codes in the first column of docs/protocol.md's error code table."""
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    table = text.split("\n## Error codes\n", 1)[1].split("\n## ", 1)[0]
    return {
        code
        for line in table.splitlines()
        if line.startswith("| `")
        for code in re.findall(r"`([a-z_]+)`", line.split("|")[1])
    }


def test_the_error_codes_are_one_list_the_schema_and_the_doc_give_whole() -> None:
    codes = {code.value for code in ErrorCode}
    schema = protocol_schema()["$defs"]
    assert set(schema["ErrorCode"]["enum"]) == codes
    assert schema["ErrorMessage"]["properties"]["code"]["$ref"] == "#/$defs/ErrorCode"
    assert documented_error_codes() == codes


REFUSERS = {"Refusal": 0, "RaceError": 0, "Refused": 0, "_error": 2}
"""The calls that name an error code, and the position of the code among their arguments."""


def test_the_server_refuses_only_with_a_code_of_the_list() -> None:
    """Every code the server names is a member of ``ErrorCode``, never a bare string (mypy checks
    the types; this also catches a string passed where the type is not checked)."""
    bare = []
    for path in sorted((ROOT / "server").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = (
                node.func.attr
                if isinstance(node.func, ast.Attribute)
                else getattr(node.func, "id", None)
            )
            codes = [
                keyword.value
                for keyword in node.keywords
                if keyword.arg == "code" and name in {*REFUSERS, "ErrorMessage"}
            ]
            if name in REFUSERS and len(node.args) > REFUSERS[name]:
                codes.append(node.args[REFUSERS[name]])
            for code in codes:
                if isinstance(code, ast.Constant):
                    bare.append(f"{path.name}:{node.lineno}: {code.value!r}")
                elif (
                    isinstance(code, ast.Attribute)
                    and isinstance(code.value, ast.Name)
                    and (code.value.id == "ErrorCode")
                ):
                    assert code.attr in ErrorCode.__members__, f"{path.name}:{node.lineno}"
    assert not bare, "codes given as bare strings, not ErrorCode members: " + ", ".join(bare)
