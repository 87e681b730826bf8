"""``patience-race bot CODE``: a practice opponent that joins a room and plays legal moves.

It sees what any racer sees (its own legal moves and how many cards are home) and picks with one
of the engine's simple players (``engine.players``): ``greedy`` sends a card home whenever it
can, ``random`` plays any legal move. ``--pace`` is the pause between its moves, so a person can
race it; with no pause it plays as fast as acknowledgements come back, which is what the load
generator needs.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from clients.sdk import RaceClient
from engine.moves import Move
from engine.players import STRATEGIES
from server.protocol import RaceFinished, RankEntry, YourView


@dataclass(frozen=True)
class BotResult:
    moves: int
    status: str
    ranking: list[RankEntry] | None
    """The race's final ranking, when the bot waited for the end."""


async def play_race(client: RaceClient, strategy: str = "greedy", pace: float = 0.0,
                    seed: int | None = None, wait_for_end: bool = True) -> BotResult:
    """Get ready, wait for the start, play to the end of the bot's own game."""
    player = STRATEGIES[strategy](random.Random(seed))
    await client.ready()
    view = (await client.next_event(YourView, timeout=3600)).view
    legal, home, status, moves = view.legal_moves, view.on_foundations, view.status, 0
    while status == "in_progress" and legal:
        choice = player.choose([Move.parse(text) for text in legal], home)
        if pace:
            await asyncio.sleep(pace)
        ack = await client.move(str(choice))
        legal, home, status, moves = ack.legal_moves, ack.on_foundations, ack.status, moves + 1
    ranking = None
    if wait_for_end:
        ranking = (await client.next_event(RaceFinished, timeout=24 * 3600)).ranking
    return BotResult(moves, status, ranking)


async def run_bot(url: str, code: str, name: str, strategy: str, pace: float,
                  seed: int | None = None) -> BotResult:
    async with await RaceClient.connect(url) as client:
        await client.hello(name=name)
        await client.join(code)
        return await play_race(client, strategy, pace, seed)
