"""The practice bot a player waiting in the quick race queue may ask for (``bot_after_s``).

When nobody is matched in time, the queue opens an unrated quick room for the player and the
project's bot (``clients.bot``), which this process runs as a task of its own: a client like any
other, connecting to this process's own WebSocket address, racing greedily at a person's pace.
Every bot of a process plays as one player, a bot account (``Hello.bot``: marked on every
board, never rated), made the first time one is needed. At most ``settings.practice_bots``
race at once, and one for each address (a bot is a process's resource: one address holding
them all would leave none for anyone else); past either, a player waits on in the queue.
"""

from __future__ import annotations

import asyncio
import logging

from clients.bot import play_race
from clients.sdk import RaceClient
from server.rooms.room import write_for_client
from server.settings import Settings
from server.storage.engine import Sessions
from server.storage.players import create_player
from server.storage.writer import Writer

log = logging.getLogger("patience_race.quick")

PRACTICE_NAME = "Practice bot"
PRACTICE_STRATEGY = "greedy"
PRACTICE_PACE_S = 1.0
"""Seconds between the bot's moves: a pace a person can race."""


class PracticeBots:
    """The practice bots this process runs."""

    def __init__(self, settings: Settings, sessions: Sessions, writer: Writer) -> None:
        self.settings, self.sessions, self.writer = settings, sessions, writer
        self.url: str | None = None
        """This process's own WebSocket address, once it serves (``Service.serving_at``)."""
        self._player: tuple[str, str, str] | None = None
        """The bots' player: id, name, token."""
        self._racing: dict[asyncio.Task[None], str] = {}
        """The bots racing, and the address of the player each races."""

    def free(self, address: str) -> bool:
        """Whether another bot may race now, for a player at ``address``."""
        return (
            self.url is not None
            and len(self._racing) < self.settings.practice_bots
            and address not in self._racing.values()
        )

    async def player(self) -> tuple[str, str]:
        """The bots' player id and name (made the first time)."""
        if self._player is None:
            made, token = await write_for_client(
                self.writer,
                lambda: create_player(self.sessions, PRACTICE_NAME, bot=True),
                self.settings.write_wait_s,
            )
            self._player = (made.id, made.name, token)
        return self._player[0], self._player[1]

    def race(self, code: str, address: str) -> None:
        """A bot joins the quick room and races the player at ``address`` in it (``player``
        was asked for first)."""
        task = asyncio.create_task(self._race(code))
        self._racing[task] = address
        task.add_done_callback(self._raced)

    async def _race(self, code: str) -> None:
        assert self.url is not None and self._player is not None
        async with await RaceClient.connect(self.url) as client:
            await client.hello(token=self._player[2], bot=True)
            await client.join(code)
            await play_race(client, PRACTICE_STRATEGY, PRACTICE_PACE_S)

    def _raced(self, task: asyncio.Task[None]) -> None:
        self._racing.pop(task, None)
        if not task.cancelled() and task.exception() is not None:
            log.warning("a practice bot stopped: %r", task.exception())

    async def close(self) -> None:
        for task in list(self._racing):
            task.cancel()
        await asyncio.gather(*self._racing, return_exceptions=True)
