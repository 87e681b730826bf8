"""The solver in the browser (issue 12): the Hint button when practising alone, and the
replay's track of the solver's winning line beside the racers' games. On SQLite, as the rest of
the browser tests (tests/clients/test_web.py, whose fixtures these use)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from playwright.async_api import expect

from engine.deal import DEAL_ALGORITHM
from engine.game import RULES_VERSION
from engine.hints import solve_deal
from server.storage.deals import save_verdict
from server.storage.engine import Sessions
from tests.clients import test_web
from tests.clients.test_web import OpenPage, click_move, give_name, open_room, screenshot
from tests.server.test_server import Server
from wire.protocol import RaceFinished, YourView

browser, open_page = test_web.browser, test_web.open_page
"""The browser tests' fixtures, used here too."""
pytestmark = test_web.pytestmark
"""And their marks: skipped, with the reason, where Chromium is not installed."""

WINNABLE, LOST = 3, 1
"""All Fours deals the solver wins in 51 moves, and proves lost (tests/engine/solver_cases.json,
tests/server/rooms/test_solver.py)."""


async def test_the_hint_button_shows_a_move_of_a_winning_line_when_practising_alone(
    open_page: OpenPage,
) -> None:
    page = await open_page()
    await give_name(page, "Ann")
    await open_room(page, "all-fours", WINNABLE)
    await expect(page.locator("button.hint-button")).to_have_count(0)  # not before the start
    await page.click(".start-button")
    await page.click("button.hint-button")
    hint = page.locator("p.hint")
    await expect(hint).to_contain_text("a win is possible in 51 moves")
    await expect(hint).to_contain_text("full knowledge")
    move = await hint.get_attribute("data-hint-move")
    assert move is not None
    await expect(hint).to_contain_text(re.compile(r"Hint: Put the \S+ from the \w+ heap under"))
    await expect(page.locator(".pile.last-move")).not_to_have_count(0)
    await click_move(page, move)
    await expect(hint).to_have_count(0)  # about a position left behind


async def test_practising_alone_the_board_says_after_each_move_whether_a_win_is_possible(
    open_page: OpenPage,
) -> None:
    """The live verdict, under the board's status line: still winnable on a winnable deal,
    after each move; no win possible on a lost one; in words only, no move or card."""
    page = await open_page()
    await give_name(page, "Ann")
    await open_room(page, "all-fours", WINNABLE)
    await page.click(".start-button")
    verdict = page.locator(".live-verdict")
    await expect(verdict).to_have_text("solver: still winnable")
    await expect(verdict).to_have_attribute("data-result", "won")
    await page.click("button.hint-button")  # the solver's line, followed: still winnable
    hinted = page.locator("p.hint[data-hint-move]")
    await expect(hinted).to_have_count(1)
    await click_move(page, await hinted.get_attribute("data-hint-move") or "")
    await expect(page.locator(".race-status .mine")).to_contain_text("1 move ")
    await expect(verdict).to_have_text("solver: still winnable")
    await page.screenshot(path=screenshot("live-verdict.png"))

    lost = await open_page()
    await give_name(lost, "Bob")
    await open_room(lost, "all-fours", LOST)
    await lost.click(".start-button")
    await expect(lost.locator(".live-verdict")).to_have_text(
        "solver: no win is possible from here any more"
    )


async def test_no_hint_button_in_a_race_with_others(server: Server, open_page: OpenPage) -> None:
    page = await open_page()
    await give_name(page, "Ann")
    code = await open_room(page, "all-fours", WINNABLE)
    bob = await server.client("Bob")
    await bob.join(code)
    await page.click(".ready-button")
    await bob.ready()
    await expect(page.locator(".board")).to_have_attribute("data-status", "in_progress")
    await expect(page.locator("button.hint-button")).to_have_count(0)
    await expect(page.locator(".live-verdict")).to_have_count(0)


async def test_the_replay_steps_through_the_solvers_line(
    server: Server, sessions: Sessions, open_page: OpenPage
) -> None:
    ann, bob = await server.client("Ann"), await server.client("Bob")
    room = await ann.create_room("all-fours", deal="number", number=WINNABLE)
    await bob.join(room.code)
    await ann.ready()
    await bob.ready()
    await ann.next_event(YourView)
    await ann.resign()
    await bob.resign()
    finished = await ann.next_event(RaceFinished)
    deal = ("all-fours", WINNABLE, DEAL_ALGORITHM, RULES_VERSION)
    found = solve_deal(*deal, 5.0)  # as the server's search after the race does
    await save_verdict(sessions, *deal, found["result"], found["line"], 5.0, datetime.now(UTC))

    page = await open_page(f"/#/replay/{finished.race_id}")
    await expect(page.locator("p.winnable")).to_contain_text("A win was possible in 51 moves")
    await expect(page.locator("p.winnable")).to_contain_text("full knowledge")
    await page.click("a.solver-tab")
    await expect(page.locator("a.tab.active")).to_have_text("the solver's line")
    await page.click("button.forward")
    await expect(page.locator(".caption")).to_contain_text(found["line"][0])
    await page.click("button.last")
    await expect(page.locator(".board")).to_have_attribute("data-status", "won")


async def test_a_room_asked_to_be_winnable_says_what_it_got(open_page: OpenPage) -> None:
    page = await open_page()
    await give_name(page, "Ann")
    await page.select_option("select[name=rule_set]", "four-corners")  # never pooled
    await page.check("input[name=deal][value=winnable]")
    await page.click(".create button[type=submit]")
    await expect(page.locator(".room-head .facts")).to_contain_text(
        "a secret deal · none proved winnable was ready: an unproved deal"
    )
