"""The ranks kept per bucket (``server.storage.ranks``) and in Redis
(``server.cluster.rank_cache``) equal the
ranks counted from the raw results, for a few thousand players on random boards."""

from __future__ import annotations

import asyncio
import os
import random
import secrets
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import redis.asyncio as redis
from sqlalchemy import select

from server.cluster.rank_cache import RedisRanks
from server.storage import ranks
from server.storage.engine import Sessions
from server.storage.leaderboards import (
    Board,
    daily_board,
    deal_board,
    fastest_wins,
    most_wins,
    period_start,
)
from server.storage.models import EntryRow, PlayerRow, PlayerWinsRow
from server.storage.players import new_id
from server.storage.races import record_start, utc_day
from server.storage.results import record_results, recount_wins
from tests.server.conftest import drop_redis_keys
from tests.server.storage.test_store import (
    ESTABLISHED,
    NOW,
    RULES,
    Result,
    finished_race,
    new_players,
    new_race,
    rank_entry,
)

PLAYERS = 2000
RACES = 900
CHECKS = 2500
SEEDS = (3, 4, 5)
DAILY = NOW.date() - timedelta(days=1)


def standing_order(line: Any) -> tuple[Any, ...]:
    """The order of ``Race.ranking``, from the raw columns (not ``standing``)."""
    won = line.status == "won"
    return (
        0 if won else 1,
        line.time_ms if won else 0,
        -line.on_foundations,
        line.reached_at_ms or 0,
    )


def counted_rank(
    lines: list[Any], tie: Callable[[Any], Any], order: Callable[[Any], Any], player: str
) -> int | None:
    """The rank of the player's best line, counted: one more than the lines strictly better."""
    mine = [line for line in lines if line.player_id == player]
    if not mine:
        return None
    best = tie(min(mine, key=order))
    return 1 + sum(1 for line in lines if tie(line) < best)


@dataclass
class History:
    players: list[str]
    entries: list[Any]
    wins: list[Any]


async def random_history(sessions: Sessions, rng: random.Random) -> History:
    """Races stored as the server stores them: times on a half-second grid across bucket edges
    (many ties), over the last ten days (a third of them today), on a few deals and one daily
    deal."""
    players = [new_id() for _ in range(PLAYERS)]
    async with sessions.begin() as session:
        session.add_all(
            PlayerRow(
                id=player, name=f"P{number}", token_hash=f"{number:064x}", created_at=ESTABLISHED
            )
            for number, player in enumerate(players)
        )
    daily_left = list(players)
    rng.shuffle(daily_left)
    for _ in range(RACES):
        started = NOW - timedelta(
            minutes=rng.randint(5, 11 * 60 if rng.random() < 0.3 else 10 * 24 * 60)
        )
        daily = rng.random() < 0.15 and daily_left
        racers = [daily_left.pop()] if daily else rng.sample(players, rng.randint(1, 3))
        results = sorted(
            (
                Result(player, "won", 500 * rng.randint(20, 60))
                if rng.random() < 0.6
                else Result(
                    player,
                    "lost",
                    500 * rng.randint(20, 60),
                    rng.choice([10, 30, 51]),
                    1000 * rng.randint(1, 5),
                )
                for player in racers
            ),
            key=lambda r: (
                r.status != "won",
                r.time_ms if r.status == "won" else 0,
                -r.home,
                r.reached_at_ms or 0,
            ),
        )
        if daily:
            await finished_race(sessions, started, *results, daily_day=DAILY)
        else:
            await finished_race(
                sessions,
                started,
                *results,
                seed=rng.choice(SEEDS),
                deal_kind=rng.choice(["secret", "secret", "number"]),
            )
    async with sessions.begin() as session:
        entries = list((await session.execute(select(EntryRow))).scalars())
        wins = list((await session.execute(select(PlayerWinsRow))).scalars())
    return History(players, entries, wins)


Check = Callable[[str], Awaitable[Board[Any]]]


def boards(
    sessions: Sessions, history: History, cache: ranks.RankCache | None
) -> list[tuple[str, Check, int | None | Callable[[str], int | None]]]:
    """Each board, how to ask it for a player's line, and that line's rank counted raw."""
    e = history.entries
    won = [line for line in e if line.status == "won" and line.ranked]
    week, today = period_start("week", NOW), utc_day(NOW)
    assert week is not None

    def fastest_order(line: Any) -> tuple[Any, ...]:
        return (line.time_ms, line.finished_at, line.race_id, line.player_id)

    def time_tie(line: Any) -> int:
        return int(line.time_ms)

    def race_order(line: Any) -> tuple[Any, ...]:
        return (*standing_order(line), line.finished_at, line.race_id, line.player_id)

    on_board: list[tuple[str, Check, Callable[[str], int | None]]] = [
        (
            "fastest all",
            lambda p: fastest_wins(sessions, RULES, "all", 1, NOW, around=p, cache=cache),
            lambda p: counted_rank(won, time_tie, fastest_order, p),
        ),
        (
            "fastest week",
            lambda p: fastest_wins(sessions, RULES, "week", 1, NOW, around=p, cache=cache),
            lambda p: counted_rank(
                [line for line in won if line.finished_at >= week], time_tie, fastest_order, p
            ),
        ),
        (
            "fastest today",
            lambda p: fastest_wins(sessions, RULES, "today", 1, NOW, around=p, cache=cache),
            lambda p: counted_rank(
                [line for line in won if line.finish_day == today], time_tie, fastest_order, p
            ),
        ),
        (
            "most wins",
            lambda p: most_wins(sessions, RULES, 1, around=p, cache=cache),
            lambda p: counted_rank(
                history.wins, lambda w: -w.wins, lambda w: (-w.wins, w.last_win_at, w.player_id), p
            ),
        ),
        (
            "daily",
            lambda p: daily_board(sessions, RULES, DAILY, 1, NOW, around=p, cache=cache),
            lambda p: counted_rank(
                [line for line in e if line.daily_day == DAILY and line.ranked],
                standing_order,
                race_order,
                p,
            ),
        ),
    ]
    for seed in SEEDS:
        on_board.append(
            (
                f"deal {seed}",
                lambda p, s=seed: deal_board(sessions, RULES, s, 1, around=p, cache=cache),
                lambda p, s=seed: counted_rank(
                    [line for line in e if line.seed == s and line.daily_day is None],
                    standing_order,
                    race_order,
                    p,
                ),
            )
        )
    return on_board  # type: ignore[return-value]


async def assert_ranks_counted(
    sessions: Sessions,
    history: History,
    rng: random.Random,
    cache: ranks.RankCache | None = None,
    checks: int = CHECKS,
    only: tuple[str, ...] | None = None,
) -> None:
    """For random players on random boards, the rank given is the rank counted."""
    choices = [
        board for board in boards(sessions, history, cache) if only is None or board[0] in only
    ]
    seen: dict[str, int] = {}
    for _ in range(checks):
        name, ask, count = rng.choice(choices)
        player = rng.choice(history.players)
        board = await ask(player)
        expected = count(player)  # type: ignore[operator]
        got = None if board.me is None else board.me.rank
        assert got == expected, (name, player)
        seen[name] = seen.get(name, 0) + (got is not None)
    assert all(seen.get(name, 0) > 10 for name, _, _ in choices), seen


@pytest_asyncio.fixture
async def history(sessions: Sessions) -> History:
    return await random_history(sessions, random.Random(14))


@pytest.mark.asyncio
async def test_ranks_from_the_counts_kept_equal_the_ranks_counted(
    sessions: Sessions, history: History
) -> None:
    await assert_ranks_counted(sessions, history, random.Random(1))
    # Counted again from the results (as after a bulk load), the counts are the same.
    async with sessions.begin() as session:
        kept = set(
            (await session.execute(select(ranks._COUNTS).where(ranks._COUNTS.c.lines != 0))).all()
        )
    await recount_wins(sessions)
    async with sessions.begin() as session:
        assert set((await session.execute(select(ranks._COUNTS))).all()) == kept


@pytest.mark.asyncio
async def test_a_retried_result_is_counted_once_on_every_board(sessions: Sessions) -> None:
    ann, bob = await new_players(sessions, "Ann", "Bob")
    race_id = await finished_race(
        sessions,
        NOW - timedelta(hours=1),
        Result(ann, "won", 9_000),
        Result(bob, "lost", 9_500, 30, 4_000),
        seed=3,
    )
    async with sessions.begin() as session:
        before = set((await session.execute(select(ranks._COUNTS))).all())
    again = [rank_entry(1, ann, "won", 9_000, 52), rank_entry(2, bob, "lost", 9_500, 30, 4_000)]
    scored = (await record_results(sessions, race_id, NOW, again)).scored
    async with sessions.begin() as session:
        assert set((await session.execute(select(ranks._COUNTS))).all()) == before
    assert sorted(scored) == sorted(
        [
            (ranks.fastest_board(RULES), f"{race_id}:{ann}", 9_000),
            (ranks.wins_board(RULES), ann, -1),
        ]
    )


@pytest_asyncio.fixture
async def redis_ranks(redis_url: str) -> AsyncIterator[RedisRanks]:
    prefix = f"test-ranks-{secrets.token_hex(4)}:"
    cache = RedisRanks(redis_url, prefix)
    try:
        yield cache
    finally:
        await cache.close()
        await drop_redis_keys(redis_url, prefix)


@pytest.mark.asyncio
async def test_ranks_from_redis_equal_the_ranks_counted_and_keep_in_step(
    sessions: Sessions, history: History, redis_ranks: RedisRanks
) -> None:
    hot = ("fastest all", "most wins")
    player = history.players[0]
    not_ready = await redis_ranks.lines_below((ranks.fastest_board(RULES),), [10**9])
    assert not_ready is None
    assert await redis_ranks.rebuild(sessions) > 0
    assert await redis_ranks.lines_below((ranks.fastest_board(RULES, NOW.date()),), [1]) is None
    await assert_ranks_counted(sessions, history, random.Random(2), redis_ranks, 1000, hot)
    # Results stored after the rebuild reach the sets as the server gives them.
    for minutes in range(1, 40):
        race_id = await new_race(sessions, player)
        started = NOW - timedelta(minutes=minutes)
        await record_start(sessions, race_id, started, [player])
        time_ms = 10_000 + 500 * (minutes % 7)
        await redis_ranks.set_lines(
            (
                await record_results(
                    sessions,
                    race_id,
                    started + timedelta(milliseconds=time_ms),
                    [rank_entry(1, player, "won", time_ms, 52)],
                )
            ).scored
        )
    async with sessions.begin() as session:
        history.entries = list((await session.execute(select(EntryRow))).scalars())
        history.wins = list((await session.execute(select(PlayerWinsRow))).scalars())
    await assert_ranks_counted(sessions, history, random.Random(3), redis_ranks, 1000, hot)
    top = await most_wins(sessions, RULES, 1, around=player, cache=redis_ranks)
    assert top.me is not None and top.me.rank == 1


async def exists(url: str, key: str) -> bool:
    connection = redis.from_url(url)
    try:
        return bool(await connection.exists(key))
    finally:
        await connection.aclose()


def test_the_rebuild_command_fills_the_cache_and_needs_redis(
    redis_url: str, tmp_path: Path
) -> None:
    """`patience-race leaderboards rebuild` as a person runs it, on a migrated database."""
    path = tmp_path / "ranks.sqlite3"
    prefix = f"test-ranks-{secrets.token_hex(4)}:"
    environment = {**os.environ, "PATIENCE_RACE_REDIS_PREFIX": prefix}
    environment.pop("PATIENCE_RACE_REDIS_URL", None)
    command = [
        sys.executable,
        "-m",
        "server.commands",
        "leaderboards",
        "rebuild",
        "--database-url",
        f"sqlite:///{path}",
    ]
    try:
        upgrade = subprocess.run(
            [
                sys.executable,
                "-m",
                "server.commands",
                "db",
                "upgrade",
                "--database-url",
                f"sqlite:///{path}",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=environment,
        )
        assert upgrade.returncode == 0, upgrade.stderr
        alone = subprocess.run(
            command, capture_output=True, text=True, timeout=120, env=environment
        )
        assert alone.returncode == 2 and "--redis-url" in alone.stderr
        rebuilt = subprocess.run(
            [*command, "--redis-url", redis_url],
            capture_output=True,
            text=True,
            timeout=120,
            env=environment,
        )
        assert rebuilt.returncode == 0, rebuilt.stderr
        assert "0 lines" in rebuilt.stdout
        assert asyncio.run(exists(redis_url, f"{prefix}ranks-ready"))
    finally:
        asyncio.run(drop_redis_keys(redis_url, prefix))
