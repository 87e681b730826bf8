"""The page around the board in the browser (clients/web: room.js, seats.js, finish.js): the
race's controls and clocks on screen at every size, the seat strip of eight racers on a phone,
the result overlay, the rematch offer, the invite link, the connection said plainly, and the
lobby form. Debian's Chromium, headless, driven by Playwright, against a real server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, expect
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from clients.sdk import RaceClient
from tests.clients.conftest import RATED_BETWEEN_CLIENTS
from tests.clients.test_web import (  # noqa: F401 (the fixtures)
    CHROMIUM,
    SHOWN_DEAL,
    SIZES,
    WON_BY_PLAYING_ON,
    OpenPage,
    browser,
    give_name,
    open_page,
    open_room,
    play_a_few,
    race_in_room,
    resign,
    screenshot,
    serious_violations,
    settle,
)
from tests.ports import free_port
from tests.server.test_server import Server, make_settings, start_server, stop_server
from wire.protocol import YourView

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no Chromium at {CHROMIUM}"),
    pytest.mark.parametrize("database_kind", ["sqlite"], indirect=True),
]


SizedPage = Callable[..., Awaitable[Page]]


@pytest_asyncio.fixture
async def new_page(browser: Browser) -> AsyncIterator[SizedPage]:  # noqa: F811
    """Open a page of a server at a screen size ("phone": a touch screen), in a browser context
    of its own; the test fails if any page raised a JavaScript error."""
    errors: list[str] = []

    async def open_(server: Server, size_name: str, path: str = "/") -> Page:
        phone = size_name == "phone"
        context = await browser.new_context(
            viewport=SIZES[size_name], has_touch=phone, is_mobile=phone
        )
        page = await context.new_page()
        page.on("pageerror", lambda error: errors.append(f"{size_name} {path}: {error}"))
        await page.goto(server.http + path)
        return page

    yield open_
    assert not errors


async def inside_the_window(page: Page, selector: str) -> None:
    """Every element the selector finds shows whole in the window, the page scrolled to its
    top."""
    await page.evaluate("window.scrollTo(0, 0)")
    size = page.viewport_size
    assert size is not None
    found = page.locator(selector)
    assert await found.count(), selector
    for box in [await found.nth(n).bounding_box() for n in range(await found.count())]:
        assert box is not None, selector
        assert box["x"] >= 0 and box["y"] >= 0, (selector, box)
        assert box["x"] + box["width"] <= size["width"] + 0.5, (selector, box, size)
        assert box["y"] + box["height"] <= size["height"] + 0.5, (selector, box, size)


# -- the race's controls, the result overlay, at each size ---------------------------------------


@pytest.mark.parametrize("size_name", list(SIZES))
async def test_the_controls_stay_on_screen_and_the_finish_overlay_says_what_happened(
    new_page: SizedPage, server: Server, size_name: str
) -> None:
    """Your clock, Resign and the racers show without scrolling at the start and after moves;
    clearing the deal first brings the overlay: "You won the race", your place, time and cards
    home, focus on Rematch; axe-core finds nothing serious in it."""
    ann = await new_page(server, size_name)
    await give_name(ann, "Ann")
    code = await open_room(ann, "all-fours", WON_BY_PLAYING_ON)
    bob = await server.client("Bob")
    await bob.join(code)
    await bob.ready()
    await ann.click(".ready-button")
    await expect(ann.locator(".board")).to_have_attribute("data-status", "in_progress")
    controls = ".race-status .clock, button.resign, .seats .seat"
    await inside_the_window(ann, controls)
    await play_a_few(ann, 20)
    await inside_the_window(ann, controls)
    await bob.next_event(YourView)
    await bob.resign()
    await play_a_few(ann, 40)
    overlay = ann.locator(".finish[role=dialog]")
    await expect(overlay.locator(".finish-headline")).to_have_text("You won the race")
    await expect(overlay.locator(".finish-facts")).to_contain_text("1st of 2")
    await expect(overlay.locator(".finish-facts")).to_contain_text("52/52")
    await expect(overlay.locator(".commitment-check")).to_contain_text("✓")
    await expect(ann.locator(".finish button.rematch")).to_be_focused()
    await inside_the_window(ann, ".finish[role=dialog] .finish-actions > *")
    await settle(ann)
    await ann.screenshot(path=screenshot(f"finish-{size_name}.png"))
    if size_name == "laptop":
        assert await serious_violations(ann) == []
    await ann.click(".finish .close")
    await expect(overlay).to_have_count(0)
    await bob.close()


# -- eight racers on a phone -------------------------------------------------------------------


async def test_eight_racers_fit_a_phones_seat_strip_that_keeps_its_height(
    new_page: SizedPage, server: Server
) -> None:
    """Eight racers (two named Ann, one with a long name) in one strip above the board, in a
    race with a time limit: nothing wider than the phone, no clock cut, the two Anns told
    apart, and the strip as high after the others' moves as before them."""
    page = await new_page(server, "phone")
    await give_name(page, "Ann")
    await page.select_option("select[name=seats]", "8")
    await page.select_option("select[name=time_limit]", "600")  # clocks say the time left
    code = await open_room(page, "all-fours", SHOWN_DEAL)
    names = ["Ann", "Annabelle Featherstonehaugh", "Bob", "Cy", "Dorothea", "Ed", "Flo"]
    others: list[RaceClient] = [await server.client(name) for name in names]
    for other in others:
        await other.join(code)
        await other.ready()
    await expect(page.locator(".seat")).to_have_count(8)
    await page.click(".ready-button")
    await expect(page.locator(".board")).to_have_attribute("data-status", "in_progress")
    strip = page.locator(".seats")
    before = await strip.bounding_box()
    for other in others:
        view = (await other.next_event(YourView)).view
        await other.move(next(move for move in view.legal_moves if move != "resign"))
    for other in others:
        seat = page.locator(f'.seat[data-player-id="{other.player_id}"] .seat-progress')
        await expect(seat).to_contain_text("1 move ")
    after = await strip.bounding_box()
    assert before and after and before["height"] == after["height"], (before, after)
    assert await page.evaluate("document.documentElement.scrollWidth") <= SIZES["phone"]["width"]
    cut = await page.locator(".seat-clock, .race-status .clock").evaluate_all(
        "clocks => clocks.filter(e => e.scrollWidth > e.clientWidth).map(e => e.textContent)"
    )
    assert cut == [], "clocks cut short"
    anns = await page.locator('.seat[data-player="Ann"] .who').all_inner_texts()
    assert len(set(anns)) == 2, anns
    await inside_the_window(page, ".race-status .clock, button.resign")
    await expect(page.locator("summary .keyboard-tip")).to_be_hidden()  # a touch screen: no tips
    await page.screenshot(path=screenshot("seats-8-phone.png"))
    for other in others:
        await other.close()


# -- sounds and the celebration ----------------------------------------------------------------

TONES_COUNTED = """window.tones = 0;
const make = AudioContext.prototype.createOscillator;
AudioContext.prototype.createOscillator = function () { window.tones++; return make.call(this); };
"""
"""Count the tones the page makes (window.tones)."""


async def test_sounds_play_once_turned_on_and_the_celebration_rests_under_reduced_motion(
    new_page: SizedPage, server: Server
) -> None:
    """Sounds are off until the player turns them on, and stay on after a reload; under
    prefers-reduced-motion no paper falls when the deal is cleared."""
    page = await new_page(server, "laptop")
    await page.add_init_script(TONES_COUNTED)
    await page.reload()
    await page.emulate_media(reduced_motion="reduce")
    await give_name(page, "Ann")
    await open_room(page, "all-fours", WON_BY_PLAYING_ON)
    await page.click(".start-button")
    await expect(page.locator(".board")).to_have_attribute("data-status", "in_progress")
    sounds = page.locator("input.sounds")
    await expect(sounds).not_to_be_checked()
    await play_a_few(page, 1)
    assert await page.evaluate("window.tones") == 0
    await sounds.check()
    await page.reload()
    await expect(page.locator("input.sounds")).to_be_checked()
    await play_a_few(page, 60)
    await expect(page.locator(".finish-headline")).to_have_text("You cleared the deal")
    assert await page.evaluate("window.tones") > 50  # a tick a move, three notes at the end
    await expect(page.locator(".finish.celebrate")).to_be_visible()
    await expect(page.locator(".confetti")).to_be_hidden()


# -- the rematch offer -------------------------------------------------------------------------


async def test_a_rematch_is_an_offer_the_other_racer_accepts_or_declines(
    open_page: OpenPage,  # noqa: F811 (the fixture)
) -> None:
    """Ann offers; Bob is asked (Accept / Decline) and nothing happens until he answers. He
    declines: both are told. Ann offers again, Bob accepts: the room is back in its lobby, the
    results still on screen until each closes them."""
    ann = await open_page()
    await give_name(ann, "Ann")
    code = await open_room(ann, "all-fours", SHOWN_DEAL)
    bob = await open_page(f"/#/room/{code}")
    await give_name(bob, "Bob")
    await expect(ann.locator(".seat")).to_have_count(2)
    await race_in_room(ann, bob)
    await resign(bob)
    await resign(ann)
    for page in (ann, bob):
        await expect(page.locator(".finish tbody tr")).to_have_count(2)
    await expect(ann.locator(".finish button.rematch")).to_be_focused()

    await ann.click(".finish button.rematch")
    await expect(ann.locator(".rematch-state")).to_have_text(
        "1 of 2 want a rematch: waiting for Bob."
    )
    await expect(bob.locator(".rematch-state")).to_have_text(
        "Ann offers a rematch: 1 of 2 want a rematch."
    )
    await expect(bob.locator(".room-head .phase")).to_have_text("finished")
    await bob.screenshot(path=screenshot("rematch-offer.png"))
    await bob.click(".finish button.decline")
    for page in (ann, bob):
        await expect(page.locator(".rematch-state")).to_have_text("Bob declined the rematch.")
    await expect(ann.locator(".room-head .phase")).to_have_text("finished")

    await ann.click(".finish button.rematch")
    await expect(bob.locator(".finish button.rematch")).to_have_text("Accept")
    await bob.click(".finish button.rematch")
    for page in (ann, bob):
        await expect(page.locator(".room-head .phase")).to_have_text("lobby")
        await expect(page.locator(".rematch-state")).to_contain_text("The rematch is on")
        await expect(page.locator(".finish tbody tr")).to_have_count(2)  # results kept
        await page.click(".finish .to-race")
        await expect(page.locator(".finish")).to_have_count(0)
    await race_in_room(ann, bob)


# -- the invite link ---------------------------------------------------------------------------


async def test_the_invite_link_is_shared_on_a_phone_and_copied_elsewhere(
    new_page: SizedPage, server: Server
) -> None:
    """Where the browser has the Web Share API the button opens the share sheet with the room's
    link; where it has not, the button copies the link."""
    phone = await new_page(server, "phone")
    await phone.add_init_script("navigator.share = async (data) => { window.shared = data; };")
    await phone.reload()
    await give_name(phone, "Ann")
    code = await open_room(phone, "all-fours", SHOWN_DEAL)
    await expect(phone.locator(".share-button")).to_have_text("Share link")
    await inside_the_window(phone, ".share-button")
    await phone.click(".share-button")
    shared = await phone.wait_for_function("window.shared")
    assert (await shared.json_value())["url"] == f"{server.http}/#/room/{code}"

    laptop = await new_page(server, "laptop")
    await laptop.add_init_script("delete Navigator.prototype.share;")
    await laptop.context.grant_permissions(["clipboard-read", "clipboard-write"])
    await laptop.goto(f"{server.http}/#/watch/{code}")
    await laptop.click(".share-button")
    await expect(laptop.locator(".share-button")).to_have_text("Copied")
    copied = await laptop.evaluate("navigator.clipboard.readText()")
    assert copied == f"{server.http}/#/room/{code}"  # in its lobby: a link to join


# -- the connection ----------------------------------------------------------------------------


@pytest_asyncio.fixture
async def fixed_port_server(
    sessions: async_sessionmaker[AsyncSession], database_url: str
) -> AsyncIterator[list[Server]]:
    """The server on a fixed port, so that the page finds it again once restarted: a list
    holding the one running now (the test swaps it)."""
    settings = make_settings(database_url, **RATED_BETWEEN_CLIENTS).model_copy(
        update={"port": free_port()}
    )
    running = [await start_server(settings)]
    try:
        yield running
    finally:
        await stop_server(running[0])


CLOCK_SEEN = """() => {
  window.clockSeen = [];
  new MutationObserver(() => window.clockSeen.push(
    document.querySelector('.race-status .clock')?.textContent ?? ''))
    .observe(document.querySelector('.control-bar'),
      { childList: true, characterData: true, subtree: true });
}"""
"""Every text your clock shows from now on (window.clockSeen)."""


def race_ms(shown: str) -> int:
    """ "1:02.3" (or "1:02.3 (0:57.7 left)") -> 62300."""
    minutes, seconds = shown.split(" ")[0].split(":")
    return round((int(minutes) * 60 + float(seconds)) * 1000)


async def test_a_server_restart_is_said_plainly_and_the_clock_never_runs_backwards(
    new_page: SizedPage, fixed_port_server: list[Server]
) -> None:
    """The racer reads "Connection lost" with their seat kept, the spectator without a seat
    line, then both "Reconnected", briefly; no stale refusal; the racer's clock, restored with
    the outage charged to nobody, never shows less than it did."""
    server = fixed_port_server[0]
    page = await new_page(server, "laptop")
    await give_name(page, "Ann")
    code = await open_room(page, "all-fours", SHOWN_DEAL)
    await page.click(".start-button")
    await expect(page.locator(".board")).to_have_attribute("data-status", "in_progress")
    watcher = await new_page(server, "laptop", f"/#/watch/{code}")
    await expect(watcher.locator(".seat")).to_have_count(1)
    await play_a_few(page, 2)
    await page.evaluate(CLOCK_SEEN)

    await stop_server(server)
    lost = page.locator(".notice.connection")
    await expect(lost).to_contain_text("Connection lost – reconnecting…")
    await expect(lost).to_contain_text("Your seat is kept for")
    await expect(watcher.locator(".notice.connection")).to_have_text(
        "Connection lost – reconnecting…"
    )
    await page.locator("body").press("1")  # refused: not connected
    fixed_port_server[0] = await start_server(server.settings)
    for shown in (page, watcher):
        await expect(shown.locator(".notice.connection")).to_have_text("Reconnected")
    for shown in (page, watcher):
        await expect(shown.locator(".notice")).to_have_count(0)  # said for a moment
    await expect(page.locator(".refusal")).to_be_hidden()
    await play_a_few(page, 1)
    seen = [race_ms(text) for text in await page.evaluate("window.clockSeen") if text]
    assert len(seen) > 10
    assert seen == sorted(seen), "the clock ran backwards"


# -- the lobby form ----------------------------------------------------------------------------


async def test_tabbing_through_the_lobby_form_changes_nothing_and_errors_are_words(
    open_page: OpenPage,  # noqa: F811 (the fixture)
) -> None:
    page = await open_page()
    await give_name(page, "Ann")
    await expect(page.locator(".who strong")).to_have_text("Ann")
    await page.focus("select[name=rule_set]")
    for _ in range(8):
        await page.keyboard.press("Tab")
        assert (
            await page.evaluate("document.querySelector('input[name=deal]:checked').value")
            == "secret"
        )
    await page.check("input[name=deal][value=number]")
    await page.fill("input[name=number]", "12ab")
    await page.click(".create button[type=submit]")
    await expect(page.locator(".create + .problem")).to_have_text(
        "The deal number must be 1 to 20 digits, for example 42."
    )
    await page.fill("input[name=number]", "")
    await page.fill("input[name=number]", "99")  # typing a number chooses it
    await page.check("input[name=deal][value=secret]")
    await page.locator("input[name=number]").press_sequentially("1")
    assert (
        await page.evaluate("document.querySelector('input[name=deal]:checked').value") == "number"
    )
    assert await serious_violations(page) == []
