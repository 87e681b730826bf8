"""Quick race in the browser (clients/web: quick_race.js, quick_state.js): a button per game in
the lobby with how many wait for it, the search and Cancel, three browsers pressing it on one
game and racing in one room, and the practice bot marked as a bot. Debian's Chromium, headless,
driven by Playwright, against a real server."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Browser, Locator, Page, WebSocketRoute, expect

from clients.sdk import RaceClient
from tests.clients.conftest import rated_racer
from tests.clients.test_web import (  # noqa: F401 (the fixtures)
    CHROMIUM,
    SIZES,
    VIEWPORT,
    WON_BY_PLAYING_ON,
    OpenPage,
    browser,
    give_name,
    open_page,
    open_room,
    play_a_few,
    resign,
    screenshot,
    serious_violations,
)
from tests.clients.test_web_room import SizedPage, inside_the_window, new_page  # noqa: F401
from tests.server.cluster.test_bus import two_workers
from tests.server.test_server import Server, Sessions
from wire.protocol import YourView

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no Chromium at {CHROMIUM}"),
    pytest.mark.parametrize("database_kind", ["sqlite"], indirect=True),
]

BOT_NAME = "<b>Robo</b>"
MATCHED_MS = 20_000
"""How long a test waits for a room: the queue gathers for 10 seconds before a group of fewer
than 8 races (docs/protocol.md, "Quick race")."""


def quick_button(page: Page, rule_set: str) -> Locator:
    return page.locator(f'.quick-games li[data-rule-set="{rule_set}"] button.quick-race')


def waiting_for(page: Page, rule_set: str) -> Locator:
    return page.locator(f'.quick-games li[data-rule-set="{rule_set}"] .waiting')


async def waiting_on_the_server(server: Server, rule_set: str, kind: str = "rated") -> int:
    status, counts = await server.http_get("/api/quick")
    assert status == 200, counts
    count: int = counts["waiting"][rule_set][kind]
    return count


async def test_three_browsers_and_a_terminal_racer_press_quick_race_and_race_rated(
    browser: Browser,  # noqa: F811 (the fixture)
    server: Server,
) -> None:
    """The issue's own: three browsers and a terminal racer (the SDK it is made of), each from
    an address of its own as on machines apart (``RATED_BETWEEN_CLIENTS``), press Quick race on
    one game. Each page says the count of its queue; all four are in one room, which starts by
    itself (nobody is asked to get ready); after a move each the results rate all four."""
    errors: list[str] = []
    pages = []
    for number, name in enumerate(("Ann", "Bob", "Cy"), start=1):
        context = await browser.new_context(
            viewport=VIEWPORT, extra_http_headers={"X-Forwarded-For": f"10.9.1.{number}"}
        )
        page = await context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.goto(server.http + "/")
        await give_name(page, name)
        await quick_button(page, "octagon").click()
        await expect(page.locator(".quick .seeking-words")).to_contain_text("Looking for racers")
        pages.append(page)
    await expect(pages[0].locator(".quick .seeking-words")).to_have_text(
        re.compile(r"Looking for racers: 3 waiting, window ±\d+")
    )
    dee = await rated_racer(server, "Dee")
    await dee.quick_race("octagon")
    matched, room = await dee.matched(timeout=MATCHED_MS / 1000)
    assert (matched.racers, room.quick) == (4, "rated")
    for page in pages:
        await expect(page.locator(".room-head .code")).to_have_text(room.code, timeout=MATCHED_MS)
        await expect(page.locator(".seat")).to_have_count(4)
        await expect(page.locator(".ready-button")).to_have_count(0)
        await expect(page.locator(".room-head .facts")).to_contain_text("quick race, rated")
    await pages[0].screenshot(path=screenshot("quick-room.png"))
    view = (await dee.next_event(YourView, timeout=MATCHED_MS / 1000)).view
    await dee.move(next(move for move in view.legal_moves if move != "resign"))
    await dee.resign()
    for page in pages:
        await expect(page.locator(".board")).to_have_attribute("data-status", "in_progress")
        await play_a_few(page, 1)  # a racer who made no move is not rated
        await resign(page)
    for page in pages:
        await expect(page.locator(".finish td.rating")).to_have_count(4)
    await dee.close()
    for page in pages:
        await page.context.close()
    assert not errors


async def test_browsers_on_two_workers_press_quick_race_and_race_in_one_room(
    browser: Browser,  # noqa: F811 (the fixture)
    sessions: Sessions,
    database_url: str,
    redis_url: str,
) -> None:
    """With Redis the queue is one for every worker: Ann's page is served by the first worker,
    Bob's and Cy's by the second, and all three race in one room (a page moves to the room's
    worker, as after a join)."""
    errors: list[str] = []
    async with two_workers(database_url, redis_url) as (first, second):
        pages = []
        for name, worker in (("Ann", first), ("Bob", second), ("Cy", second)):
            context = await browser.new_context(viewport=VIEWPORT)
            page = await context.new_page()
            page.on("pageerror", lambda error: errors.append(str(error)))
            await page.goto(worker.http + "/")
            await give_name(page, name)
            await quick_button(page, "octagon").click()
            pages.append(page)
        await expect(pages[1].locator(".quick .seeking-words")).to_contain_text("3 waiting")
        codes = []
        for page in pages:
            code = page.locator(".room-head .code")
            await expect(code).to_be_visible(timeout=MATCHED_MS)
            codes.append(await code.inner_text())
        assert len(set(codes)) == 1, codes
        for page in pages:
            await expect(page.locator(".board")).to_have_attribute(
                "data-status", "in_progress", timeout=MATCHED_MS
            )
            await expect(page.locator(".seat")).to_have_count(3)
        for page in pages:
            await page.context.close()
    assert not errors


async def test_the_button_counts_who_waits_and_cancel_leaves_the_queue(
    server: Server,
    open_page: OpenPage,  # noqa: F811 (the fixture)
) -> None:
    bob = await server.client("Bob")
    await bob.quick_race("all-fours")
    page = await open_page()
    await give_name(page, "Ann")
    await expect(waiting_for(page, "all-fours")).to_have_text("1 waiting")
    await expect(waiting_for(page, "octagon")).to_have_text("nobody waiting")
    await page.uncheck(".quick input[name=rated]")  # the unrated queue's counts
    await expect(waiting_for(page, "all-fours")).to_have_text("nobody waiting")
    await page.check(".quick input[name=rated]")
    await quick_button(page, "octagon").click()
    await expect(page.locator(".quick .seeking-words")).to_have_text(
        "Looking for racers: 1 waiting, window ±100"
    )
    await expect(page.locator(".quick .cancel")).to_be_focused()
    assert await waiting_on_the_server(server, "octagon") == 1
    await page.click(".quick .cancel")
    await expect(quick_button(page, "octagon")).to_be_focused()
    assert await waiting_on_the_server(server, "octagon") == 0
    assert await waiting_on_the_server(server, "all-fours") == 1
    await bob.leave_queue()
    await bob.close()


async def test_a_search_asks_again_after_a_dropped_connection(
    server: Server,
    open_page: OpenPage,  # noqa: F811 (the fixture)
) -> None:
    """A closed connection leaves the queue (on the server); the page says so, and once
    reconnected asks again."""
    page = await open_page()
    sockets: list[tuple[WebSocketRoute, WebSocketRoute]] = []

    async def through(route: WebSocketRoute) -> None:  # pass every frame on, and keep hold
        sockets.append((route, route.connect_to_server()))

    await page.route_web_socket(re.compile(r"/ws$"), through)
    await give_name(page, "Ann")
    await quick_button(page, "octagon").click()
    words = page.locator(".quick .seeking-words")
    await expect(words).to_have_text("Looking for racers: 1 waiting, window ±100")
    in_page, to_server = sockets[-1]
    await to_server.close()
    await in_page.close()
    await expect(words).to_contain_text("Connection lost")
    await expect(words).to_have_text("Looking for racers: 1 waiting, window ±100")
    assert len(sockets) == 2
    assert await waiting_on_the_server(server, "octagon") == 1


async def test_the_practice_bot_races_after_the_wait_chosen_and_is_marked_a_bot(
    open_page: OpenPage,  # noqa: F811 (the fixture)
) -> None:
    """Nobody else waits: after the seconds chosen the player races the practice bot, unrated,
    whose seat says "bot"; the room starts by itself and the bot plays."""
    page = await open_page()
    await give_name(page, "Ann")
    await page.fill(".quick input[name=bot_after_s]", "5")
    await expect(page.locator(".quick input[name=bot]")).to_be_checked()
    await quick_button(page, "all-fours").click()
    await expect(page.locator(".quick .seeking")).to_contain_text(
        "The practice bot races you after 5 s"
    )
    await expect(page.locator(".seat")).to_have_count(2, timeout=MATCHED_MS)
    bot = page.locator(".seat", has=page.locator(".bot-tag"))
    await expect(bot).to_have_count(1)
    await expect(bot.locator(".bot-tag")).to_have_text("bot")
    await expect(page.locator('.seat[data-player="Ann"] .bot-tag')).to_have_count(0)
    await expect(page.locator(".room-head .facts")).to_contain_text("quick race, unrated")
    await expect(page.locator(".board")).to_have_attribute(
        "data-status", "in_progress", timeout=MATCHED_MS
    )
    await expect(bot.locator(".seat-progress")).to_contain_text(re.compile(r"[1-9]\d* moves? "))
    await page.screenshot(path=screenshot("quick-practice-bot.png"))


@pytest.mark.parametrize("size_name", list(SIZES))
async def test_the_quick_race_buttons_and_the_search_show_without_scrolling(
    new_page: SizedPage,  # noqa: F811 (the fixture)
    server: Server,
    size_name: str,
) -> None:
    """Every game's button and its count are in the window as the lobby opens, at each size;
    pressed, the search (its count, its window) and Cancel are. Both photographed; axe-core
    finds nothing serious in the search."""
    page = await new_page(server, size_name)
    await give_name(page, "Ann")
    await inside_the_window(page, ".quick-games button.quick-race, .quick-games .waiting")
    await expect(waiting_for(page, "octagon")).to_have_text("nobody waiting")
    others = [await server.client(name) for name in ("Bob", "Cy")]
    for other, rule_set in zip(others, ("all-fours", "four-corners"), strict=True):
        await other.quick_race(rule_set)
        await expect(waiting_for(page, rule_set)).to_have_text("1 waiting")
    await page.screenshot(path=screenshot(f"lobby-quick-{size_name}.png"))
    await quick_button(page, "octagon").click()
    await expect(page.locator(".quick .seeking-words")).to_contain_text("1 waiting")
    await inside_the_window(page, ".quick .seeking-words, .quick .cancel")
    await page.screenshot(path=screenshot(f"lobby-quick-waiting-{size_name}.png"))
    if size_name == "laptop":
        assert await serious_violations(page) == []
    await page.click(".quick .cancel")
    for other in others:
        await other.leave_queue()
        await other.close()


async def test_a_bot_is_marked_on_the_seats_the_results_and_the_leaderboard(
    server: Server,
    open_page: OpenPage,  # noqa: F811 (the fixture)
) -> None:
    """A program that says it is one (``hello`` with ``bot``) races in a room opened by code:
    "bot" beside its name, never beside a person's, its name still plain text."""
    page = await open_page()
    await give_name(page, "Ann")
    code = await open_room(page, "all-fours", WON_BY_PLAYING_ON)
    robot = await RaceClient.connect(server.url)
    await robot.hello(name=BOT_NAME, bot=True)
    await robot.join(code)
    seat = page.locator(".seat", has_text=BOT_NAME)
    await expect(seat.locator(".bot-tag")).to_have_text("bot")
    await expect(page.locator('.seat[data-player="Ann"] .bot-tag')).to_have_count(0)
    await robot.ready()
    await page.click(".ready-button")
    await robot.next_event(YourView)
    await robot.resign()
    await resign(page)
    results = page.locator(".finish tbody tr")
    await expect(results).to_have_count(2)
    await expect(results.filter(has_text=BOT_NAME).locator(".bot-tag")).to_have_text("bot")
    await expect(results.filter(has_text="Ann").locator(".bot-tag")).to_have_count(0)
    await page.goto(f"{server.http}/#/boards/all-fours?board=deal&deal={WON_BY_PLAYING_ON}")
    lines = page.locator(".board-table tbody tr")
    await expect(lines).to_have_count(2)
    await expect(lines.filter(has_text=BOT_NAME).locator(".bot-tag")).to_have_text("bot")
    assert await page.locator("b").count() == 0, "the name is text, not markup"
    await robot.close()
