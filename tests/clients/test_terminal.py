"""The terminal racer, headless (Textual's ``run_test``), against a real server and database.

The person at the terminal is driven with key presses and clicks; the other racers are SDK
clients. Assertions read what the widgets show.
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from rich.text import Text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import DataTable, Input, OptionList, Select, Static

from clients.bot import come_back
from clients.sdk import RaceClient
from clients.terminal.app import RacerApp
from clients.terminal.race import RaceScreen, ResultsScreen
from clients.terminal.screens import (
    LeaderboardScreen,
    RoomScreen,
    StartScreen,
    join_hint,
    racer_name,
)
from clients.terminal.session import DEFAULT_SERVER, Identity, IdentityFile, RaceSession
from engine.registry import RULE_SET_NAMES, find_rule_set
from engine.view import Slot
from tests.clients.conftest import RATED_BETWEEN_CLIENTS, rated_racer
from tests.ports import free_port
from tests.server.cluster.test_bus import two_workers
from tests.server.test_server import Server, make_settings, start_server, stop_server
from wire.protocol import RaceFinished, YourView

SIZE = (160, 50)
SMALL = (80, 24)
"""The smallest terminal the racer is made for."""
FIRST_MOVE = "5D heap:1 -> heap:5 bottom"
"""All Fours, deal 7 (docs/protocol.md): the opening's only move but resigning."""


@pytest_asyncio.fixture
async def server(
    sessions: async_sessionmaker[AsyncSession], database_url: str
) -> AsyncIterator[Server]:
    """On a fixed port, so that a restarted server is found at the same address; rated races
    between the app and a ``rated_racer`` (``RATED_BETWEEN_CLIENTS``)."""
    settings = make_settings(database_url, **RATED_BETWEEN_CLIENTS).model_copy(
        update={"port": free_port()}
    )
    running = await start_server(settings)
    try:
        yield running
    finally:
        await stop_server(running)


def racer(
    server: Server, token_file: Path, name: str | None = None, code: str | None = None
) -> RacerApp:
    return RacerApp(RaceSession(server.url, IdentityFile(token_file), name), code)


def shown(pilot: Pilot[None], selector: str) -> str:
    """The text a widget of the current screen shows: a line per table row or list option."""
    widget: Widget = pilot.app.screen.query_one(selector)
    if isinstance(widget, Static):
        content = widget.content
        return content.plain if isinstance(content, Text) else str(content)
    if isinstance(widget, DataTable):
        return "\n".join(
            " | ".join(
                cell.plain if isinstance(cell, Text) else str(cell)
                for cell in widget.get_row_at(row)
            )
            for row in range(widget.row_count)
        )
    if isinstance(widget, OptionList):
        return "\n".join(str(option.prompt) for option in widget.options)
    if isinstance(widget, Input):
        return widget.value
    raise TypeError(f"cannot read {widget!r}")


async def until(pilot: Pilot[None], condition: Callable[[], bool], timeout: float = 10) -> None:
    """Let the app run until the condition holds (the server answers in its own time)."""
    for _ in range(round(timeout / 0.02)):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"still not true after {timeout} s: screen {pilot.app.screen!r}")


async def on_screen(pilot: Pilot[None], kind: type[Widget]) -> None:
    await until(pilot, lambda: isinstance(pilot.app.screen, kind) and pilot.app.screen.is_mounted)


def row_of(pilot: Pilot[None], selector: str, name: str) -> str:
    return next((line for line in shown(pilot, selector).splitlines() if name in line), "")


async def type_move(pilot: Pilot[None], text: str) -> None:
    pilot.app.screen.query_one("#move", Input).focus()
    await pilot.press(*text, "enter")


async def race_against(pilot: Pilot[None], ann: RaceClient) -> None:
    """From the room the app has joined, both ready, to the app's race screen with its board."""
    await on_screen(pilot, RoomScreen)
    await until(pilot, lambda: pilot.app.screen.query_one("#ready").disabled is False)
    await pilot.press("r")
    await ann.ready()
    await on_screen(pilot, RaceScreen)
    await until(pilot, lambda: shown(pilot, "#moves") != "")


async def test_a_race_from_the_form_to_the_results(server: Server, tmp_path: Path) -> None:
    token_file = tmp_path / "config" / "token.json"
    app = racer(server, token_file)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, StartScreen)
        assert "not connected yet" in shown(pilot, "#title")
        name = app.screen.query_one("#name", Input)
        name.value = ""
        await pilot.press("A", "n", "n")
        app.screen.query_one("#rule-set", Select).value = "all-fours"
        app.screen.query_one("#deal", Select).value = "number"
        await pilot.pause()
        app.screen.query_one("#number", Input).value = "7"
        await pilot.click("#create-room")

        await on_screen(pilot, RoomScreen)
        title = shown(pilot, "#room-title")
        assert "All Fours" in title and "a chosen deal" in title and "2 seats" in title
        code = re.search(r"Room (\w+)", title)
        assert code is not None
        assert shown(pilot, "#share") == (
            f"Friends join with the code {code.group(1)}: "
            f"patience-race race {code.group(1)} --server {server.url}"
        )
        assert "Ann | · not yet | host, you" in shown(pilot, "#seats")
        assert "(empty seat)" in shown(pilot, "#seats")
        assert start_key_shown(pilot), "the host may start now"

        bob = await server.client("Bob")
        await bob.join(code.group(1))
        await until(pilot, lambda: "Bob" in shown(pilot, "#seats"))
        await bob.ready()
        await until(pilot, lambda: "Bob | ✔ ready" in shown(pilot, "#seats"))
        await pilot.press("r")

        await on_screen(pilot, RaceScreen)
        await until(pilot, lambda: "5D" in shown(pilot, "#board"))
        board = shown(pilot, "#board")
        assert "heap:1 (A) ## ## ## 5D" in board and "heap:13 (K)" in board
        assert f"1  {FIRST_MOVE}" in shown(pilot, "#moves")
        assert "place 5D, just turned on heap:1" in shown(pilot, "#notes")
        assert "Ann (you) | " in shown(pilot, "#racers") and "0/52" in shown(pilot, "#racers")

        # typed in text form
        await type_move(pilot, FIRST_MOVE.lower())
        await until(pilot, lambda: "AH turned on heap:5" in shown(pilot, "#last"))
        assert "heap:5 (5) 5D ## ## ## AH" in shown(pilot, "#board")
        assert shown(pilot, "#move") == ""
        assert "1  AH heap:5 -> heap:1 bottom" in shown(pilot, "#moves")

        # refused, with the reason, and the text kept to be corrected
        await type_move(pilot, "AH heap:5 -> heap:2 bottom")
        await until(pilot, lambda: "Refused" in shown(pilot, "#status"))
        assert "AH goes under heap:1" in shown(pilot, "#status")
        assert shown(pilot, "#move") == "AH heap:5 -> heap:2 bottom"

        # by its number in the list, typed
        app.screen.query_one("#move", Input).value = ""
        await type_move(pilot, "1")
        await until(pilot, lambda: "You played AH heap:5 -> heap:1 bottom" in shown(pilot, "#last"))
        assert "Refused" not in shown(pilot, "#status")

        # picked from the list
        first = shown(pilot, "#moves").splitlines()[0].split(maxsplit=1)[1]
        await pilot.press("ctrl+o", "enter")
        await until(pilot, lambda: f"You played {first}" in shown(pilot, "#last"))
        assert "| 3 |" in row_of(pilot, "#racers", "Ann (you)")

        # the other racer's progress, live
        view = (await bob.next_event(YourView)).view
        await bob.move(view.legal_moves[0])
        await until(pilot, lambda: "| 1 |" in row_of(pilot, "#racers", "Bob"))
        await bob.resign()
        await until(pilot, lambda: "resigned" in row_of(pilot, "#racers", "Bob"))

        await pilot.press("ctrl+r")
        await pilot.press("y")
        await on_screen(pilot, ResultsScreen)
        ranking = shown(pilot, "#ranking").splitlines()
        assert ranking[0].startswith("1 | Ann (you) | resigned")
        assert ranking[1].startswith("2 | Bob | resigned")
        assert ranking[0].endswith("| not rated"), "a chosen deal is not rated"
        assert "The deal was 7: ✔ it matches the commitment" in shown(pilot, "#seed")
        finished = await bob.next_event(RaceFinished)
        assert f"/api/races/{finished.race_id}" in shown(pilot, "#status")

        await pilot.press("l")
        await on_screen(pilot, LeaderboardScreen)
        await until(pilot, lambda: shown(pilot, "#status") == "")
        assert "nobody yet" in shown(pilot, "#fastest")
        await pilot.press("escape")
        await on_screen(pilot, ResultsScreen)
        await pilot.press("n")
        await on_screen(pilot, StartScreen)
        assert "playing as Ann" in shown(pilot, "#title")
        assert not app.screen.query("#name"), "a known player is not asked for a name"
        welcome = app.session.welcome
        await bob.close()

    assert welcome is not None
    stored = json.loads(token_file.read_text())["players"]
    assert stored == [
        {
            "server": server.url,
            "name": "Ann",
            "player_id": welcome.player_id,
            "token": stored[0]["token"],
        }
    ]
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600


async def test_the_results_show_the_rematch_offer_with_its_count_to_accept_or_decline(
    server: Server, tmp_path: Path
) -> None:
    bob = await server.client("Bob")
    room = await bob.create_room("all-fours", deal="number", number=7)
    app = racer(server, tmp_path / "token.json", "Ann", code=room.code)
    async with app.run_test(size=SIZE) as pilot:
        await race_against(pilot, bob)
        await bob.resign()
        await pilot.press("ctrl+r")
        await pilot.press("y")
        await on_screen(pilot, ResultsScreen)
        assert shown(pilot, "#rematch") == "Press r to offer a rematch."
        await bob.rematch()
        await until(
            pilot, lambda: "Bob offers a rematch (1 of 2 accepted)" in shown(pilot, "#rematch")
        )
        await pilot.press("d")
        await until(pilot, lambda: "Ann declined the rematch." in shown(pilot, "#rematch"))
        await pilot.press("r")
        await until(
            pilot, lambda: shown(pilot, "#rematch") == "Rematch: 1 of 2 accepted, waiting for Bob."
        )
        await bob.rematch()
        await on_screen(pilot, RoomScreen)
        assert [seat.name for seat in (await bob.next_lobby()).seats] == ["Bob", "Ann"]
        await bob.close()


async def test_the_results_show_each_racers_new_rating_and_the_boards_the_rated_board(
    server: Server, tmp_path: Path
) -> None:
    app = racer(server, tmp_path / "token.json", "Ann")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, StartScreen)
        app.screen.query_one("#rule-set", Select).value = "all-fours"
        app.screen.query_one("#deal", Select).value = "secret"
        await pilot.pause()
        await pilot.click("#create-room")
        await on_screen(pilot, RoomScreen)
        code = re.search(r"Room (\w+)", shown(pilot, "#room-title"))
        assert code is not None
        bob = await rated_racer(server, "Bob")  # from another address: the race is rated
        await bob.join(code.group(1))
        await race_against(pilot, bob)
        view = (await bob.next_event(YourView)).view
        await bob.move(next(move for move in view.legal_moves if move != "resign"))
        await bob.resign()
        await until(pilot, lambda: "resigned" in row_of(pilot, "#racers", "Bob"))
        await type_move(pilot, "1")  # a move of her own: a racer who made none is not rated
        await until(pilot, lambda: "You played" in shown(pilot, "#last"))
        await pilot.press("ctrl+r")
        await pilot.press("y")
        await on_screen(pilot, ResultsScreen)
        finished = await bob.next_event(RaceFinished)
        await until(
            pilot, lambda: "(+" in shown(pilot, "#ranking") or "(-" in shown(pilot, "#ranking")
        )
        ratings = {entry.name: entry.rating for entry in finished.ranking}
        for name in ("Ann", "Bob"):
            change = ratings[name]
            assert change is not None
            assert row_of(pilot, "#ranking", name).endswith(f"| {change}")

        await pilot.press("l")
        await on_screen(pilot, LeaderboardScreen)
        await until(pilot, lambda: "Bob" in shown(pilot, "#ratings"))
        lines = shown(pilot, "#ratings").splitlines()
        assert len(lines) == 2 and all(line.endswith("| 1") for line in lines)
        after = ratings["Ann"]
        assert after is not None
        assert any(
            f"| Ann (you) | {after.after} | {after.after.mu:.1f} |" in line for line in lines
        )
        app.screen.query_one("#board-rule-set", Select).value = "octagon"
        await until(pilot, lambda: "nobody rated yet" in shown(pilot, "#ratings"))
        await bob.close()


async def test_joining_by_code_as_the_same_player_and_riding_out_a_restart(
    server: Server, tmp_path: Path
) -> None:
    token_file = tmp_path / "token.json"
    first = racer(server, token_file, name="Bob")
    async with first.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "playing as Bob" in shown(pilot, "#title"))
        bob_id = first.session.state.player_id

    ann = await server.client("Ann")
    room = await ann.create_room("all-fours", deal="number", number=7)
    app = racer(server, token_file, code=room.code.lower())
    restarted = server
    try:
        async with app.run_test(size=SIZE) as pilot:
            await on_screen(pilot, RoomScreen)
            await until(pilot, lambda: "Bob | · not yet | you" in shown(pilot, "#seats"))
            assert app.session.state.player_id == bob_id, "the stored token was used"
            assert app.screen.query_one("#start").display is False, "only the host starts"
            await pilot.press("r")
            await ann.ready()
            await on_screen(pilot, RaceScreen)
            await until(pilot, lambda: FIRST_MOVE in shown(pilot, "#moves"))
            await type_move(pilot, "1")
            await until(pilot, lambda: "| 1 |" in row_of(pilot, "#racers", "Bob (you)"))

            await stop_server(server)
            await until(pilot, lambda: "reconnecting" in shown(pilot, "#status"))
            restarted = await start_server(server.settings)
            await until(pilot, lambda: shown(pilot, "#status") == "reconnected")
            assert "heap:5 (5) 5D ## ## ## AH" in shown(pilot, "#board")

            await ann.reconnect()
            await ann.move(FIRST_MOVE)
            await until(pilot, lambda: "| 1 |" in row_of(pilot, "#racers", "Ann"))
            await type_move(pilot, "1")
            await until(pilot, lambda: "| 2 |" in row_of(pilot, "#racers", "Bob (you)"))
            await ann.close()
    finally:
        await stop_server(restarted)
    assert [entry.name for entry in IdentityFile(token_file).load()] == ["Bob"]


@pytest.mark.parametrize("stays", [False, True], ids=["its-worker-stops", "closed-with-1012"])
async def test_the_racer_comes_back_when_the_worker_holding_its_room_goes(
    sessions: async_sessionmaker[AsyncSession],
    database_url: str,
    redis_url: str,
    tmp_path: Path,
    stays: bool,
    request: pytest.FixtureRequest,
) -> None:
    """Bob's racer reaches the second worker, the room is on the first. Following
    ``reconnect_to`` it moves to the first and loses its connection when that stops; staying
    (``hopping``) it is closed with 1012. Either way it comes back by the second, its server's
    address, and races on."""
    if stays:
        request.getfixturevalue("hopping")
    async with two_workers(database_url, redis_url) as (first, second):
        ann = await first.client("Ann")
        room = await ann.create_room("all-fours", deal="number", number=7)
        app = RacerApp(
            RaceSession(second.url, IdentityFile(tmp_path / "token.json"), "Bob"), room.code
        )
        async with app.run_test(size=SIZE) as pilot:
            await race_against(pilot, ann)
            client = app.session.client
            assert client is not None and client.url == second.url
            assert client.connected_to == (second.url if stays else first.url)
            await type_move(pilot, "1")
            await until(pilot, lambda: "| 1 |" in row_of(pilot, "#racers", "Bob (you)"))

            await stop_server(first)
            await until(pilot, lambda: shown(pilot, "#status") == "reconnected")
            assert "heap:5 (5) 5D ## ## ## AH" in shown(pilot, "#board")
            ann.url = second.url
            await come_back(ann)
            await ann.move(FIRST_MOVE)
            await until(pilot, lambda: "| 1 |" in row_of(pilot, "#racers", "Ann"))
            await type_move(pilot, "1")
            await until(pilot, lambda: "| 2 |" in row_of(pilot, "#racers", "Bob (you)"))
            await ann.close()


def test_the_token_file_keeps_one_player_per_server_and_name(tmp_path: Path) -> None:
    tokens = IdentityFile(tmp_path / "token.json")
    ann = Identity("ws://a/ws", "Ann", "p1", "t1")
    bob = Identity("ws://a/ws", "Bob", "p2", "t2")
    elsewhere = Identity("ws://b/ws", "Ann", "p9", "t9")
    for identity in (ann, bob, elsewhere):
        tokens.save(identity)
    assert tokens.find("ws://a/ws") == bob, "without a name: who played last"
    assert tokens.find("ws://a/ws", "Ann") == ann
    assert tokens.find("ws://c/ws") is None
    tokens.save(ann)
    assert tokens.find("ws://a/ws") == ann
    fresh = Identity("ws://a/ws", "Ann", "p3", "t3")
    tokens.save(fresh)
    assert tokens.load() == [bob, elsewhere, fresh]


def test_a_name_is_found_as_the_server_stores_it_trimmed_and_nfc(tmp_path: Path) -> None:
    tokens = IdentityFile(tmp_path / "token.json")
    zoe = Identity("ws://a/ws", "Zo\u00eb", "p1", "t1")
    tokens.save(zoe)
    assert tokens.find("ws://a/ws", " Zoe\u0308 ") == zoe


def test_the_join_hint_names_the_server_unless_it_is_the_default() -> None:
    assert join_hint("K7M2XQ4B", DEFAULT_SERVER) == "patience-race race K7M2XQ4B"
    assert join_hint("K7M2XQ4B", "ws://cards.example:9000/ws") == (
        "patience-race race K7M2XQ4B --server ws://cards.example:9000/ws"
    )


async def test_tab_completes_the_suggested_move(server: Server, tmp_path: Path) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room("all-fours", deal="number", number=7)
    app = racer(server, tmp_path / "token.json", name="Bob", code=room.code)
    async with app.run_test(size=SIZE) as pilot:
        await race_against(pilot, ann)
        field = app.screen.query_one("#move", Input)
        await pilot.press("tab")
        assert app.focused is not field, "with nothing to complete, Tab moves on as usual"
        field.focus()
        await pilot.press("5", "d")
        await pilot.pause()
        await pilot.press("tab")
        assert (field.value, app.focused) == (FIRST_MOVE, field)
        await pilot.press("enter")
        await until(pilot, lambda: f"You played {FIRST_MOVE}" in shown(pilot, "#last"))
        await ann.close()


def drawn(slot: Slot, board: str) -> bool:
    """The board shows the pile under its label or its name (``heap:1`` is not ``heap:10``)."""
    return any(
        re.search(rf"(?<![\w:-]){re.escape(name)}(?![\w:])", board)
        for name in (slot.label, str(slot.pile))
        if name
    )


def all_in_view(pilot: Pilot[None]) -> bool:
    """Neither the screen nor your board's box has anything scrolled out of view."""
    return all(
        widget.max_scroll_x == widget.max_scroll_y == 0
        for widget in (pilot.app.screen, pilot.app.screen.query_one("#board-box"))
    )


@pytest.mark.parametrize("rule_set", RULE_SET_NAMES)
async def test_every_pile_is_in_view_on_an_80_by_24_terminal(
    server: Server, tmp_path: Path, rule_set: str
) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room(rule_set, deal="number", number=7)
    app = racer(server, tmp_path / "token.json", name="Bob", code=room.code)
    async with app.run_test(size=SMALL) as pilot:
        await race_against(pilot, ann)
        await pilot.pause()
        board = shown(pilot, "#board")
        missing = [
            str(slot.pile) for slot in find_rule_set(rule_set).layout if not drawn(slot, board)
        ]
        assert not missing, f"not drawn: {missing}\n{board}"
        assert all_in_view(pilot), f"the screen or the board scrolls:\n{board}"
        await ann.close()


async def test_the_board_is_drawn_again_to_fit_a_resized_terminal(
    server: Server, tmp_path: Path
) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room("hidden-cards", deal="number", number=7)
    app = racer(server, tmp_path / "token.json", name="Bob", code=room.code)
    async with app.run_test(size=(200, 50)) as pilot:
        await race_against(pilot, ann)
        await pilot.pause()
        assert shown(pilot, "#board").count("\n") == 2, "three rows, as the rule set lays out"
        assert "heap:1 (A)" in shown(pilot, "#board")
        await pilot.resize_terminal(*SMALL)
        await until(pilot, lambda: all_in_view(pilot))
        assert "reserve:4" in shown(pilot, "#board")
        await pilot.resize_terminal(200, 50)
        await until(pilot, lambda: shown(pilot, "#board").count("\n") == 2)
        await ann.close()


def start_key_shown(pilot: Pilot[None]) -> bool:
    """Whether the footer offers "s Start now"."""
    return "s" in pilot.app.screen.active_bindings


async def test_only_the_host_is_offered_to_start_now(server: Server, tmp_path: Path) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room("all-fours", deal="number", number=7)
    app = racer(server, tmp_path / "token.json", name="Bob", code=room.code)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, RoomScreen)
        await until(pilot, lambda: "Bob" in shown(pilot, "#seats"))
        assert not start_key_shown(pilot)
        assert not pilot.app.screen.query_one("#start").display
        await ann.leave()  # the host's role passes to Bob
        await until(pilot, lambda: start_key_shown(pilot))
        assert pilot.app.screen.query_one("#start").display
    await ann.close()


async def test_the_start_form_fits_an_80_column_terminal(server: Server, tmp_path: Path) -> None:
    app = racer(server, tmp_path / "token.json", name="Ann")
    async with app.run_test(size=SMALL) as pilot:
        await until(pilot, lambda: "playing as Ann" in shown(pilot, "#title"))
        for control in ("#create-room", "#code", "#join-room"):
            region = app.screen.query_one(control).region
            assert app.screen.region.contains_region(region), f"{control} is cut off: {region}"


async def test_a_move_typed_in_other_digits_or_too_long_is_refused_and_the_racer_stays(
    server: Server, tmp_path: Path
) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room("all-fours", deal="number", number=7)
    app = racer(server, tmp_path / "token.json", name="Bob", code=room.code)
    async with app.run_test(size=SIZE) as pilot:
        await race_against(pilot, ann)
        screen = app.screen
        assert isinstance(screen, RaceScreen)
        for typed, says in [
            ("²", "Refused: ²"),
            ("AS x² heap:1 -> heap:2", "Refused: AS x²"),
            ("9" * 5000, "there is no move"),
            ("AS heap:1 -> " + "x" * 80, "Refused: AS heap:1 -> xxx"),
        ]:
            screen.say("")
            screen.query_one("#move", Input).value = typed
            await type_move(pilot, "")
            await until(pilot, lambda says=says: says in shown(pilot, "#status"))
            assert app.screen is screen and app.is_running
        screen.query_one("#move", Input).value = ""
        await type_move(pilot, "1")
        await until(pilot, lambda: f"You played {FIRST_MOVE}" in shown(pilot, "#last"))
        await ann.close()


MARKUP_NAMES = ["[/]", "[@click=app.quit]", "[link=x]y[/link]", "[bold]"]
"""Names that Rich and Textual would read as markup: ``[/]`` closes a tag never opened."""


async def test_names_that_look_like_markup_are_shown_as_written(
    server: Server, tmp_path: Path
) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room("all-fours", deal="number", number=7, seats=6)
    app = racer(server, tmp_path / "token.json", name="Bob", code=room.code)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, RoomScreen)
        others = {}
        for name in MARKUP_NAMES:
            others[name] = await server.client(name)
            await others[name].join(room.code)
            await until(pilot, lambda name=name: f"{name} | · not yet" in shown(pilot, "#seats"))
            await pilot.pause(0.1)
            assert app.is_running and isinstance(app.screen, RoomScreen), "the racer is up"
        for client in [ann, *others.values()]:
            await client.ready()
        await pilot.press("r")
        await on_screen(pilot, RaceScreen)
        for name, client in others.items():
            await client.resign()
            await until(
                pilot,
                lambda name=name: (
                    f"{name} | " in shown(pilot, "#racers")
                    and "resigned" in row_of(pilot, "#racers", f"{name} | ")
                ),
            )
        await pilot.pause(0.1)
        assert app.is_running and isinstance(app.screen, RaceScreen), "the racer is up"
        await ann.resign()
        await pilot.press("ctrl+r", "y")
        await on_screen(pilot, ResultsScreen)
        ranking = shown(pilot, "#ranking")
        assert all(f"| {name} | resigned" in ranking for name in MARKUP_NAMES), ranking
        await pilot.pause(0.1)
        assert app.is_running and isinstance(app.screen, ResultsScreen), "the racer is up"
        for client in [ann, *others.values()]:
            await client.close()


async def test_a_name_the_server_would_refuse_is_said_so_on_the_form(
    server: Server, tmp_path: Path
) -> None:
    app = racer(server, tmp_path / "token.json", name="Ann\u202e")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "bidirectional" in shown(pilot, "#status"))
        assert app.is_running and isinstance(app.screen, StartScreen)
    app = racer(server, tmp_path / "token.json")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, StartScreen)
        app.screen.query_one("#name", Input).value = "\u2066Ann\u2069"
        app.screen.query_one("#code", Input).value = "ABCDEF"
        await pilot.click("#join-room")
        await until(pilot, lambda: "bidirectional" in shown(pilot, "#status"))
        assert app.is_running and isinstance(app.screen, StartScreen)
        app.screen.query_one("#name", Input).value = " Zoe\u0308 "
        await pilot.click("#create-room")
        await on_screen(pilot, RoomScreen)
        assert "Zo\u00eb | · not yet | host, you" in shown(pilot, "#seats")


async def test_a_bot_is_marked_on_the_seats_the_racers_and_the_ranking(
    server: Server, tmp_path: Path
) -> None:
    ann = await server.client("Ann")
    room = await ann.create_room("all-fours", seats=3, deal="number", number=7)
    robo = await RaceClient.connect(server.url)
    await robo.hello(name="Robo", bot=True)
    await robo.join(room.code)
    app = racer(server, tmp_path / "token.json", name="Bob", code=room.code)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, RoomScreen)
        await until(pilot, lambda: "Bob" in shown(pilot, "#seats"))
        assert row_of(pilot, "#seats", "Robo").startswith("Robo [bot] | · not yet")
        assert row_of(pilot, "#seats", "Ann").startswith("Ann | ")
        await robo.ready()
        await race_against(pilot, ann)
        assert row_of(pilot, "#racers", "Robo").startswith("Robo [bot] | ")
        assert row_of(pilot, "#racers", "Bob").startswith("Bob (you) | ")
        for other in (ann, robo):
            await other.next_event(YourView)
            await other.resign()
        await pilot.press("ctrl+r")
        await pilot.press("y")
        await on_screen(pilot, ResultsScreen)
        await until(pilot, lambda: "Robo" in shown(pilot, "#ranking"))
        assert "| Robo [bot] | resigned" in row_of(pilot, "#ranking", "Robo")
        assert "| Ann | resigned" in row_of(pilot, "#ranking", "Ann")
    for other in (ann, robo):
        await other.close()


def test_a_bot_is_marked_wherever_a_name_is_listed() -> None:
    assert racer_name("Robo", False, bot=True).plain == "Robo [bot]"
    assert racer_name("Robo", True, bot=True).plain == "Robo (you) [bot]"
    assert racer_name("Ann", False).plain == "Ann"
