"""The browser client (clients/web) end to end: Debian's Chromium, headless, driven by Playwright,
against a real server and database.

Two players race in two browser contexts, a refused move is explained, every rule set's board is
drawn (screenshots go to docs/img/ for people to look at), the leaderboards mark your own lines,
and the replay viewer steps through a finished race. The browser part of the suite runs on SQLite
only: the database is not what it tests.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import (
    Browser,
    Dialog,
    Locator,
    Page,
    Position,
    ViewportSize,
    WebSocket,
    WebSocketRoute,
    async_playwright,
    expect,
)

from clients.sdk import RaceClient
from engine.moves import Move
from engine.registry import RULE_SET_NAMES, find_rule_set
from tests.clients.conftest import rated_racer
from tests.server.cluster.test_bus import two_workers
from tests.server.test_server import Server, Sessions, play_to_end
from wire.protocol import ProgressEvent, RaceFinished, YourView

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT: ViewportSize = {"width": 1280, "height": 900}


def screenshot(name: str) -> Path:
    """Where a screenshot goes: a temporary folder, so that a test run changes no tracked file;
    ``PATIENCE_RACE_SCREENSHOTS=docs/img pytest tests/clients/test_web.py`` renews docs/img."""
    folder = Path(
        os.environ.get("PATIENCE_RACE_SCREENSHOTS")
        or Path(tempfile.gettempdir()) / "patience-race-screenshots"
    )
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


WON_BY_PLAYING_ON = 3
"""An All Fours deal that playing every move as it comes wins (in 52 moves)."""
SHOWN_DEAL = 7
CARD_CORNER: Position = {"x": 10, "y": 8}
"""Where to grab a card: its top-left corner shows even under the next card of a fan."""

pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"the browser tests drive Chromium at "
        f"{CHROMIUM}, which is not installed (apt-get install chromium)",
    ),
    pytest.mark.parametrize("database_kind", ["sqlite"], indirect=True),
]

OpenPage = Callable[..., Awaitable[Page]]


@pytest_asyncio.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            await chromium.close()


@pytest_asyncio.fixture
async def open_page(browser: Browser, server: Server) -> AsyncIterator[OpenPage]:
    """Open a path of the client in a browser context of its own (a player of their own, with
    their own localStorage); the test fails if any page raised a JavaScript error."""
    errors: list[str] = []

    async def open_(path: str = "/") -> Page:
        context = await browser.new_context(viewport=VIEWPORT)
        page = await context.new_page()
        page.on("pageerror", lambda error: errors.append(f"{path}: {error}"))
        await page.goto(server.http + path)
        return page

    yield open_
    assert not errors


# -- what a player does, in the page ------------------------------------------------------------


async def give_name(page: Page, name: str) -> None:
    await page.fill("input[name=name]", name)
    await page.click(".name-form button")


async def open_room(page: Page, rule_set: str, deal: int) -> str:
    """Open a room on a chosen deal from the lobby; the room's code."""
    await page.select_option("select[name=rule_set]", rule_set)
    await page.fill("input[name=number]", str(deal))
    await page.click(".create button[type=submit]")
    code = page.locator(".room-head .code")
    await expect(code).to_be_visible()
    return await code.inner_text()


async def moves_made(page: Page) -> int:
    return int(await page.locator(".board").get_attribute("data-moves") or "")


async def legal_moves(page: Page) -> list[str]:
    """The moves the page offers (resign apart) as the server listed them, actions last."""
    moves: list[str] = await page.locator("[data-move]").evaluate_all(
        "buttons => buttons.map(button => button.dataset.move)"
    )
    return sorted(moves, key=lambda move: " -> " not in move)


def card_at(page: Page, card: str, pile: str) -> Locator:
    return page.locator(f'.pile[data-pile="{pile}"] .card[data-card="{card}"]')


async def click_move(page: Page, text: str) -> None:
    """Make a move on the board: an action by its button, a transfer by clicking its card and
    then the pile it goes to."""
    before = await moves_made(page)
    move = Move.parse(text)
    if move.action is not None:
        await page.click(f'button.action[data-move="{text}"]')
    else:
        await settle(page)  # the cards the last move shifted are where they will stay
        await card_at(page, str(move.card), str(move.source)).click(position=CARD_CORNER)
        await page.locator(f'.pile[data-pile="{move.target}"]').click()
    await expect(page.locator(".board")).to_have_attribute("data-moves", str(before + 1))


async def resign(page: Page) -> None:
    await page.click("button.resign")
    await page.click("button.resign")  # "Really resign?"


# -- the tests ----------------------------------------------------------------------------------


async def test_a_secret_race_shows_each_racers_new_rating_and_the_rated_board(
    server: Server, open_page: OpenPage
) -> None:
    """A secret deal raced by two from two addresses, each making a move, is rated: the
    finish panel gives each racer's rating after the race and its change, and the rule set's
    rated board lists both. (Two pages of this browser are one address: Bob races from
    another, ``rated_racer``.)"""
    ann = await open_page()
    await give_name(ann, "Ann")
    await ann.select_option("select[name=rule_set]", "octagon")
    await ann.check("input[name=deal][value=secret]")
    await ann.click(".create button[type=submit]")
    await expect(ann.locator(".room-head .code")).to_be_visible()
    code = await ann.locator(".room-head .code").inner_text()
    bob = await rated_racer(server, "Bob")
    await bob.join(code)
    await expect(ann.locator(".seat")).to_have_count(2)
    await bob.ready()
    await ann.click(".ready-button")
    await expect(ann.locator(".board")).to_have_attribute("data-status", "in_progress")
    await play_a_few(ann, 1)  # a racer who made no move is not rated
    view = (await bob.next_event(YourView)).view
    await bob.move(next(move for move in view.legal_moves if move != "resign"))
    await bob.resign()
    await resign(ann)
    ratings = ann.locator(".finish td.rating")
    await expect(ratings).to_have_count(2)
    for text in await ratings.all_inner_texts():
        # The shown rating ("?" while provisional), its change (a typographic minus, ± for none)
        assert re.fullmatch(r"\d+\?? \([+\u2212\u00b1]\d+\)", text), text
    await bob.close()
    await ann.click(".finish a[href='#/ratings/octagon']")
    await expect(ann.locator(".ratings-table tbody tr")).to_have_count(2)
    await expect(ann.locator(".ratings-table")).to_contain_text("Bob")


async def test_two_players_race_to_the_end_and_both_see_the_ranking(open_page: OpenPage) -> None:
    ann = await open_page()
    await give_name(ann, "Ann")
    code = await open_room(ann, "all-fours", WON_BY_PLAYING_ON)
    bob = await open_page(f"/#/room/{code}")  # the link Ann shares
    await give_name(bob, "Bob")
    await expect(ann.locator(".seat")).to_have_count(2)
    await ann.click(".ready-button")
    await expect(bob.locator('.seat[data-player="Ann"] .ready')).to_have_text("✓ ready")
    await bob.click(".ready-button")
    for page in (ann, bob):
        await expect(page.locator(".board")).to_have_attribute("data-status", "in_progress")

    first = Move.parse((await legal_moves(bob))[0])  # Bob drags his first card home
    await card_at(bob, str(first.card), str(first.source)).drag_to(
        bob.locator(f'.pile[data-pile="{first.target}"]'), source_position=CARD_CORNER
    )
    await expect(bob.locator(".board")).to_have_attribute("data-moves", "1")
    await expect(ann.locator('.seat[data-player="Bob"] .seat-progress')).to_contain_text("1 move ")

    while await ann.locator(".board").get_attribute("data-status") == "in_progress":
        await click_move(ann, (await legal_moves(ann))[0])
    await expect(ann.locator(".race-status .status")).to_have_text("won")
    await expect(bob.locator('.seat[data-player="Ann"] .seat-progress')).to_contain_text(
        "52/52 home"
    )
    await resign(bob)

    for page in (ann, bob):
        finish = page.locator(".finish")
        await expect(finish.locator("tbody tr")).to_have_count(2)
        ranking = await finish.locator("tbody tr").evaluate_all(
            "rows => rows.map(row => [...row.cells].slice(0, 3).map(cell => cell.textContent))"
        )
        assert ranking == [["1", "Ann", "cleared the deal"], ["2", "Bob", "resigned"]]
        await expect(finish.locator(".seed code")).to_have_text(str(WON_BY_PLAYING_ON))
        await expect(finish.locator(".commitment-check")).to_contain_text("✓")
    await expect(ann.locator(".finish-headline")).to_have_text("You won the race")
    await expect(bob.locator(".finish-headline")).to_have_text("You resigned – 2nd of 2")
    await expect(ann.locator("tr.mine td").nth(1)).to_have_text("Ann")
    clock = ann.locator(".race-status .clock")
    stopped = await clock.inner_text()
    await ann.wait_for_timeout(300)
    assert await clock.inner_text() == stopped, "a finished racer's clock stands still"


async def test_a_refused_move_shows_the_servers_reason(open_page: OpenPage) -> None:
    page = await open_page()
    await give_name(page, "Ann")
    await open_room(page, "all-fours", SHOWN_DEAL)
    await page.click(".start-button")  # the host may start alone
    await card_at(page, "5D", "heap:1").click(position=CARD_CORNER)
    await expect(page.locator('.pile[data-pile="heap:5"]')).to_have_class(re.compile("target"))
    await page.locator('.pile[data-pile="heap:6"]').click()
    refusal = page.locator(".refusal")
    await expect(refusal).to_contain_text("Put the 5♦ from the ace heap under the 6 heap")
    await expect(refusal).to_contain_text("5D heap:1 -> heap:6 bottom")
    await expect(refusal).to_contain_text("5♦ goes under the 5 heap, the heap of its value")
    box = await refusal.bounding_box()
    assert box and box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"], "in view"
    assert await moves_made(page) == 0
    await click_move(page, "5D heap:1 -> heap:5 bottom")
    await expect(refusal).to_be_hidden()


async def test_a_dropped_connection_reconnects_and_resumes_the_race(
    server: Server, open_page: OpenPage
) -> None:
    page = await open_page()
    sockets: list[tuple[WebSocketRoute, WebSocketRoute]] = []

    async def through(route: WebSocketRoute) -> None:  # pass every frame on, and keep hold
        sockets.append((route, route.connect_to_server()))

    await page.route_web_socket(re.compile(r"/ws$"), through)
    await give_name(page, "Ann")
    code = await open_room(page, "all-fours", SHOWN_DEAL)
    bob = await server.client("Bob")
    await bob.join(code)
    await page.click(".ready-button")
    await bob.ready()
    await click_move(page, "5D heap:1 -> heap:5 bottom")

    in_page, to_server = sockets[-1]
    await to_server.close()
    await in_page.close()
    await expect(page.locator(".notice.connection")).to_contain_text("Your seat is kept for")
    view = (await bob.next_event(YourView)).view
    ack = await bob.move(view.legal_moves[0])
    await bob.move(ack.legal_moves[0])

    await expect(page.locator('.seat[data-player="Bob"] .seat-progress')).to_contain_text(
        "2 moves"
    )  # the moves made while Ann was away, from `resumed`
    assert len(sockets) == 2
    await expect(page.locator(".notice.connection")).to_have_text("Reconnected")
    await expect(page.locator(".notice")).to_have_count(0)  # said for a moment
    assert await moves_made(page) == 1
    await click_move(page, (await legal_moves(page))[0])


async def test_a_player_moves_to_the_worker_that_holds_the_room_and_races_there(
    browser: Browser, sessions: Sessions, database_url: str, redis_url: str
) -> None:
    """The page is served by the second worker; the room it joins is held by the first: the
    join's reply says so (``reconnect_to``) and the page moves its connection there."""
    async with two_workers(database_url, redis_url) as (first, second):
        ann = await first.client("Ann")
        room = await ann.create_room("all-fours", deal="number", number=SHOWN_DEAL)
        context = await browser.new_context(viewport=VIEWPORT)
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        opened: list[str] = []
        closed: list[str] = []

        def watch(socket: WebSocket) -> None:
            opened.append(socket.url)
            socket.on("close", lambda socket: closed.append(socket.url))

        page.on("websocket", watch)
        await page.goto(f"{second.http}/#/room/{room.code}")
        await give_name(page, "Bob")
        await expect(page.locator(".seat")).to_have_count(2)
        async with asyncio.timeout(10):
            while closed != [second.url]:
                await asyncio.sleep(0.05)
        assert opened == [second.url, first.url], "moved to the room's worker"
        await page.click(".ready-button")
        await ann.ready()
        await click_move(page, "5D heap:1 -> heap:5 bottom")
        await expect(page.locator('.seat[data-player="Ann"]')).to_be_visible()
        progress = await ann.next_event(ProgressEvent)
        assert progress.moves == 1
        await page.screenshot(path=screenshot("moved-to-the-rooms-worker.png"), full_page=True)
        await context.close()
        assert not errors


async def race_on(
    server: Server,
    rule_set: str,
    deal: int,
    players: list[RaceClient],
    pauses: list[float],
    monkeypatch: pytest.MonkeyPatch,
) -> RaceFinished:
    """A whole race of SDK clients, each playing every move as it comes, at its own pace, on
    a secret deal that is ``deal`` (a chosen deal is practice, on no board but its own)."""
    monkeypatch.setattr(secrets, "randbits", lambda bits: deal)
    room = await players[0].create_room(rule_set, seats=len(players))
    for player in players[1:]:
        await player.join(room.code)
    for player in players:
        await player.ready()
    for player, pause in zip(players, pauses, strict=True):
        await play_to_end(player, pause=pause)
    finished = await players[0].next_event(RaceFinished, timeout=30)
    for player in players:
        await player.leave()
    return finished


async def test_the_leaderboards_mark_your_own_lines(
    server: Server, open_page: OpenPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    ann, bob, cy = [await server.client(name) for name in ("Ann", "Bob", "Cy")]
    for deal in (WON_BY_PLAYING_ON, 4):
        await race_on(server, "all-fours", deal, [bob, ann, cy], [0.0, 0.004, 0.008], monkeypatch)
    page = await open_page()
    await page.evaluate(
        "player => localStorage.setItem('patience-race.identity', JSON.stringify(player))",
        {"name": "Ann", "token": ann.token, "player_id": ann.player_id},
    )
    await page.goto(f"{server.http}/#/boards/all-fours?board=fastest&period=all&around=me")
    rows = page.locator(".board-table tbody tr")
    await expect(rows).to_have_count(6)
    await expect(page.locator("p.counts")).to_contain_text("Chosen deals are practice")
    await expect(page.locator("tr.mine")).to_have_count(2)
    assert set(await page.locator("tr.mine td:nth-child(2)").all_inner_texts()) == {"Ann"}
    await expect(rows.first.locator("td").nth(1)).to_have_text("Bob")
    await page.screenshot(path=screenshot("leaderboard.png"), full_page=True)

    await page.click("a.tab:text('Most wins')")
    await expect(page.locator("tr.mine td").nth(2)).to_have_text("2")
    await page.click("a.tab:text('One deal')")
    await page.fill("input[name=deal]", str(WON_BY_PLAYING_ON))
    await page.click("form.pick button")
    await expect(rows).to_have_count(3)


async def test_the_replay_viewer_steps_through_a_finished_race(
    server: Server, open_page: OpenPage
) -> None:
    ann, bob = await server.client("Ann"), await server.client("Bob")
    room = await ann.create_room("octagon", deal="number", number=SHOWN_DEAL)
    await bob.join(room.code)
    await ann.ready()
    await bob.ready()
    await play_to_end(ann)
    await bob.next_event(YourView)
    await bob.resign()
    finished = await ann.next_event(RaceFinished)
    status, replay = await server.http_get(
        f"/api/races/{finished.race_id}/replay?player={ann.player_id}"
    )
    assert status == 200
    steps = replay["steps"]

    page = await open_page(f"/#/replay/{finished.race_id}")
    caption, board = page.locator(".caption"), page.locator(".board")
    await expect(caption).to_contain_text("The opening")
    for step in (1, 2, 3):
        await page.click("button.forward")
        await expect(caption).to_have_attribute("data-step", str(step))
        await expect(caption).to_contain_text(steps[step]["move"])
        await expect(board).to_have_attribute("data-moves", str(step))
    await page.click("button.back")
    await expect(caption).to_have_attribute("data-step", "2")
    await expect(board).to_have_attribute("data-moves", "2")
    waste = page.locator('.pile[data-pile="waste"]')
    expected = steps[2]["view"]["piles"]
    waste_count = next(len(pile["cards"]) for pile in expected if pile["pile"] == "waste")
    await expect(waste).to_have_attribute("data-count", str(waste_count))

    await page.click("button.last")
    await expect(caption).to_have_attribute("data-step", str(len(steps) - 1))
    await expect(caption).to_contain_text("no move left")
    await page.keyboard.press("ArrowLeft")
    await expect(caption).to_have_attribute("data-step", str(len(steps) - 2))
    await page.locator("input[type=range]").fill("20")
    await expect(caption).to_have_attribute("data-step", "20")
    await page.screenshot(path=screenshot("replay.png"), full_page=True)

    await page.click("a.tab:text('Bob')")
    await expect(page.locator("a.tab.active")).to_have_text("Bob")
    await page.click("button.last")
    await expect(caption).to_contain_text("resign")
    await expect(board).to_have_attribute("data-status", "resigned")


HOSTILE_NAME = "<img src=x onerror=alert(1)>"


async def test_a_name_written_as_html_is_shown_as_text(server: Server, open_page: OpenPage) -> None:
    """Everywhere a name is shown: the lobby, the seats, the results, the leaderboards and the
    replay's tabs. Written into the page as HTML it would be an image whose error runs code."""
    page = await open_page()
    dialogs: list[str] = []

    async def dismissed(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        await dialog.dismiss()

    page.on("dialog", dismissed)
    await give_name(page, HOSTILE_NAME)
    await expect(page.locator(".who strong")).to_have_text(HOSTILE_NAME)
    code = await open_room(page, "all-fours", WON_BY_PLAYING_ON)
    bob = await server.client("Bob")
    await bob.join(code)
    await expect(page.locator(".seat .who").first).to_contain_text(HOSTILE_NAME)
    assert await page.locator("img").count() == 0 and dialogs == []
    await page.click(".ready-button")
    await bob.ready()
    await expect(page.locator(".board")).to_have_attribute("data-status", "in_progress")
    await bob.next_event(YourView)
    await bob.resign()
    while await page.locator(".board").get_attribute("data-status") == "in_progress":
        await click_move(page, (await legal_moves(page))[0])
    results = page.locator(".finish tbody tr")
    await expect(results).to_have_count(2)
    await expect(results.first.locator("td").nth(1)).to_have_text(HOSTILE_NAME)
    race_id = (await bob.next_event(RaceFinished)).race_id

    # A chosen deal is practice: its results are on that deal's own board.
    await page.goto(f"{server.http}/#/boards/all-fours?board=deal&deal={WON_BY_PLAYING_ON}")
    await expect(page.locator(".board-table tbody tr td").nth(1)).to_have_text(HOSTILE_NAME)
    await page.goto(f"{server.http}/#/replay/{race_id}")
    await expect(page.locator(f"a.tab:text('{HOSTILE_NAME}')")).to_have_count(1)
    assert await page.locator("img").count() == 0
    assert dialogs == []


# -- every rule set, on three screens: the board fits, the race ends, Rematch -------------------

SIZES: dict[str, ViewportSize] = {
    "phone": {"width": 390, "height": 844},
    "laptop": {"width": 1366, "height": 768},
    "desktop": {"width": 1920, "height": 1080},
}


async def assert_every_pile_in_view(page: Page, size: ViewportSize, rule_set: str) -> None:
    """Every pile of the board lies inside the window, the page scrolled to its top."""
    await page.evaluate("window.scrollTo(0, 0)")
    piles = page.locator(".board .pile")
    await expect(piles).to_have_count(len(find_rule_set(rule_set).layout))
    boxes = await piles.evaluate_all(
        "piles => piles.map(p => { const r = p.getBoundingClientRect();"
        " return [p.dataset.pile, r.left, r.top, r.right, r.bottom]; })"
    )
    outside = [
        box
        for box in boxes
        if box[1] < -0.5
        or box[2] < -0.5
        or box[3] > size["width"] + 0.5
        or box[4] > size["height"] + 0.5
    ]
    assert not outside, f"{rule_set} at {size}: piles outside the window: {outside}"


async def settle(page: Page) -> None:
    """Wait for the cards still travelling (the moves' animation) to land."""
    await page.evaluate("Promise.all(document.getAnimations().map(a => a.finished))")


async def race_in_room(ann: Page, bob: Page) -> None:
    """Both get ready; the race starts on both boards."""
    await ann.click(".ready-button")
    await expect(bob.locator('.seat[data-player="Ann"] .ready')).to_have_text("✓ ready")
    await bob.click(".ready-button")
    for page in (ann, bob):
        await expect(page.locator(".board")).to_have_attribute("data-status", "in_progress")


async def play_a_few(page: Page, count: int) -> None:
    """Moves from the keyboard: Space plays the only move, 1 the first one listed; or the
    action (turn, redeal) by its button."""
    for _ in range(count):
        before = await moves_made(page)
        moves = [move for move in await legal_moves(page) if move != "resign"]
        if not moves:
            return
        transfers = [move for move in moves if " -> " in move]
        if len(moves) == 1:
            await page.locator("body").press("Space")
        elif transfers:
            await page.locator("body").press("1")
        else:
            await page.click(f'button.action[data-move="{moves[0]}"]')
        await expect(page.locator(".board")).to_have_attribute("data-moves", str(before + 1))


async def test_every_rule_set_races_to_the_finish_panel_and_a_rematch_on_three_screens(
    browser: Browser, server: Server
) -> None:
    """At 1366x768, 1920x1080 and a 390x844 phone, for every rule set: two browsers race, every
    pile shows without scrolling, the race ends with the finish panel at the top, and Rematch,
    once the other racer accepts it, starts a new race in the same room. The boards are
    photographed (the finish overlay in test_web_room.py)."""
    errors: list[str] = []
    for size_name, size in SIZES.items():
        phone = size_name == "phone"
        pages = []
        for name in ("Ann", "Bob"):
            context = await browser.new_context(viewport=size, has_touch=phone, is_mobile=phone)
            page = await context.new_page()
            page.on(
                "pageerror",
                lambda error, size_name=size_name: errors.append(
                    f"{size_name}: {error}\n{error.stack}"
                ),
            )
            page.on("pageerror", lambda error: print("page error:", error, error.stack))
            await page.goto(server.http + "/")
            await give_name(page, name)
            pages.append(page)
        ann, bob = pages
        for rule_set in RULE_SET_NAMES:
            await ann.goto(f"{server.http}/#/")
            code = await open_room(ann, rule_set, SHOWN_DEAL)
            await bob.goto(f"{server.http}/#/room/{code}")
            await expect(ann.locator(".seat")).to_have_count(2)
            await race_in_room(ann, bob)
            await play_a_few(ann, 3)
            await assert_every_pile_in_view(ann, size, rule_set)
            await assert_every_pile_in_view(bob, size, rule_set)
            if phone:  # the racers' bars sit above the board
                bars = await ann.locator(".seats").bounding_box()
                board = await ann.locator(".board").bounding_box()
                assert bars and board and bars["y"] + bars["height"] <= board["y"]
            await ann.mouse.move(0, 0)
            await settle(ann)
            await ann.screenshot(path=screenshot(f"board-{rule_set}-{size_name}.png"))
            await resign(bob)
            await expect(bob.locator(".finish-headline")).to_contain_text("Waiting for Ann")
            await resign(ann)
            for page in (ann, bob):
                panel = page.locator(".finish")
                await expect(panel.locator(".finish-headline")).to_contain_text(" of 2")
                await expect(panel.locator("tbody tr")).to_have_count(2)
                await expect(panel.locator(".commitment-check")).to_contain_text("✓")
                await expect(panel.locator("td.rating")).to_have_count(0)  # a chosen deal
                box = await panel.bounding_box()
                assert box and box["y"] < size["height"] / 2, "the finish panel is at the top"
                table = await panel.locator("table.ranking").bounding_box()
                assert table and table["x"] + table["width"] <= size["width"], "ranking cut off"
            await expect(ann.locator(".finish .replay-link")).to_be_visible()
            await ann.click(".finish button.rematch")  # an offer: Bob is asked
            await expect(bob.locator(".finish button.rematch")).to_have_text("Accept")
            await bob.click(".finish button.rematch")
            for page in (ann, bob):
                await expect(page.locator(".room-head .phase")).to_have_text("lobby")
                await page.click(".finish .to-race")  # the results stay until closed
                await expect(page.locator(".finish")).to_have_count(0)
            await race_in_room(ann, bob)
            await expect(bob.locator(".room-head .code")).to_have_text(code)
            assert await moves_made(bob) == 0
        for page in pages:
            await page.context.close()
    assert not errors


# -- accessibility, spectators ------------------------------------------------------------------


async def serious_violations(page: Page) -> list[str]:
    """axe-core's serious and critical findings on the page as it stands."""
    from axe_playwright_python.async_playwright import Axe

    results = await Axe().run(page)
    return [
        f"{violation['id']}: {violation['help']} "
        f"({[node['target'] for node in violation['nodes']][:3]})"
        for violation in results.response["violations"]
        if violation.get("impact") in ("serious", "critical")
    ]


async def test_no_serious_accessibility_violations(
    server: Server, open_page: OpenPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lobby, a board, the finish panel and the leaderboards, checked by axe-core."""
    pytest.importorskip("axe_playwright_python")
    page = await open_page()
    await give_name(page, "Ann")
    await expect(page.locator(".who strong")).to_have_text("Ann")
    found = {"lobby": await serious_violations(page)}
    await open_room(page, "hidden-cards", SHOWN_DEAL)
    await page.click(".start-button")
    await expect(page.locator(".board")).to_have_attribute("data-status", "in_progress")
    found["board"] = await serious_violations(page)
    await resign(page)
    await expect(page.locator(".finish tbody tr")).to_have_count(1)
    found["finish panel"] = await serious_violations(page)
    ann, bob = await server.client("Ann2"), await server.client("Bob2")
    await race_on(server, "all-fours", WON_BY_PLAYING_ON, [ann, bob], [0.0, 0.004], monkeypatch)
    await page.goto(f"{server.http}/#/boards/all-fours")
    await expect(page.locator(".board-table tbody tr").first).to_be_visible()
    found["leaderboard"] = await serious_violations(page)
    await page.goto(f"{server.http}/#/ratings/all-fours")
    await expect(page.locator(".ratings h2")).to_be_visible()
    await page.wait_for_load_state("networkidle")
    found["ratings"] = await serious_violations(page)
    assert not any(found.values()), found


async def test_a_spectator_watches_by_link_without_a_name(
    server: Server, open_page: OpenPage
) -> None:
    """/#/watch/CODE: no name asked; the racers' progress, never a board, and why; the finish
    panel and the replay link at the end."""
    ann, bob = await server.client("Ann"), await server.client("Bob")
    room = await ann.create_room("all-fours", deal="number", number=WON_BY_PLAYING_ON)
    await bob.join(room.code)
    page = await open_page(f"/#/watch/{room.code}")
    await expect(page.locator(".seat")).to_have_count(2)
    assert await page.locator("input[name=name]").count() == 0
    await expect(page.locator(".race.watching")).to_contain_text("second tab")
    await ann.ready()
    await bob.ready()
    await bob.next_event(YourView)
    await bob.resign()
    await play_to_end(ann)
    await expect(page.locator(".finish-headline")).to_contain_text("Ann won")
    await expect(page.locator(".board")).to_have_count(0)
    await expect(page.locator(".finish .replay-link")).to_be_visible()
    await expect(page.locator(".finish button.rematch")).to_have_count(0)
    await expect(page.locator(".room-head .facts")).to_contain_text(f"deal {WON_BY_PLAYING_ON}")
    await page.reload()  # the header keeps the deal number (spectate sends the room alone)
    await expect(page.locator(".room-head .facts")).to_contain_text(f"deal {WON_BY_PLAYING_ON}")


async def test_a_phone_plays_by_taps_and_the_keyboard(browser: Browser, server: Server) -> None:
    """On a touch screen: a tap on the card to move plays its only move; a card picked up is put
    down by Escape, or goes where a tap on a pile says; Space plays the only move. (More of the
    board's touch and keyboard in test_web_board.py.)"""
    context = await browser.new_context(viewport=SIZES["phone"], has_touch=True, is_mobile=True)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    await page.goto(server.http + "/")
    await give_name(page, "Ann")
    await open_room(page, "all-fours", SHOWN_DEAL)
    await page.click(".start-button")
    board = page.locator(".board")
    await expect(board).to_have_attribute("data-status", "in_progress")
    await expect(card_at(page, "5D", "heap:1")).to_have_class(re.compile("to-move"))
    await card_at(page, "5D", "heap:1").tap(position=CARD_CORNER)
    await expect(board).to_have_attribute("data-moves", "1")
    await expect(page.locator('.pile[data-pile="heap:5"] .card.placed')).to_have_count(1)
    [move] = [Move.parse(m) for m in await legal_moves(page) if m != "resign"]
    card = card_at(page, str(move.card), str(move.source))
    await card.click(position=CARD_CORNER)  # picked up (a mouse: not played at once)
    await expect(page.locator(".card.selected")).to_have_count(1)
    await page.keyboard.press("Escape")
    await expect(page.locator(".card.selected")).to_have_count(0)
    await card.click(position=CARD_CORNER)
    await page.locator(f'.pile[data-pile="{move.target}"]').tap()
    await expect(board).to_have_attribute("data-moves", "2")
    await page.locator("body").press("Space")
    await expect(board).to_have_attribute("data-moves", "3")
    await expect(page.locator(".log li").first).to_contain_text("under the")
    await context.close()
    assert not errors


async def test_the_lobby_lists_public_rooms_and_links_the_rules(
    server: Server, open_page: OpenPage
) -> None:
    ann = await open_page()
    await give_name(ann, "Ann")
    await ann.select_option("select[name=rule_set]", "octagon")
    await ann.check("input[name=public]")
    await ann.click(".create button[type=submit]")
    code = await ann.locator(".room-head .code").inner_text()
    await expect(ann.locator(".room-head .facts")).to_contain_text("public")
    bob = await open_page()
    await give_name(bob, "Bob")
    listed = bob.locator(f'.open-rooms tr[data-code="{code}"]')
    await expect(listed).to_contain_text("The Octagon")
    await expect(listed).to_contain_text("Ann")
    await bob.screenshot(path=screenshot("lobby.png"), full_page=True)
    await listed.locator("a", has_text="Join").click()
    await expect(bob.locator(".seat")).to_have_count(2)
    rules = bob.locator("a.rules-link")
    await expect(rules).to_have_attribute("href", "/rules/octagon")
    await bob.goto(server.http + "/rules/octagon")
    await expect(bob.locator("h1").first).to_contain_text("Octagon")
