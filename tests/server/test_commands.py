"""The ``patience-race`` command (``server.commands``): the client commands and the server's."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from server.commands import build_parser, main

HELP_COMMANDS = [
    [],
    ["serve"],
    ["db"],
    ["db", "upgrade"],
    ["ratings"],
    ["ratings", "rebuild"],
    ["leaderboards"],
    ["leaderboards", "rebuild"],
    ["fairplay"],
    ["fairplay", "list"],
    ["fairplay", "show"],
    ["fairplay", "clear"],
    ["fairplay", "ban"],
]


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


def test_the_command_has_every_client_and_server_command_its_help_lists() -> None:
    parser = build_parser()
    listed = {
        line.split()[1]
        for line in (parser.description or "").splitlines()
        if line.strip().startswith("patience-race ")
    }
    assert listed == {
        "games",
        "deal",
        "play",
        "verify",
        "solve",
        "bot",
        "race",
        "serve",
        "db",
        "ratings",
        "leaderboards",
        "fairplay",
    }
    for command in listed:
        with pytest.raises(SystemExit) as done:
            parser.parse_args([command, "--help"])
        assert done.value.code == 0


def test_the_installed_command_is_this_one() -> None:
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["patience-race"] == "server.commands:main"
