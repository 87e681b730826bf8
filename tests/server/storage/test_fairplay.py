"""Fair play in the database, on SQLite and PostgreSQL (conftest.py): checks stored, a flagged
result held off every board and out of the ratings until cleared, and a ban that takes a
player's results off every board and rebuilds the ratings exactly."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from functools import partial
from typing import Any

import pytest
from sqlalchemy import select

from server.cluster.rank_cache import RedisRanks
from server.commands import main
from server.core.fairplay import Signals, Verdict, judge, timing
from server.storage import ranks
from server.storage.fairplay import ban, clear, flagged_checks, race_checks, record_checks
from server.storage.leaderboards import deal_board, fastest_wins, most_wins
from server.storage.models import (
    Base,
    BoardCountRow,
    EntryRow,
    PlayerRow,
    PlayerWinsRow,
    RaceRow,
    RatingChangeRow,
    RatingRow,
)
from server.storage.races import record_start
from server.storage.results import record_results
from tests.server.core.test_ratings import entry
from tests.server.storage.test_ranks import redis_ranks  # noqa: F401 (the fixture)
from tests.server.storage.test_ratings import NOBODY_NEW, RULES, store_race
from tests.server.storage.test_store import NOW, Sessions, new_players, new_race

NAMES = ("ann", "bob", "cy", "dan")
RACES = [
    [entry("ann", "won", 90_000, 52, 90_000), entry("bob", "lost", 0, 20, 60_000),
     entry("dan", "lost", 0, 12, 50_000)],
    [entry("dan", "won", 60_000, 52, 60_000), entry("ann", "lost", 0, 30, 40_000)],
    [entry("bob", "won", 80_000, 52, 80_000), entry("cy", "lost", 0, 10, 10_000)],
    [entry("ann", "won", 70_000, 52, 70_000), entry("cy", "lost", 0, 20, 30_000),
     entry("dan", "lost", 0, 5, 5_000)],
    [entry("cy", "won", 100_000, 52, 100_000), entry("bob", "timed_out", 0, 40, 90_000)],
]  # fmt: skip
"""Dan races in the first, second and fourth races, and wins the second."""
LATER = NOW + timedelta(days=1)
FLAGGED = judge(timing([1000 * (n + 1) for n in range(40)]))
CLEAN = judge(Signals(40, 0.0, 0.6, 1500.0))


async def store(
    sessions: Sessions,
    races: list[list[Any]],
    without: str | None = None,
    skip: str | None = None,
    left_out: int | None = None,
) -> tuple[dict[str, str], list[str]]:
    """Store the races, ``at`` 20 minutes apart as numbered: ``without`` that racer's
    entries, without the races ``skip`` raced in and race number ``left_out``. The players by
    name, and the races' ids (empty for a race left out)."""
    ids = dict(zip(NAMES, await new_players(sessions, *NAMES), strict=True))
    race_ids = []
    for number, ranking in enumerate(races):
        if number == left_out or any(line.player_id == skip for line in ranking):
            race_ids.append("")
            continue
        kept = [line for line in ranking if line.player_id != without]
        race_ids.append((await store_race(sessions, kept, ids, at=20 * number))[0])
    return ids, race_ids


async def wipe(sessions: Sessions) -> None:
    async with sessions.begin() as session:
        for table in reversed(Base.metadata.sorted_tables):
            await session.execute(table.delete())


async def ratings_by_name(sessions: Sessions) -> tuple[list[Any], list[Any]]:
    """Every rating, and every change in the order of its race's end, by player name (the
    ids differ between databases), floats exactly."""
    async with sessions.begin() as session:
        ratings = (
            await session.execute(
                select(
                    RatingRow.rule_set,
                    PlayerRow.name,
                    RatingRow.mu,
                    RatingRow.sigma,
                    RatingRow.ordinal,
                    RatingRow.races,
                    RatingRow.updated_at,
                )
                .join(PlayerRow, PlayerRow.id == RatingRow.player_id)
                .order_by(RatingRow.rule_set, PlayerRow.name)
            )
        ).all()
        changes = (
            await session.execute(
                select(
                    RaceRow.ended_at,
                    PlayerRow.name,
                    RatingChangeRow.mu_before,
                    RatingChangeRow.sigma_before,
                    RatingChangeRow.mu_after,
                    RatingChangeRow.sigma_after,
                )
                .join(RaceRow, RaceRow.id == RatingChangeRow.race_id)
                .join(PlayerRow, PlayerRow.id == RatingChangeRow.player_id)
                .order_by(RaceRow.ended_at, PlayerRow.name)
            )
        ).all()
    return [tuple(row) for row in ratings], [tuple(row) for row in changes]


async def boards_by_name(sessions: Sessions) -> dict[str, Any]:
    """Every board's lines (rank, name, figures) and the counts behind them, by player name."""
    async with sessions.begin() as session:
        counts = (
            await session.execute(
                select(BoardCountRow.board, BoardCountRow.bucket, BoardCountRow.lines)
                .where(BoardCountRow.lines != 0)
                .order_by(BoardCountRow.board, BoardCountRow.bucket)
            )
        ).all()
        wins = (
            await session.execute(
                select(PlayerRow.name, PlayerWinsRow.wins, PlayerWinsRow.last_win_at)
                .join(PlayerRow, PlayerRow.id == PlayerWinsRow.player_id)
                .order_by(PlayerRow.name)
            )
        ).all()
    fastest = await fastest_wins(sessions, RULES, "all", 50, LATER)
    most = await most_wins(sessions, RULES, 50)
    deal = await deal_board(sessions, RULES, 7, 50)
    return {
        "counts": [tuple(row) for row in counts],
        "wins": [tuple(row) for row in wins],
        "fastest": [(line.rank, line.name, line.time_ms) for line in fastest.lines],
        "most_wins": [(line.rank, line.name, line.wins) for line in most.lines],
        "deal": [(line.rank, line.name, line.status, line.time_ms) for line in deal.lines],
    }


def verdicts(race: list[Any], ids: dict[str, str], flagged: str) -> dict[str, Verdict]:
    return {ids[line.player_id]: FLAGGED if line.player_id == flagged else CLEAN for line in race}


async def test_a_flagged_result_is_held_off_every_board_and_the_ratings_until_cleared(
    sessions: Sessions,
) -> None:
    ids, race_ids = await store(sessions, RACES)
    before_boards, before_ratings = await boards_by_name(sessions), await ratings_by_name(sessions)

    held = await record_checks(sessions, race_ids[1], verdicts(RACES[1], ids, "dan"), NOW)

    assert held == [ids["dan"]]
    boards = await boards_by_name(sessions)
    assert "dan" not in str(boards["fastest"] + boards["most_wins"])  # his one win
    deal = [line[1] for line in boards["deal"]]
    assert (deal.count("dan"), deal.count("ann")) == (2, 3)  # his others, and Ann's, stay
    flagged = await flagged_checks(sessions)
    assert [(c.race_id, c.player_id, c.status) for c in flagged] == [
        (race_ids[1], ids["dan"], "flagged")
    ]
    assert flagged[0].signals["reasons"] == ["even_intervals"]
    held_ratings = await ratings_by_name(sessions)
    await wipe(sessions)
    await store(sessions, RACES, left_out=1)
    assert held_ratings[0] == (await ratings_by_name(sessions))[0]  # as if never raced
    await wipe(sessions)

    ids, race_ids = await store(sessions, RACES)
    await record_checks(sessions, race_ids[1], verdicts(RACES[1], ids, "dan"), NOW)
    assert await clear(sessions, race_ids[1], LATER) == [ids["dan"]]
    assert await clear(sessions, race_ids[1], LATER) == []
    assert await boards_by_name(sessions) == before_boards
    assert await ratings_by_name(sessions) == before_ratings
    checks = await race_checks(sessions, race_ids[1])
    assert {(c.player_id, c.status, c.flagged) for c in checks} == {
        (ids["dan"], "cleared", True),
        (ids["ann"], "clean", False),
    }
    assert await flagged_checks(sessions) == []


async def test_a_race_is_checked_once(sessions: Sessions) -> None:
    ids, race_ids = await store(sessions, RACES)
    await record_checks(sessions, race_ids[1], verdicts(RACES[1], ids, "ann"), NOW)
    assert await record_checks(sessions, race_ids[1], verdicts(RACES[1], ids, "dan"), NOW) == []
    assert [c.player_id for c in await flagged_checks(sessions)] == [ids["ann"]]


async def test_a_ban_takes_every_result_off_every_board_and_rebuilds_the_ratings_exactly(
    sessions: Sessions,
) -> None:
    ids, _ = await store(sessions, RACES)
    assert await ban(sessions, ids["dan"], LATER)
    assert not await ban(sessions, "nobody", LATER)
    boards, rated = await boards_by_name(sessions), await ratings_by_name(sessions)
    async with sessions.begin() as session:
        dans = (
            await session.execute(
                select(EntryRow.ranked, EntryRow.standing).where(EntryRow.player_id == ids["dan"])
            )
        ).all()
    assert dans == [(False, None)] * 3
    await wipe(sessions)
    await store(sessions, RACES, without="dan")
    assert boards == await boards_by_name(sessions)  # as if dan had never been in them
    await wipe(sessions)
    await store(sessions, RACES, skip="dan")
    assert rated == await ratings_by_name(sessions)  # as if dan's races had never been


async def test_a_race_with_a_banned_player_ranks_them_nowhere_and_rates_nobody(
    sessions: Sessions,
) -> None:
    """Banned before the race, or while it runs: as ``ratings rebuild`` leaves it out."""
    ids, _ = await store(sessions, RACES[:1])
    await ban(sessions, ids["dan"], NOW)
    rated = await ratings_by_name(sessions)
    _, ratings = await store_race(
        sessions,
        [entry("dan", "won", 50_000, 52, 50_000), entry("ann", "lost", 0, 3, 1),
         entry("bob", "lost", 0, 2, 1)],
        ids,
        at=100,
    )  # fmt: skip
    assert ratings == {}
    boards = await boards_by_name(sessions)
    assert "dan" not in str(boards["fastest"] + boards["most_wins"] + boards["deal"])

    race_id = await new_race(sessions, ids["ann"], rule_set=RULES)
    started = NOW + timedelta(minutes=200)
    await record_start(sessions, race_id, started, [ids["ann"], ids["cy"]], rating=NOBODY_NEW)
    await ban(sessions, ids["cy"], started)
    ranking = [
        entry(ids["ann"], "won", 40_000, 52, 40_000).model_copy(update={"rank": 1}),
        entry(ids["cy"], "lost", 0, 3, 1).model_copy(update={"rank": 2}),
    ]
    recorded = await record_results(sessions, race_id, started + timedelta(minutes=5), ranking)
    assert recorded.ratings == {}
    assert await ratings_by_name(sessions) == rated
    assert "cy" not in str(await boards_by_name(sessions))


async def test_the_operator_lists_shows_clears_and_bans_from_the_command_line(
    sessions: Sessions, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ids, race_ids = await store(sessions, RACES)
    await record_checks(sessions, race_ids[1], verdicts(RACES[1], ids, "dan"), NOW)

    def run(command: str, *ids: str, as_json: bool = False) -> int:
        """An id may begin with "-": it goes after "--", as the help says."""
        options = ["--database-url", database_url, *(["--json"] if as_json else [])]
        return main(["fairplay", command, *options, *(["--", *ids] if ids else [])])

    assert await asyncio.to_thread(run, "list") == 0
    listed = capsys.readouterr().out
    assert f"race {race_ids[1]}" in listed and f"player {ids['dan']} (dan): flagged" in listed
    assert "because of even_intervals" in listed and "interval CV 0.00" in listed
    assert await asyncio.to_thread(partial(run, "show", race_ids[1], as_json=True)) == 0
    shown = json.loads(capsys.readouterr().out)
    assert {(check["name"], check["status"]) for check in shown} == {
        ("dan", "flagged"),
        ("ann", "clean"),
    }
    assert await asyncio.to_thread(run, "show", "nosuchrace") == 1
    assert "no fair-play check" in capsys.readouterr().err

    assert await asyncio.to_thread(run, "clear", race_ids[1]) == 0
    assert ids["dan"] in capsys.readouterr().out
    assert await asyncio.to_thread(run, "clear", race_ids[1]) == 1
    assert await asyncio.to_thread(run, "list") == 0
    assert capsys.readouterr().out == "no result is held for review\n"
    assert "dan" in str((await boards_by_name(sessions))["fastest"])

    assert await asyncio.to_thread(run, "ban", ids["dan"]) == 0
    assert "banned" in capsys.readouterr().out
    assert "dan" not in str(await boards_by_name(sessions))
    assert await asyncio.to_thread(run, "ban", "nobody") == 1


async def test_the_rank_cache_rebuilt_after_a_hold_leaves_the_held_result_out(
    sessions: Sessions,
    redis_ranks: RedisRanks,  # noqa: F811 (the fixture)
) -> None:
    """What the server does once a check holds a result (``SolverPool.on_held``): the ranks
    from Redis are the database's again, without it."""
    ids, race_ids = await store(sessions, RACES)
    await redis_ranks.rebuild(sessions)
    wins = (ranks.fastest_board(RULES),)
    assert await redis_ranks.lines_below(wins, [10**9]) == [5]
    await record_checks(sessions, race_ids[1], verdicts(RACES[1], ids, "dan"), NOW)
    await redis_ranks.rebuild(sessions)
    assert await redis_ranks.lines_below(wins, [10**9]) == [4]
    for player in ids.values():
        cached = await most_wins(sessions, RULES, 2, around=player, cache=redis_ranks)
        assert cached == await most_wins(sessions, RULES, 2, around=player)
        fastest = await fastest_wins(sessions, RULES, "all", 2, LATER, around=player)
        assert fastest == await fastest_wins(
            sessions, RULES, "all", 2, LATER, around=player, cache=redis_ranks
        )


async def test_a_board_left_without_a_line_leaves_the_rank_cache(
    sessions: Sessions,
    redis_ranks: RedisRanks,  # noqa: F811 (the fixture)
) -> None:
    """Else a later line would be ranked below the held one, still in the set."""
    ids, race_ids = await store(sessions, RACES[1:2])
    await redis_ranks.rebuild(sessions)
    wins = (ranks.fastest_board(RULES),)
    assert await redis_ranks.lines_below(wins, [10**9]) == [1]
    await record_checks(sessions, race_ids[0], verdicts(RACES[1], ids, "dan"), NOW)
    await redis_ranks.rebuild(sessions)
    assert await redis_ranks.lines_below(wins, [10**9]) == [0]
    assert await redis_ranks.redis.exists(redis_ranks.key(wins[0])) == 0
