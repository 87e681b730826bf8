"""The command line as a person uses it: games, deal, play (scripted input), verify."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clients.cli import main, verify_race
from clients.play import Session
from engine.deal import seed_from_text
from engine.game import Game
from engine.moves import Move
from engine.players import GreedyPlayer, play_out
from engine.registry import RULE_SET_NAMES, find_rule_set
from engine.replay import MoveLog
from engine.solver.compiled import RULE_SETS as COMPILED_RULE_SETS
from wire.commitment import commitment

SEED = 20261122


def finished_game(name: str) -> Game:
    return play_out(find_rule_set(name)(SEED), GreedyPlayer(random.Random(3)))


def test_games_lists_every_rule_set_with_its_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games"]) == 0
    out = capsys.readouterr().out
    for name in RULE_SET_NAMES:
        game = find_rule_set(name)
        assert name in out and game.title in out and game.source in out


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_deal_draws_the_opening_without_hidden_cards(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["deal", name, "--seed", str(SEED)]) == 0
    out = capsys.readouterr().out
    game = find_rule_set(name)(SEED)
    assert f"deal {SEED}" in out
    for slot in game.layout:
        assert (slot.label or str(slot.pile)) in out
    if any(None in pile.cards for pile in game.view().piles):
        assert "##" in out, "face-down cards are drawn as ##"
    piles = game.full_state()["piles"]
    up = {c["card"] for pile in piles for c in pile["cards"] if c["face_up"]}
    hidden = {c["card"] for pile in piles for c in pile["cards"] if not c["face_up"]} - up
    assert not hidden & set(out.split()), "a face-down card is drawn"


def test_deal_json_is_the_full_state_with_hidden_cards(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deal", "octagon", "--seed", "daily:2026-11-22:octagon", "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["seed"] == "17103868817714377104"
    cards = [card for pile in state["piles"] for card in pile["cards"]]
    assert sorted(card["id"] for card in cards) == list(range(104))
    assert any(not card["face_up"] for card in cards)


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_play_a_whole_game_by_typed_moves(name: str) -> None:
    moves = [str(move) for move in finished_game(name).history]
    lines = ["help", "fly away", "AS nowhere:9 -> foundation:1", "moves", "look", "board", *moves]
    output: list[str] = []
    session = Session(
        find_rule_set(name)(SEED), lambda prompt: lines.pop(0), output.append, colour=False
    )
    assert session.run()
    text = "\n".join(output)
    assert "Not understood" in text
    assert "Refused:" in text
    assert "Game over:" in text
    assert session.game.history == finished_game(name).history


def test_play_by_number_and_end_of_input_leaves_the_game_unfinished() -> None:
    lines = ["1", "1"]
    output: list[str] = []

    def read(prompt: str) -> str:
        if not lines:
            raise EOFError
        return lines.pop(0)

    session = Session(find_rule_set("puss-in-the-corner")(SEED), read, output.append, False)
    assert not session.run()
    assert len(session.game.history) == 2


def test_a_move_number_in_other_digits_is_not_understood_rather_than_a_crash() -> None:
    lines = ["²", "٣", "1"]
    output: list[str] = []
    session = Session(
        find_rule_set("puss-in-the-corner")(SEED),
        lambda prompt: lines.pop(0) if lines else "resign",
        output.append,
        False,
    )
    assert session.run()
    assert sum(line.startswith("Not understood: ") for line in output) == 2
    assert len(session.game.history) == 2, "the move numbered 1, then resigning"


def test_hint_at_the_terminal_gives_a_move_of_a_winning_line_and_says_with_full_knowledge() -> None:
    lines = ["hint"]
    output: list[str] = []
    session = Session(
        find_rule_set("hidden-cards")(2),
        lambda prompt: lines.pop(0) if lines else "resign",
        output.append,
        False,
    )
    session.run()
    given = next(line for line in output if line.startswith("hint: "))
    assert "a win is possible in 56 moves" in given and "full knowledge" in given
    move = given.removeprefix("hint: ").split(" (")[0]
    assert move in [str(legal) for legal in find_rule_set("hidden-cards")(2).legal_moves()]


def run_cli(
    *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clients.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=None if env is None else {**os.environ, **env},
    )


def test_play_then_verify_through_the_real_command(tmp_path: Path) -> None:
    moves = [str(move) for move in finished_game("hidden-cards").history]
    log = tmp_path / "game.json"
    played = run_cli(
        "play",
        "hidden-cards",
        "--seed",
        str(SEED),
        "--log",
        str(log),
        stdin="\n".join(moves) + "\n",
    )
    assert played.returncode == 0, played.stderr
    assert "Game over:" in played.stdout and log.exists()
    verified = run_cli("verify", str(log))
    assert verified.returncode == 0, verified.stderr
    assert "outcome:" in verified.stdout


def test_verify_refuses_a_forged_log(tmp_path: Path) -> None:
    game = finished_game("octagon")
    data = MoveLog.of(game).to_json()
    data["moves"].insert(0, "KS waste -> foundation:1")
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(data))
    result = run_cli("verify", str(forged))
    assert result.returncode == 1
    assert "move 1 (KS waste -> foundation:1) is illegal" in result.stderr


def test_verify_refuses_a_false_claim_and_junk(tmp_path: Path) -> None:
    game = finished_game("all-fours")
    data = MoveLog.of(game).to_json()
    data["outcome"] = "won" if data["outcome"] != "won" else "lost"
    claim = tmp_path / "claim.json"
    claim.write_text(json.dumps(data))
    result = run_cli("verify", str(claim))
    assert result.returncode == 1 and "the log claims" in result.stderr
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    result = run_cli("verify", str(junk))
    assert result.returncode == 1 and "cannot read" in result.stderr


def test_verify_replays_a_log_recorded_under_rules_version_1_as_it_was() -> None:
    old = Path(__file__).parents[1] / "engine" / "logs" / "rules-1-hidden-cards.json"
    result = run_cli("verify", str(old))
    assert result.returncode == 0, result.stderr
    assert "hidden-cards, deal 10 (algorithm 1, rules 1), 54 moves replayed" in result.stdout
    assert "outcome: lost: heap:1, the heap to take from, shows no unplaced card" in result.stdout


def test_a_seed_no_deal_has_is_refused_with_a_clear_message() -> None:
    result = run_cli("deal", "octagon", "--seed", "18446744073709551616")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert (
        "a deal number is at most 2^64-1 = 18446744073709551615, not 18446744073709551616"
        in result.stderr
    )


@pytest.mark.parametrize("seed", ["+5", "-5", "-1", "-x", "--x"])
def test_a_seed_that_is_not_plain_ascii_digits_is_a_text_seed(seed: str) -> None:
    """RULINGS principle 7: a sign makes text; a seed beginning with "-" is no option."""
    text = run_cli("deal", "octagon", "--seed", seed)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0] == f"The Octagon, deal {seed_from_text(seed)}"


def test_a_seed_of_digits_alone_is_the_deal_number() -> None:
    number = run_cli("deal", "octagon", "--seed", "5")
    assert number.returncode == 0 and number.stdout.splitlines()[0] == "The Octagon, deal 5"


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize(
    "command",
    [["games"], ["deal", "octagon", "--seed", "1"], ["deal", "octagon", "--seed", "1", "--json"]],
    ids=" ".join,
)
def test_output_into_a_pipe_nobody_reads_ends_quietly(command: list[str], buffered: bool) -> None:
    """As in `patience-race games | head -1` once head has its line and has gone: here the reader
    is gone before the command starts, so that every write meets the closed pipe."""
    reader, writer = os.pipe()
    os.close(reader)
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    if not buffered:
        environment["PYTHONUNBUFFERED"] = "1"
    try:
        result = subprocess.run(
            [sys.executable, "-m", "clients.cli", *command],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
            timeout=120,
        )
    finally:
        os.close(writer)
    assert result.stderr == ""
    assert result.returncode == 1


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize(
    "left_behind",
    ["patience-race.sqlite3", "patience-race.sqlite3-wal", "patience-race.sqlite3-shm"],
)
def test_git_ignores_the_database_files_serve_leaves_behind(left_behind: str) -> None:
    checkout = Path(__file__).parents[2]
    ignored = subprocess.run(["git", "check-ignore", "--quiet", left_behind], cwd=checkout)
    assert ignored.returncode == 0, f"git would offer to commit {left_behind}"


def test_verify_prints_the_names_in_a_race_record_without_their_control_characters(
    capsys: pytest.CaptureFixture[str],
) -> None:
    game = find_rule_set("octagon")(SEED)
    game.play(Move.act("resign"))
    record = {
        "race_id": "r1\x1b[2J",
        "rule_set": "octagon",
        "seed": str(SEED),
        "commitment": commitment(SEED),
        "players": [{"player_id": "p1", "name": "Eve\x1b]0;owned\x07\u202eevE"}],
        "results": [
            {
                "player_id": "p1",
                "rank": 1,
                "status": "resigned",
                "on_foundations": game.foundation_count(),
            }
        ],
        "logs": {"p1": MoveLog.of(game).to_json()},
    }
    assert verify_race("race.json", record) == 0
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\u202e" not in printed and "\x07" not in printed
    assert "race r1\\x1b[2J, octagon" in printed
    assert "  1. Eve\\x1b]0;owned\\x07\\u202eevE: 1 moves replayed, resigned" in printed


def test_solve_prints_the_verdict_and_a_line_that_plays_to_a_win(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["solve", "all-fours", "--seed", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "All Fours, deal 3: won"
    assert "upper bound for a player who cannot see them" in lines[1]
    game = find_rule_set("all-fours")(3)
    for text in lines[
        lines.index(next(line for line in lines if line.startswith("the winning line"))) + 1 :
    ]:
        game.play(Move.parse(text))
    assert game.outcome().status.value == "won"


def test_solve_says_which_core_searched(capsys: pytest.CaptureFixture[str]) -> None:
    """The compiled core where it is built and knows the rule set, else the Python search:
    Hidden Cards is always the Python search's (it decides it exactly already)."""
    assert main(["solve", "hidden-cards", "--seed", "1"]) == 0
    assert "  searched by the Python search" in capsys.readouterr().out.splitlines()
    assert main(["solve", "octagon", "--seed", "1", "--nodes", "600"]) == 0
    core = "compiled core (C)" if "octagon" in COMPILED_RULE_SETS else "Python search"
    assert f"  searched by the {core}" in capsys.readouterr().out.splitlines()
    assert main(["solve", "octagon", "--seed", "1", "--nodes", "600", "--json"]) == 0
    said = json.loads(capsys.readouterr().out)["core"]
    assert said == ("compiled" if "octagon" in COMPILED_RULE_SETS else "python")


def test_solve_with_the_compiled_core_turned_off_says_python() -> None:
    done = run_cli(
        "solve",
        "octagon",
        "--seed",
        "1",
        "--nodes",
        "600",
        "--json",
        env={"PATIENCE_RACE_SOLVER_CORE": "python"},
    )
    assert json.loads(done.stdout)["core"] == "python"


def test_solve_json_and_a_budget_that_runs_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "hidden-cards", "--seed", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["rule_set"], data["seed"], data["result"], data["line"], data["core"]) == (
        "hidden-cards",
        "1",
        "lost",
        [],
        "python",
    )
    assert "upper bound" in data["knowledge"]
    assert main(["solve", "octagon", "--seed", "1", "--nodes", "600", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["result"] == "unknown" and data["effort"]["nodes"] == 600
    assert main(["solve", "octagon", "--seed", "1", "--budget", "0"]) == 2
    assert "positive" in capsys.readouterr().err


HELP_COMMANDS = [[], ["games"], ["deal"], ["play"], ["verify"], ["solve"], ["bot"], ["race"]]
"""The client commands; tests/server/test_commands.py asks the server's for their help."""


@pytest.mark.parametrize("command", HELP_COMMANDS, ids=lambda words: " ".join(words) or "-")
def test_help_speaks_to_users_in_plain_sentences(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """No developers' markup (reStructuredText's ``code``) or the project's history."""
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: patience-race")
    assert "`" not in text and not re.search(r"\bissue \d", text), text
