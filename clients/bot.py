"""``patience-race bot CODE``: a practice opponent that joins a room and plays legal moves.

It sees what any racer sees (its own legal moves and how many cards are home) and picks with one
of the engine's simple players (``engine.players``): ``greedy`` sends a card home whenever it
can, ``random`` plays any legal move. ``--pace`` is the pause between its moves, so a person can
race it; with no pause it plays as fast as acknowledgements come back, which is what the load
generator needs.

It says where it is once it has joined, and (``--verbose``) each move it makes; at the end the
command prints how its game ended and the race's ranking.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass

from clients.sdk import RaceClient, RequestRefused
from engine.moves import Move
from engine.players import STRATEGIES
from engine.registry import find_rule_set
from server.protocol import RaceFinished, RankEntry, YourView


def silent(line: str) -> None:
    """Say nothing (a bot run as a library)."""


@dataclass(frozen=True)
class BotResult:
    moves: int
    status: str
    """How the bot's own game ended, as the race's ranking says (won, lost, timed_out, ...)."""
    on_foundations: int
    total: int
    ranking: list[RankEntry]


async def play_race(client: RaceClient, strategy: str = "greedy", pace: float = 0.0,
                    seed: int | None = None, say: Callable[[str], None] = silent) -> BotResult:
    """Get ready, wait for the start, play to the end of the bot's own game (saying each move),
    then wait for the end of the race.

    The race's time limit may end the race while a move is on its way: the server refuses it
    (``not_racing``), and the race's result tells how the bot's game ended."""
    player = STRATEGIES[strategy](random.Random(seed))
    await client.ready()
    view = (await client.next_event(YourView, timeout=3600)).view
    legal, home, moves = view.legal_moves, view.on_foundations, 0
    in_progress = view.status == "in_progress"
    while in_progress and legal:
        choice = player.choose([Move.parse(text) for text in legal], home)
        if pace:
            await asyncio.sleep(pace)
        try:
            ack = await client.move(str(choice))
        except RequestRefused as refused:
            if refused.code != "not_racing":
                raise
            break
        legal, home, moves = ack.legal_moves, ack.on_foundations, moves + 1
        in_progress = ack.status == "in_progress"
        say(f"  {moves}. {ack.move} ({home}/{view.total} home)")
    ranking = (await client.next_event(RaceFinished, timeout=24 * 3600)).ranking
    status = next(entry.status for entry in ranking if entry.player_id == client.player_id)
    return BotResult(moves, status, home, view.total, ranking)


def pace_text(pace: float) -> str:
    return f"a move every {pace:g} s" if pace else "as fast as the server answers"


async def run_bot(url: str, code: str, name: str, strategy: str, pace: float,
                  seed: int | None = None, say: Callable[[str], None] = silent,
                  verbose: bool = False) -> BotResult:
    """Join the room, say so, and race; ``verbose``: say every move too."""
    async with await RaceClient.connect(url) as client:
        await client.hello(name=name)
        room = await client.join(code)
        say(f"{name} is in room {room.code} ({find_rule_set(room.rule_set).title}): "
            f"{strategy}, {pace_text(pace)} once the race starts")
        return await play_race(client, strategy, pace, seed, say if verbose else silent)
