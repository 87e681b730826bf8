"""``patience-race race --quick RULESET``: the terminal racer waits in the queue, saying the
count and the window, and once matched races from the room as after a join."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from clients.cli import build_parser
from clients.terminal.app import RacerApp
from clients.terminal.race import RaceScreen
from clients.terminal.screens import StartScreen
from clients.terminal.session import IdentityFile, RaceSession
from server.core.matching import GATHER_S
from tests.clients.test_terminal import SIZE, on_screen, shown, until
from tests.fakeclock import FakeClock
from tests.server.test_server import Server, make_settings, start_server, stop_server


@pytest_asyncio.fixture
async def clock() -> FakeClock:
    return FakeClock()


@pytest_asyncio.fixture
async def server(
    sessions: async_sessionmaker[AsyncSession], database_url: str, clock: FakeClock
) -> AsyncIterator[Server]:
    """A fake clock to pass the queue's gathering by hand, and no countdown."""
    running = await start_server(make_settings(database_url, quick_countdown_s=0), clock)
    try:
        yield running
    finally:
        await stop_server(running)


def test_race_takes_a_rule_set_to_wait_for_with_quick() -> None:
    args = build_parser().parse_args(["race", "--quick", "octagon"])
    assert (args.quick, args.code) == ("octagon", None)


async def test_the_racer_waits_in_the_queue_then_races_whoever_it_is_matched_with(
    server: Server, clock: FakeClock, tmp_path: Path
) -> None:
    session = RaceSession(server.url, IdentityFile(tmp_path / "token.json"), "Bob")
    app = RacerApp(session, quick="octagon")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, StartScreen)
        await until(pilot, lambda: "looking for racers: 1 waiting" in shown(pilot, "#status"))
        assert "ratings within ±100" in shown(pilot, "#status")
        ann = await server.client("Ann")
        await ann.quick_race("octagon")
        clock.advance(GATHER_S)
        await on_screen(pilot, RaceScreen)
        await until(pilot, lambda: shown(pilot, "#moves") != "")
        matched, _ = await ann.matched(timeout=10)
        assert session.state.code == matched.code
        assert sorted(seat.name for seat in session.state.seats.values()) == ["Ann", "Bob"]
        await ann.close()
