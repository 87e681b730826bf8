"""The fair-play check after each rated race (server/rooms/solver.py ``after_race``): on races
stored as the server stores them, the project's bot and a greedy player are flagged and a
human-like player is not; on a real server, a race won by the project's bot through a plain
``hello`` is flagged, seconds after it ends, and held off the boards and the ratings."""

from __future__ import annotations

import asyncio
import random

import pytest
from sqlalchemy import select

from bench.fairplay_figures import Style, play, styles
from clients.bot import play_race
from engine.registry import find_rule_set
from server.core.fairplay import Signals, check_racer, judge
from server.storage.fairplay import race_checks, race_to_check
from server.storage.models import EntryRow, RatingRow
from server.storage.races import record_moves, record_start
from server.storage.results import record_results
from tests.server.core.test_fairplay import WINNABLE_OCTAGON
from tests.server.core.test_ratings import entry
from tests.server.storage.test_ratings import BEHIND_A_PROXY, NOBODY_NEW, racing_client
from tests.server.storage.test_store import NOW, Sessions, new_players, new_race
from tests.server.test_abuse import server_with
from wire.protocol import RaceFinished, YourView

RULE_SET = "octagon"
CHECK_S = 3.0


async def stored_race(sessions: Sessions, seed: int, style: Style, rng: random.Random) -> str:
    """A race of one racer of that style on the deal, stored as the server stores one: its
    start, every move with its milliseconds, the result."""
    (player,) = await new_players(sessions, style.name)
    race_id = await new_race(sessions, player, seed=seed, rule_set=RULE_SET)
    game = find_rule_set(RULE_SET)(seed)
    moves = list(play(game, style, rng))
    await record_start(sessions, race_id, NOW, [player], rating=NOBODY_NEW)
    await record_moves(
        sessions,
        [
            {"race_id": race_id, "player_id": player, "index": n, "text": str(move), "at_ms": at}
            for n, (move, at) in enumerate(moves)
        ],
    )
    ranked = entry(player, "lost", moves[-1][1], game.foundation_count(), moves[-1][1])
    await record_results(sessions, race_id, NOW, [ranked.model_copy(update={"rank": 1})])
    return race_id


@pytest.mark.parametrize(
    ("style", "flagged"),
    [(0, True), (1, True), (2, True), (3, False)],
    ids=["bot greedy", "bot random", "greedy player", "human-like"],
)
async def test_the_bot_and_the_greedy_player_are_flagged_and_the_human_like_player_is_not(
    sessions: Sessions, style: int, flagged: bool
) -> None:
    chosen = styles(round_trip_ms=40, mistakes=8)[style]
    race_id = await stored_race(sessions, WINNABLE_OCTAGON, chosen, random.Random(5))
    stored = await race_to_check(sessions, race_id)
    ((_, moves),) = stored.moves.items()
    signals = Signals.from_json(
        check_racer(RULE_SET, stored.seed, stored.algorithm, stored.rules, moves, CHECK_S)
    )
    assert judge(signals).flagged is flagged, signals


async def test_a_race_won_by_the_project_bot_is_flagged_and_held_off_the_boards(
    database_url: str, sessions: Sessions
) -> None:
    async with server_with(database_url, **BEHIND_A_PROXY, fair_play_s=CHECK_S) as server:
        tokens: dict[str, str | None] = {}
        bot = await racing_client(server, "Robo", tokens, "10.1.0.1")
        person = await racing_client(server, "Ann", tokens, "10.1.0.2")
        room = await bot.create_room(RULE_SET, seats=2)
        await person.join(room.code)
        await person.ready()
        racing = asyncio.create_task(play_race(bot, "greedy", seed=1))
        view = (await person.next_event(YourView)).view
        await person.move(next(move for move in view.legal_moves if move != "resign"))
        await person.resign()
        await racing
        finished = await person.next_event(RaceFinished, timeout=60)
        assert finished.ranking[0].player_id == bot.player_id  # it won the race
        assert all(line.rating is not None for line in finished.ranking)  # rated as it ended
        race_id = finished.race_id

        async with asyncio.timeout(120):  # the check ends seconds after the race
            while not (checks := await race_checks(sessions, race_id)):
                await asyncio.sleep(0.2)
        status = {check.name: (check.status, check.signals["reasons"]) for check in checks}
        assert status == {"Robo": ("flagged", ["fast_replies"]), "Ann": ("clean", [])}
        async with sessions.begin() as session:
            robo = (
                await session.execute(
                    select(EntryRow.ranked, EntryRow.standing).where(
                        EntryRow.race_id == race_id, EntryRow.player_id == bot.player_id
                    )
                )
            ).one()
            ratings = (await session.execute(select(RatingRow))).all()
        assert tuple(robo) == (False, None) and ratings == []
        _, board = await server.http_get(f"/api/leaderboards/{RULE_SET}?board=fastest")
        assert board["entries"] == []
        for client in (bot, person):
            await client.close()
