"""``patience-race bot CODE``: a practice opponent that joins a room and plays legal moves.

It says it is a bot in its hello (``Hello.bot``): its account is marked on every board, never
rated, and a race with it rates nobody. It sees what any racer sees (its own legal moves and
how many cards are home) and picks with one of the engine's simple players
(``engine.players``): ``greedy`` sends a card home whenever it can, ``random`` plays any legal
move. ``--pace`` is the pause between its moves, so a person can
race it; with no pause it plays as fast as acknowledgements come back, which is what the load
generator needs.

It says where it is once it has joined, and (``--verbose``) each move it makes; at the end the
command prints how its game ended and the race's ranking.

If the connection drops (a server restart, a 1012 close because the worker holding its room
died, a worker of its own that died) it reconnects to the server's address and resumes, trying
again with a growing pause for up to ``reconnect_for`` seconds (``--reconnect-for``), and goes
on from the view the resume gives.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from clients.sdk import CONNECTION_ERRORS, RaceClient, RequestRefused
from engine.moves import Move
from engine.players import STRATEGIES
from engine.registry import find_rule_set
from wire.protocol import Message, RaceFinished, RankEntry, YourView

M = TypeVar("M", bound=Message)
RECONNECT_FOR_S = 30.0
"""How long the bot keeps trying to reconnect before it gives up (a dead worker's rooms are
taken over within a few seconds)."""
FIRST_PAUSE_S = 0.25
LONGEST_PAUSE_S = 5.0


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


async def play_race(
    client: RaceClient,
    strategy: str = "greedy",
    pace: float = 0.0,
    seed: int | None = None,
    say: Callable[[str], None] = silent,
    notice: Callable[[str], None] = silent,
    reconnect_for: float = RECONNECT_FOR_S,
) -> BotResult:
    """Get ready, wait for the start, play to the end of the bot's own game (saying each move),
    then wait for the end of the race; ``notice`` hears of a lost connection and its return.

    The race's time limit may end the race while a move is on its way: the server refuses it
    (``not_racing``), and the race's result tells how the bot's game ended."""
    player = STRATEGIES[strategy](random.Random(seed))

    async def come_back_now() -> None:
        await come_back(client, notice, reconnect_for)

    try:
        await client.ready()
    except CONNECTION_ERRORS:
        await come_back_now()  # a seat's readiness outlasts its connection
    view = (await riding(client, YourView, 3600, come_back_now)).view
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
        except CONNECTION_ERRORS:  # the move may or may not have been made: the view says
            await come_back_now()
            view = (await riding(client, YourView, 3600, come_back_now)).view
            legal, home = view.legal_moves, view.on_foundations
            in_progress = view.status == "in_progress"
            continue
        legal, home, moves = ack.legal_moves, ack.on_foundations, moves + 1
        in_progress = ack.status == "in_progress"
        say(f"  {moves}. {ack.move} ({home}/{view.total} home)")
    ranking = (await riding(client, RaceFinished, 24 * 3600, come_back_now)).ranking
    status = next(entry.status for entry in ranking if entry.player_id == client.player_id)
    return BotResult(moves, status, home, view.total, ranking)


async def riding(
    client: RaceClient, kind: type[M], timeout: float, come_back: Callable[[], Awaitable[None]]
) -> M:
    """The next event of that kind, coming back as often as the connection drops."""
    while True:
        try:
            return await client.next_event(kind, timeout=timeout)
        except ConnectionError:
            await come_back()


async def come_back(
    client: RaceClient, say: Callable[[str], None] = silent, reconnect_for: float = RECONNECT_FOR_S
) -> None:
    """Reconnect to the server's address (never to a worker that may be gone) and resume: what
    was missed, then the bot's view, go to the event stream."""
    say("  connection lost: reconnecting…")
    loop = asyncio.get_running_loop()
    give_up, pause = loop.time() + reconnect_for, FIRST_PAUSE_S
    while True:
        try:
            await client.reconnect()
        except CONNECTION_ERRORS:
            if loop.time() > give_up:
                raise
            await asyncio.sleep(pause)
            pause = min(2 * pause, LONGEST_PAUSE_S)
            continue
        say("  reconnected")
        return


def pace_text(pace: float) -> str:
    return f"a move every {pace:g} s" if pace else "as fast as the server answers"


async def run_bot(
    url: str,
    code: str,
    name: str,
    strategy: str,
    pace: float,
    seed: int | None = None,
    say: Callable[[str], None] = silent,
    verbose: bool = False,
    reconnect_for: float = RECONNECT_FOR_S,
) -> BotResult:
    """Join the room, say so, and race (saying when the connection is lost and back);
    ``verbose``: say every move too."""
    async with await RaceClient.connect(url) as client:
        await client.hello(name=name, bot=True)
        room = await client.join(code)
        say(
            f"{name} is in room {room.code} ({find_rule_set(room.rule_set).title}): "
            f"{strategy}, {pace_text(pace)} once the race starts"
        )
        return await play_race(
            client, strategy, pace, seed, say if verbose else silent, say, reconnect_for
        )
