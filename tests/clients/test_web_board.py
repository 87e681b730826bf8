"""The board in the browser (clients/web/board.js): its size on three screens, touch and the
keyboard. Debian's Chromium, headless, against a real server (as tests/clients/test_web.py).

On a 390x844 phone, a 1366x768 laptop and a 1920x1080 desktop, for every rule set: every pile and
every race control lies inside the window at the start and after each of 60 moves (while the game
lasts), and the board's scale and the place of every pile stay as they were laid out for the
deal. Touch: a tap outside the
table puts a lifted card down, a double tap on a lifted card does not lift it again, a tap on the
card to move plays its only move, and fanned cards show at least 24 pixels. The keyboard alone
plays an All Fours deal to the end.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Browser, Page, ViewportSize, expect

from engine.moves import Move
from engine.registry import RULE_SET_NAMES, find_rule_set
from tests.clients import test_web
from tests.clients.test_web import (
    CARD_CORNER,
    SHOWN_DEAL,
    SIZES,
    WON_BY_PLAYING_ON,
    OpenPage,
    card_at,
    give_name,
    legal_moves,
    moves_made,
    open_room,
)
from tests.server.test_server import Server

browser, open_page = test_web.browser, test_web.open_page
"""The browser tests' fixtures, used here too."""
pytestmark = test_web.pytestmark
"""And their marks: skipped, with the reason, where Chromium is not installed."""

MOVES = 60


async def practise_alone(page: Page, rule_set: str, deal: int) -> None:
    """A room on a chosen deal, started by its host alone."""
    await page.goto(page.url.split("#")[0] + "#/")
    await open_room(page, rule_set, deal)
    await page.click(".start-button")
    await expect(page.locator(".board")).to_have_attribute("data-status", "in_progress")


async def play_first_moves(
    page: Page, count: int, after_each: Callable[[], Awaitable[None]]
) -> None:
    """Up to ``count`` moves, each the first the page lists (a transfer by its key, 1, or else
    the board's action by its button), while the game lasts; ``after_each`` after each."""
    for _ in range(count):
        if await page.locator(".board").get_attribute("data-status") != "in_progress":
            return
        before = await moves_made(page)
        moves = [move for move in await legal_moves(page) if move != "resign"]
        if not moves:
            return
        if " -> " in moves[0]:
            await page.locator("body").press("1")
        else:
            await page.click(f'.board-actions button[data-move="{moves[0]}"]')
        await expect(page.locator(".board")).to_have_attribute("data-moves", str(before + 1))
        await after_each()


async def boxes(page: Page, selector: str) -> list[list[Any]]:
    """Each element's name and place in the window: [name, left, top, right, bottom]."""
    found: list[list[Any]] = await page.locator(selector).evaluate_all(
        "elements => elements.map(e => { const r = e.getBoundingClientRect();"
        " return [e.dataset.pile || e.dataset.slot || e.dataset.move || e.textContent.trim(),"
        " r.left, r.top, r.right, r.bottom]; })"
    )
    return found


def outside(found: list[list[Any]], size: ViewportSize) -> list[list[Any]]:
    return [
        box
        for box in found
        if box[1] < -0.5
        or box[2] < -0.5
        or box[3] > size["width"] + 0.5
        or box[4] > size["height"] + 0.5
    ]


def meet(one: list[Any], other: list[Any]) -> bool:
    """Whether two boxes ([name, left, top, right, bottom]) overlap."""
    return bool(one[1] < other[3] and other[1] < one[3] and one[2] < other[4] and other[2] < one[4])


async def assert_all_in_view(page: Page, size: ViewportSize, when: str) -> None:
    """While the game lasts (once it is over, the result has the screen), every pile and every
    race control (Resign, the board's actions) inside the window, the page at its top, and no
    control over a pile."""
    await page.evaluate("window.scrollTo(0, 0)")
    if await page.locator(".board").get_attribute("data-status") == "in_progress":
        piles = await boxes(page, ".board .pile")
        assert not outside(piles, size), f"{when}: piles outside the window"
        controls = await boxes(page, ".race-controls button")
        assert any(box[0] == "Resign" for box in controls)
        assert not outside(controls, size), f"{when}: race controls outside the window"
        covered = [
            (pile[0], control[0]) for pile in piles for control in controls if meet(pile, control)
        ]
        assert not covered, f"{when}: race controls over piles"


async def test_every_board_fits_three_screens_at_a_scale_fixed_for_the_deal(
    browser: Browser,
    server: Server,
) -> None:
    errors: list[str] = []
    for size_name, size in SIZES.items():
        phone = size_name == "phone"
        context = await browser.new_context(viewport=size, has_touch=phone, is_mobile=phone)
        page = await context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.goto(server.http + "/")
        await give_name(page, "Ann")
        for rule_set in RULE_SET_NAMES:
            when = f"{rule_set} at {size_name}"
            await practise_alone(page, rule_set, SHOWN_DEAL)
            await expect(page.locator(".board .pile")).to_have_count(
                len(find_rule_set(rule_set).layout)
            )
            await assert_all_in_view(page, size, f"{when}, at the start")
            scale = await page.locator(".board-fit").get_attribute("data-scale")
            places = await boxes(page, ".board .slot")
            made = 0

            async def check(
                page: Page = page,
                size: ViewportSize = size,
                when: str = when,
                scale: str | None = scale,
                places: list[list[Any]] = places,
            ) -> None:
                nonlocal made
                made += 1
                await assert_all_in_view(page, size, f"{when}, after {made} moves")
                if await page.locator(".board").get_attribute("data-status") == "in_progress":
                    fit = page.locator(".board-fit")
                    assert await fit.get_attribute("data-scale") == scale, when
                    assert await boxes(page, ".board .slot") == places, f"{when}: a pile moved"

            await play_first_moves(page, MOVES, check)
        await context.close()
    assert not errors


COUNT_RESIZE_LISTENERS = """
window.resizeListeners = 0;
const add = window.addEventListener, remove = window.removeEventListener;
window.addEventListener = function (type, ...rest) {
  if (type === "resize") window.resizeListeners += 1;
  return add.call(this, type, ...rest);
};
window.removeEventListener = function (type, ...rest) {
  if (type === "resize") window.resizeListeners -= 1;
  return remove.call(this, type, ...rest);
};
"""


async def test_a_resize_lays_the_deal_out_again_and_a_board_leaves_no_listener_behind(
    open_page: OpenPage,
) -> None:
    page = await open_page()
    await page.add_init_script(COUNT_RESIZE_LISTENERS)
    await page.reload()
    await give_name(page, "Ann")
    for rule_set in ("octagon", "all-fours", "octagon"):
        await practise_alone(page, rule_set, SHOWN_DEAL)
    assert await page.evaluate("window.resizeListeners") == 1, "the board on the page only"
    fit = page.locator(".board-fit")
    scale = await fit.get_attribute("data-scale") or ""
    await page.set_viewport_size({"width": 900, "height": 700})
    await expect(fit).not_to_have_attribute("data-scale", scale)
    assert float(await fit.get_attribute("data-scale") or "") < float(scale)
    await page.check("text=show whole piles")  # every pile fanned: laid out again, in view
    await expect(page.locator(".slot.spread-none")).to_have_count(1)  # the stock alone
    await assert_all_in_view(page, {"width": 900, "height": 700}, "the whole piles shown")


async def phone_page(browser: Browser, server: Server) -> Page:
    context = await browser.new_context(viewport=SIZES["phone"], has_touch=True, is_mobile=True)
    page = await context.new_page()
    await page.goto(server.http + "/")
    await give_name(page, "Ann")
    return page


async def tap_card(page: Page, card: str, pile: str) -> None:
    await card_at(page, card, pile).tap(position=CARD_CORNER)


async def test_a_tap_outside_the_table_puts_a_lifted_card_down(
    browser: Browser,
    server: Server,
) -> None:
    """Puss in the Corner, deal 7: the turned 7♠ may go to any of four corners (none home)."""
    page = await phone_page(browser, server)
    await practise_alone(page, "puss-in-the-corner", SHOWN_DEAL)
    selected = page.locator(".card.selected")
    await tap_card(page, "7S", "turned")
    await expect(selected).to_have_count(1)
    await expect(page.locator(".pile.target")).to_have_count(4)
    await page.locator(".room-head h2").tap()
    await expect(selected).to_have_count(0)
    await expect(page.locator(".pile.target")).to_have_count(0)

    await tap_card(page, "7S", "turned")
    await expect(selected).to_have_count(1)
    await page.wait_for_timeout(500)  # the lifting tap is not the first of a double tap
    box = await card_at(page, "7S", "turned").bounding_box()
    assert box is not None
    for _ in range(2):  # a double tap on the lifted card: it is put down, and stays down
        await page.touchscreen.tap(box["x"] + CARD_CORNER["x"], box["y"] + CARD_CORNER["y"])
    await page.wait_for_timeout(500)
    await expect(selected).to_have_count(0)
    assert await moves_made(page) == 0
    await page.context.close()


async def test_fanned_cards_on_a_phone_show_24_pixels(
    browser: Browser,
    server: Server,
) -> None:
    """Hidden Cards, deal 7: the 2 heap is four cards face up, fanned downwards."""
    page = await phone_page(browser, server)
    await practise_alone(page, "hidden-cards", SHOWN_DEAL)
    cards = page.locator('.pile[data-pile="heap:2"] .card.face')
    tops = [box["y"] for box in [await card.bounding_box() for card in await cards.all()] if box]
    assert len(tops) == 4
    assert all(later - earlier >= 24 for earlier, later in zip(tops, tops[1:], strict=False))
    await page.context.close()


async def test_a_tap_on_the_card_to_move_plays_its_only_move(
    browser: Browser,
    server: Server,
) -> None:
    page = await phone_page(browser, server)
    await practise_alone(page, "all-fours", SHOWN_DEAL)
    await expect(card_at(page, "5D", "heap:1")).to_have_class(re.compile("to-move"))
    await tap_card(page, "5D", "heap:1")
    await expect(page.locator(".board")).to_have_attribute("data-moves", "1")
    await expect(page.locator('.pile[data-pile="heap:5"] .card.placed')).to_have_count(1)
    await expect(page.locator(".keyboard-tip").first).to_be_hidden()  # no keyboard here
    await page.context.close()


async def keyboard_to(page: Page, rule_set: str, pile: str) -> None:
    """Arrows from the focused pile to ``pile``, by where the layout puts them: rows first."""
    where = {str(slot.pile): (slot.row, slot.col) for slot in find_rule_set(rule_set).layout}
    for _ in range(30):
        at = await page.evaluate("document.activeElement.dataset.pile")
        if at == pile:
            return
        (row, col), (to_row, to_col) = where[at], where[pile]
        if to_row != row:
            await page.keyboard.press("ArrowDown" if to_row > row else "ArrowUp")
        else:
            await page.keyboard.press("ArrowRight" if to_col > col else "ArrowLeft")
    raise AssertionError(f"the arrows did not reach {pile}")


async def test_the_keyboard_alone_plays_an_all_fours_deal_to_the_end(
    open_page: OpenPage,
) -> None:
    """Tab to the board (one stop), arrows to the card to move, Enter lifts it, arrows to its
    heap, Enter puts it there; each pile says what it holds."""
    page = await open_page()
    await give_name(page, "Ann")
    await practise_alone(page, "all-fours", WON_BY_PLAYING_ON)
    for _ in range(40):
        await page.keyboard.press("Tab")
        if await page.evaluate("document.activeElement.classList.contains('pile')"):
            break
    board = page.locator(".board")
    focused = page.locator(".pile:focus")
    await expect(focused).to_have_attribute(
        "aria-label", re.compile(r"^the \w+ heap: \d cards?, the .+ on top$")
    )
    while await board.get_attribute("data-status") == "in_progress":
        before = await moves_made(page)
        [move] = [Move.parse(text) for text in await legal_moves(page) if text != "resign"]
        await keyboard_to(page, "all-fours", str(move.source))
        await page.keyboard.press("Enter")
        await expect(page.locator(".card.selected")).to_have_count(1)
        await expect(focused).to_have_attribute("aria-label", re.compile("; lifted: the "))
        await keyboard_to(page, "all-fours", str(move.target))
        await expect(focused).to_have_attribute(
            "aria-label", re.compile("; the lifted cards may go here$")
        )
        await page.keyboard.press("Enter")
        await expect(board).to_have_attribute("data-moves", str(before + 1))
    await expect(board).to_have_attribute("data-status", "won")
