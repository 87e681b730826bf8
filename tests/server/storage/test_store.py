"""The store against real databases: SQLite always, PostgreSQL when configured (conftest.py).

Leaderboards are checked on rows written the way the server writes them: create_race,
record_start, record_results.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import re
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, func, insert, inspect, select, text, update
from sqlalchemy.exc import IntegrityError, OperationalError, StatementError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import NullPool

from clients.cli import verify_race
from engine.deal import SEED_MAX
from engine.game import RULES_VERSION
from engine.moves import Move
from engine.players import GreedyPlayer, Player, RandomPlayer
from engine.replay import MoveLog, ReplayError, replay
from server.core.race import Phase, Race
from server.core.terms import DealKind, RaceTerms
from server.settings import Settings, async_url
from server.storage import holding
from server.storage.engine import ALEMBIC_INI, make_engine, make_sessionmaker, upgrade_database
from server.storage.leaderboards import (
    Board,
    ResultLine,
    daily_board,
    deal_board,
    fastest_wins,
    most_wins,
    period_start,
)
from server.storage.models import (
    Base,
    DailyPlayRow,
    EntryRow,
    MoveRow,
    PlayerRow,
    PlayerWinsRow,
    RaceRow,
)
from server.storage.players import create_player, new_id, player_by_token
from server.storage.races import AcceptedMove, create_race, race_record, record_moves, record_start
from server.storage.results import record_results, recount_wins
from wire.commitment import commitment
from wire.protocol import RankEntry

Sessions = async_sessionmaker[AsyncSession]

NOW = datetime(2026, 11, 18, 12, 0, tzinfo=UTC)
"""A Wednesday, noon UTC."""
RULES = "hidden-cards"


# -- settings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://u:p@host/db", "postgresql+asyncpg://u:p@host/db"),
        ("postgres://u@host:5433/db", "postgresql+asyncpg://u@host:5433/db"),
        ("sqlite:///race.sqlite3", "sqlite+aiosqlite:///race.sqlite3"),
        ("sqlite+aiosqlite:///race.sqlite3", "sqlite+aiosqlite:///race.sqlite3"),
        ("postgresql+asyncpg://host/db", "postgresql+asyncpg://host/db"),
    ],
)
def test_async_url_gives_plain_urls_their_async_driver(url: str, expected: str) -> None:
    assert async_url(url) == expected


def test_settings_come_from_patience_race_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    defaults = Settings()
    assert defaults.database_url == "sqlite+aiosqlite:///patience-race.sqlite3"
    assert (defaults.host, defaults.port, defaults.max_frame_bytes) == ("127.0.0.1", 8765, 16384)
    assert (defaults.reconnect_grace_s, defaults.countdown_s) == (60.0, 3.0)
    monkeypatch.setenv("PATIENCE_RACE_DATABASE_URL", "postgresql://race@db.example/race")
    monkeypatch.setenv("PATIENCE_RACE_PORT", "9000")
    settings = Settings()
    assert settings.database_url == "postgresql+asyncpg://race@db.example/race"
    assert settings.port == 9000


# -- migrations -------------------------------------------------------------------------------


def _schema_differences(connection: Connection) -> list[object]:
    return list(compare_metadata(MigrationContext.configure(connection), Base.metadata))


def _names(connection: Connection) -> set[str]:
    inspector = inspect(connection)
    names = set()
    for table in inspector.get_table_names():
        names.add(inspector.get_pk_constraint(table)["name"] or f"unnamed pk of {table}")
        names |= {index["name"] or "" for index in inspector.get_indexes(table)}
        names |= {key["name"] or "" for key in inspector.get_foreign_keys(table)}
    return names


@pytest.mark.asyncio
async def test_upgrade_head_on_an_empty_database_gives_exactly_the_models(
    empty_database_url: str,
) -> None:
    await upgrade_database(empty_database_url)
    await upgrade_database(empty_database_url)  # already at head: nothing to do
    engine = create_async_engine(empty_database_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            assert await connection.run_sync(_schema_differences) == []
            names = await connection.run_sync(_names)
    finally:
        await engine.dispose()
    assert names >= {
        "pk_players",
        "pk_races",
        "pk_entries",
        "pk_moves",
        "ix_players_token_hash",
        "ix_races_ended_at",
        "ix_entries_fastest",
        "ix_entries_finished_at",
        "ix_entries_wins",
        "ix_entries_deal",
        "ix_entries_daily",
        "fk_races_host_id_players",
        "fk_entries_race_id_races",
        "fk_entries_player_id_players",
        "fk_moves_race_id_entries",
        "pk_player_wins",
        "ix_player_wins_board",
        "fk_player_wins_player_id_players",
        "pk_daily_plays",
        "fk_daily_plays_player_id_players",
    }


@pytest.mark.asyncio
@pytest.mark.parametrize("database_kind", ["postgresql"], indirect=True)  # no shared SQLite
async def test_servers_starting_at_once_on_one_database_migrate_one_after_the_other(
    empty_database_url: str,
) -> None:
    """Machines started together (after a deploy) each upgrade the one database: without the
    migrations' advisory lock, all but one failed creating the same tables."""
    upgrade = (
        "import asyncio, sys; from server.storage.engine import upgrade_database; "
        "asyncio.run(upgrade_database(sys.argv[1]))"
    )
    servers = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-c", upgrade, empty_database_url, stderr=asyncio.subprocess.PIPE
        )
        for _ in range(4)
    ]
    errors = [(await server.communicate())[1].decode()[-500:] for server in servers]
    assert [
        error for server, error in zip(servers, errors, strict=True) if server.returncode != 0
    ] == []
    engine = create_async_engine(empty_database_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            assert await connection.run_sync(_schema_differences) == []
    finally:
        await engine.dispose()


@pytest.mark.asyncio
async def test_downgrade_base_removes_every_table(empty_database_url: str) -> None:
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("sqlalchemy.url", empty_database_url.replace("%", "%%"))
    await asyncio.to_thread(command.upgrade, config, "head")
    await asyncio.to_thread(command.downgrade, config, "base")
    engine = create_async_engine(empty_database_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            tables = await connection.run_sync(lambda sync: inspect(sync).get_table_names())
    finally:
        await engine.dispose()
    assert tables == ["alembic_version"]


# -- players ----------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_player_comes_back_by_token_which_is_stored_only_hashed(sessions: Sessions) -> None:
    player, token = await create_player(sessions, "Ann")
    assert re.fullmatch(r"[A-Za-z0-9_-]{16,32}", player.id)
    assert len(token) >= 43
    found = await player_by_token(sessions, token)
    assert found is not None and (found.id, found.name) == (player.id, "Ann")
    assert found.created_at.tzinfo is not None
    assert await player_by_token(sessions, token + "x") is None
    async with sessions.begin() as session:
        row = (await session.execute(select(PlayerRow.__table__))).one()
    assert token not in [str(value) for value in row]
    assert row.token_hash == hashlib.sha256(token.encode()).hexdigest()


# -- races and moves --------------------------------------------------------------------------


ESTABLISHED = NOW - timedelta(days=30)
"""When the players of these tests made their identities, unless a test says otherwise: well
before any day they play a daily deal on (only identities older than the day are ranked)."""


async def new_players(
    sessions: Sessions, *names: str, made_at: datetime = ESTABLISHED
) -> list[str]:
    ids = [(await create_player(sessions, name))[0].id for name in names]
    async with sessions.begin() as session:
        await session.execute(
            update(PlayerRow).where(PlayerRow.id.in_(ids)).values(created_at=made_at)
        )
    return ids


async def new_race(
    sessions: Sessions,
    host_id: str,
    *,
    seed: int = 7,
    rule_set: str = RULES,
    daily_day: date | None = None,
    rules: int = RULES_VERSION,
    deal_kind: DealKind | None = None,
) -> str:
    """A race in its lobby: on a secret deal, or the daily deal given ``daily_day``."""
    race_id = new_id()
    await create_race(
        sessions,
        race_id=race_id,
        code="ABCD1234",
        rule_set=rule_set,
        deal_kind=deal_kind or ("secret" if daily_day is None else "daily"),
        seed=seed,
        algorithm=1,
        rules=rules,
        host_id=host_id,
        seats_max=4,
        time_limit_s=None,
        daily_day=daily_day,
    )
    return race_id


@pytest.mark.asyncio
@pytest.mark.parametrize("seed", [0, 2**63 - 1, 2**63, SEED_MAX])
async def test_a_race_keeps_its_64_bit_unsigned_seed_exactly(sessions: Sessions, seed: int) -> None:
    (ann,) = await new_players(sessions, "Ann")
    race_id = await new_race(sessions, ann, seed=seed)
    async with sessions.begin() as session:
        race = await session.get_one(RaceRow, race_id)
        stored_length = await session.scalar(select(func.length(RaceRow.seed)))
    assert race.seed == seed
    assert race.commitment == commitment(seed)
    assert stored_length == 20


@pytest.mark.asyncio
async def test_a_race_refuses_a_seed_beyond_64_bits_a_naive_time_and_a_daily_without_day(
    sessions: Sessions,
) -> None:
    (ann,) = await new_players(sessions, "Ann")
    with pytest.raises(StatementError, match="64-bit"):
        await new_race(sessions, ann, seed=SEED_MAX + 1)
    race_id = await new_race(sessions, ann)
    with pytest.raises(StatementError, match="naive"):
        await record_start(sessions, race_id, datetime(2026, 11, 18, 12), [ann])
    with pytest.raises(ValueError, match="daily"):
        await create_race(
            sessions,
            race_id=new_id(),
            code="DAILY1",
            rule_set=RULES,
            deal_kind="daily",
            seed=1,
            algorithm=1,
            rules=RULES_VERSION,
            host_id=ann,
            seats_max=1,
            time_limit_s=None,
        )


@pytest.mark.asyncio
async def test_start_and_moves_are_stored_once_however_often_they_are_retried(
    sessions: Sessions,
) -> None:
    ann, bob = await new_players(sessions, "Ann", "Bob")
    race_id = await new_race(sessions, ann, seed=SEED_MAX)
    await record_start(sessions, race_id, NOW, [ann, bob])
    await record_start(sessions, race_id, NOW, [ann, bob])

    def moves(player: str, indexes: range) -> list[AcceptedMove]:
        return [
            AcceptedMove(
                race_id=race_id,
                player_id=player,
                index=index,
                text=f"move {index}",
                at_ms=1000 * index,
            )
            for index in indexes
        ]

    await record_moves(sessions, moves(ann, range(5)) + moves(bob, range(2)))
    await record_moves(sessions, moves(ann, range(3, 8)) + moves(bob, range(2)))
    await record_moves(sessions, moves(ann, range(3, 8)))
    await record_moves(sessions, [])
    async with sessions.begin() as session:
        entries = (await session.scalars(select(EntryRow).order_by(EntryRow.player_id))).all()
        stored = (
            await session.execute(
                select(MoveRow.player_id, MoveRow.index, MoveRow.text).order_by(
                    MoveRow.player_id, MoveRow.index
                )
            )
        ).all()
    assert sorted(entry.player_id for entry in entries) == sorted([ann, bob])
    assert all(
        entry.status == "racing" and entry.seed == SEED_MAX and entry.rule_set == RULES
        for entry in entries
    )
    assert [(player, index) for player, index, _ in stored] == sorted(
        [(ann, index) for index in range(8)] + [(bob, 0), (bob, 1)]
    )


@pytest.mark.asyncio
async def test_a_move_of_someone_not_in_the_race_is_refused(sessions: Sessions) -> None:
    ann, bob = await new_players(sessions, "Ann", "Bob")
    race_id = await new_race(sessions, ann)
    await record_start(sessions, race_id, NOW, [ann])
    with pytest.raises(IntegrityError):
        await record_moves(
            sessions,
            [AcceptedMove(race_id=race_id, player_id=bob, index=0, text="resign", at_ms=5)],
        )


@pytest.mark.asyncio
async def test_results_set_rank_times_and_the_end(sessions: Sessions) -> None:
    ann, bob = await new_players(sessions, "Ann", "Bob")
    race_id = await new_race(sessions, ann)
    await record_start(sessions, race_id, NOW, [ann, bob])
    ended = NOW + timedelta(seconds=95)
    ranking = [
        rank_entry(1, ann, "won", 90_000, 52, 90_000),
        rank_entry(2, bob, "resigned", 95_000, 20, 40_000),
    ]
    await record_results(sessions, race_id, ended, ranking)
    await record_results(sessions, race_id, ended, ranking)
    async with sessions.begin() as session:
        race = await session.get_one(RaceRow, race_id)
        entries = {entry.player_id: entry for entry in await session.scalars(select(EntryRow))}
    assert race.started_at == NOW and race.ended_at == ended
    assert (entries[ann].rank, entries[ann].status, entries[ann].time_ms) == (1, "won", 90_000)
    assert entries[ann].finished_at == NOW + timedelta(seconds=90)
    assert (entries[bob].rank, entries[bob].on_foundations, entries[bob].reached_at_ms) == (
        2,
        20,
        40_000,
    )
    assert entries[bob].ended_at == ended


@pytest.mark.asyncio
async def test_results_for_someone_who_did_not_start_are_refused(sessions: Sessions) -> None:
    ann, bob = await new_players(sessions, "Ann", "Bob")
    race_id = await new_race(sessions, ann)
    await record_start(sessions, race_id, NOW, [ann])
    with pytest.raises(ValueError, match="did not start"):
        await record_results(sessions, race_id, NOW, [rank_entry(1, bob, "won", 1000, 52)])


# -- a whole race, played by the race state machine -------------------------------------------


def unix(moment: datetime) -> float:
    return moment.timestamp()


def utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


async def play_and_store(
    sessions: Sessions, race: Race, bots: dict[str, Player], now: float
) -> None:
    """Run the race to its end as the server would, storing what the server stores."""
    for player in bots:
        if player != race.host_id:
            race.join(player, player, now)
    race.start(race.host_id, now)
    race.tick(now + race.terms.countdown_s)
    assert race.started_at is not None
    await record_start(sessions, race.terms.race_id, utc(race.started_at), list(race.racers))
    now = race.started_at
    while race.phase is not Phase.FINISHED:
        for player, bot in bots.items():
            racer = race.racers[player]
            if not racer.finished and racer.game is not None:
                now += 0.4
                race.move(player, bot.choose_in(racer.game), now)
    rows = [
        AcceptedMove(
            race_id=race.terms.race_id,
            player_id=racer.player_id,
            index=index,
            text=str(move),
            at_ms=round((at - race.started_at) * 1000),
        )
        for racer in race.racers.values()
        if racer.game is not None
        for index, (move, at) in enumerate(zip(racer.game.history, racer.move_times, strict=True))
    ]
    half = len(rows) // 2
    await record_moves(sessions, rows[:half])
    await record_moves(sessions, rows)
    assert race.ended_at is not None and race.result is not None
    await record_results(sessions, race.terms.race_id, utc(race.ended_at), race.result.ranking)


@pytest.mark.asyncio
async def test_a_race_record_has_results_and_move_logs_that_replay(sessions: Sessions) -> None:
    ann, bob = await new_players(sessions, "Ann", "Bob")
    race_id = await new_race(sessions, ann, seed=20261122)
    race = Race(
        RaceTerms(
            race_id=race_id,
            code="ABCD1234",
            rule_set=RULES,
            seed=20261122,
            algorithm=1,
            deal_kind="number",
            seats_max=4,
            time_limit_s=None,
        ),
        host_id=ann,
        host_name="Ann",
    )
    bots = {
        ann: GreedyPlayer(random.Random(1), patience=40),
        bob: RandomPlayer(random.Random(2), patience=40),
    }
    await play_and_store(sessions, race, bots, unix(NOW))

    record = await race_record(sessions, race_id, NOW + timedelta(days=1))
    assert record is not None and race.result is not None
    ranking = race.result.ranking
    assert record["seed"] == "20261122" and record["algorithm"] == 1
    assert record["commitment"] == commitment(20261122)
    assert [player["name"] for player in record["players"]] == [
        {ann: "Ann", bob: "Bob"}[entry.player_id] for entry in ranking
    ]
    assert record["results"] == [
        {
            "rank": entry.rank,
            "player_id": entry.player_id,
            "status": entry.status,
            "time_ms": entry.time_ms,
            "on_foundations": entry.on_foundations,
            "reached_at_ms": entry.reached_at_ms,
            "moves": entry.moves,
            "bot": False,
        }
        for entry in ranking
    ]
    for player in (ann, bob):
        racer = race.racers[player]
        assert racer.game is not None
        log = MoveLog.from_json(record["logs"][player])
        assert list(log.moves) == racer.game.history
        assert log.times_ms == tuple(
            round((at - (race.started_at or 0)) * 1000) for at in racer.move_times
        )
        assert replay(log).outcome().status is log.claimed_status
        assert log.claimed_status is racer.game.outcome().status
    assert await race_record(sessions, "no-such-race", NOW) is None


@pytest.mark.asyncio
async def test_a_daily_race_record_hides_seed_and_moves_until_the_day_is_over(
    sessions: Sessions,
) -> None:
    (ann,) = await new_players(sessions, "Ann")
    day = NOW.date()
    race_id = await new_race(sessions, ann, seed=99, daily_day=day)
    race = Race(
        RaceTerms(
            race_id=race_id,
            code="DAILY1",
            rule_set=RULES,
            seed=99,
            algorithm=1,
            deal_kind="daily",
            seats_max=1,
            time_limit_s=None,
            countdown_s=0,
        ),
        host_id=ann,
        host_name="Ann",
    )
    await play_and_store(
        sessions, race, {ann: GreedyPlayer(random.Random(3), patience=40)}, unix(NOW)
    )
    during = await race_record(sessions, race_id, NOW + timedelta(hours=1))
    after = await race_record(
        sessions, race_id, datetime.combine(day + timedelta(days=1), datetime.min.time(), UTC)
    )
    assert during is not None and after is not None
    assert during["seed"] is None and during["logs"] is None
    assert during["results"] == after["results"] != []
    assert after["seed"] == "99" and set(after["logs"]) == {ann}


@pytest.mark.asyncio
async def test_races_in_progress_are_taken_with_entries_and_moves_in_order(
    sessions: Sessions,
) -> None:
    ann, bob = await new_players(sessions, "Ann", "Bob")
    lobby = await new_race(sessions, ann)
    racing = await new_race(sessions, bob, seed=SEED_MAX)
    over = await new_race(sessions, ann)
    await record_start(sessions, racing, NOW, [ann, bob])
    await record_moves(
        sessions,
        [
            AcceptedMove(
                race_id=racing,
                player_id=player,
                index=index,
                text=f"{player} {index}",
                at_ms=100 * index + len(player),
            )
            for index in (2, 0, 1)
            for player in (ann, bob)
        ],
    )
    await record_start(sessions, over, NOW, [ann])
    await record_results(
        sessions, over, NOW + timedelta(minutes=1), [rank_entry(1, ann, "resigned", 60_000, 3)]
    )

    races = await holding.take(sessions, None, "this process", NOW, force=True)
    assert [race.id for race in races] == [lobby, racing]
    assert races[0].host.name == "Ann" and races[0].entries == []
    resumed = races[1]
    assert (resumed.seed, resumed.started_at, resumed.host.name) == (SEED_MAX, NOW, "Bob")
    assert {entry.player.name for entry in resumed.entries} == {"Ann", "Bob"}
    for entry in resumed.entries:
        assert entry.status == "racing"
        assert [move.text for move in entry.move_log] == [
            f"{entry.player_id} {index}" for index in range(3)
        ]


# -- leaderboards -----------------------------------------------------------------------------


def rank_entry(
    rank: int, player: str, status: str, time_ms: int, home: int, reached_at_ms: int | None = None
) -> RankEntry:
    return RankEntry(
        rank=rank,
        player_id=player,
        name="",
        status=status,
        time_ms=time_ms,
        on_foundations=home,
        reached_at_ms=reached_at_ms,
        moves=10,
    )


@dataclass(frozen=True)
class Result:
    player: str
    status: str
    time_ms: int
    home: int = 52
    reached_at_ms: int | None = None


async def finished_race(
    sessions: Sessions,
    started_at: datetime,
    *results: Result,
    seed: int = 7,
    rule_set: str = RULES,
    daily_day: date | None = None,
    deal_kind: DealKind | None = None,
) -> str:
    """A race stored the way the server stores one; ``results`` in ranking order."""
    race_id = await new_race(
        sessions,
        results[0].player,
        seed=seed,
        rule_set=rule_set,
        daily_day=daily_day,
        deal_kind=deal_kind,
    )
    await record_start(sessions, race_id, started_at, [result.player for result in results])
    ended = started_at + timedelta(milliseconds=max(result.time_ms for result in results))
    await record_results(
        sessions,
        race_id,
        ended,
        [
            rank_entry(
                rank,
                result.player,
                result.status,
                result.time_ms,
                result.home,
                result.reached_at_ms,
            )
            for rank, result in enumerate(results, start=1)
        ],
    )
    return race_id


def ranked(board: Board[ResultLine]) -> list[tuple[int, str, int | None]]:
    return [(line.rank, line.name, line.time_ms) for line in board.lines]


@pytest.mark.asyncio
async def test_fastest_wins_share_a_rank_on_a_tie_and_list_the_first_to_get_there_first(
    sessions: Sessions,
) -> None:
    ann, bob, cy, di, ed = await new_players(sessions, "Ann", "Bob", "Cy", "Di", "Ed")
    day = timedelta(days=1)
    await finished_race(
        sessions, NOW - 3 * day, Result(ann, "won", 60_000), Result(ed, "lost", 70_000, 30)
    )
    await finished_race(sessions, NOW - 2 * day, Result(cy, "won", 60_000))
    await finished_race(
        sessions, NOW - 4 * day, Result(bob, "won", 50_000), Result(di, "won", 70_000)
    )
    await finished_race(sessions, NOW - 5 * day, Result(di, "won", 65_500))
    await finished_race(sessions, NOW - 5 * day, Result(ed, "won", 1_000), rule_set="octagon")

    board = await fastest_wins(sessions, RULES, "all", 10, NOW)
    assert ranked(board) == [
        (1, "Bob", 50_000),
        (2, "Ann", 60_000),
        (2, "Cy", 60_000),
        (4, "Di", 65_500),
        (5, "Di", 70_000),
    ]
    assert board.me is None
    assert board.lines[0].seed == 7 and board.lines[0].status == "won"
    assert board.lines[0].finished_at == NOW - 4 * day + timedelta(seconds=50)
    assert ranked(await fastest_wins(sessions, RULES, "all", 2, NOW)) == [
        (1, "Bob", 50_000),
        (2, "Ann", 60_000),
    ]
    assert ranked(await fastest_wins(sessions, "octagon", "all", 10, NOW)) == [(1, "Ed", 1_000)]


@pytest.mark.asyncio
async def test_fastest_wins_today_and_this_week_count_from_utc_midnight_and_monday(
    sessions: Sessions,
) -> None:
    ann, bob, cy, di = await new_players(sessions, "Ann", "Bob", "Cy", "Di")
    midnight = datetime(2026, 11, 18, tzinfo=UTC)
    monday = datetime(2026, 11, 16, tzinfo=UTC)
    assert period_start("today", NOW) == midnight and period_start("week", NOW) == monday
    assert period_start("all", NOW) is None
    second = timedelta(seconds=1)
    await finished_race(sessions, midnight - 4 * second, Result(ann, "won", 4_000))
    await finished_race(sessions, monday - 3 * second, Result(bob, "won", 3_000))
    await finished_race(sessions, monday - 3 * second, Result(cy, "won", 2_000))
    await finished_race(sessions, NOW - timedelta(days=30), Result(di, "won", 1_000))

    assert ranked(await fastest_wins(sessions, RULES, "today", 10, NOW)) == [(1, "Ann", 4_000)]
    assert ranked(await fastest_wins(sessions, RULES, "week", 10, NOW)) == [
        (1, "Bob", 3_000),
        (2, "Ann", 4_000),
    ]
    assert [line.name for line in (await fastest_wins(sessions, RULES, "all", 10, NOW)).lines] == [
        "Di",
        "Cy",
        "Bob",
        "Ann",
    ]
    kiribati = NOW.astimezone(timezone(timedelta(hours=14)))  # already the 19th there
    assert ranked(await fastest_wins(sessions, RULES, "today", 10, kiribati)) == [(1, "Ann", 4_000)]


@pytest.mark.asyncio
async def test_around_me_gives_the_lines_around_my_best_with_true_ranks(sessions: Sessions) -> None:
    names = [f"P{number}" for number in range(1, 10)]
    ids = dict(zip(names, await new_players(sessions, *names), strict=True))
    for number, name in enumerate(names, start=1):
        await finished_race(
            sessions, NOW - timedelta(hours=number), Result(ids[name], "won", 10_000 * number)
        )
    await finished_race(sessions, NOW, Result(ids["P5"], "won", 95_000))

    board = await fastest_wins(sessions, RULES, "all", 3, NOW, around=ids["P5"])
    assert ranked(board) == [(4, "P4", 40_000), (5, "P5", 50_000), (6, "P6", 60_000)]
    assert board.me is not None and (board.me.rank, board.me.time_ms) == (5, 50_000)
    top = await fastest_wins(sessions, RULES, "all", 3, NOW, around=ids["P1"])
    assert [line.rank for line in top.lines] == [1, 2, 3] and top.me == top.lines[0]
    last = await fastest_wins(sessions, RULES, "all", 3, NOW, around=ids["P9"])
    assert ranked(last) == [(8, "P8", 80_000), (9, "P9", 90_000), (10, "P5", 95_000)]
    (stranger,) = await new_players(sessions, "Stranger")
    absent = await fastest_wins(sessions, RULES, "all", 3, NOW, around=stranger)
    assert [line.rank for line in absent.lines] == [1, 2, 3] and absent.me is None


@pytest.mark.asyncio
async def test_around_me_starting_inside_a_tie_keeps_the_shared_rank(sessions: Sessions) -> None:
    ann, bob, cy, di, ed = await new_players(sessions, "Ann", "Bob", "Cy", "Di", "Ed")
    for hours, (player, time_ms) in enumerate(
        [(ann, 10_000), (bob, 20_000), (cy, 20_000), (di, 20_000), (ed, 30_000)]
    ):
        await finished_race(
            sessions, NOW - timedelta(hours=10 - hours), Result(player, "won", time_ms)
        )
    board = await fastest_wins(sessions, RULES, "all", 3, NOW, around=di)
    assert ranked(board) == [(2, "Cy", 20_000), (2, "Di", 20_000), (5, "Ed", 30_000)]
    assert board.me is not None and board.me.name == "Di" and board.me.rank == 2


@pytest.mark.asyncio
async def test_most_wins_counts_wins_and_breaks_ties_by_who_got_there_first(
    sessions: Sessions,
) -> None:
    ann, bob, cy = await new_players(sessions, "Ann", "Bob", "Cy")
    hour = timedelta(hours=1)
    for hours, player in enumerate([ann, bob, bob, ann, bob, ann, cy]):
        await finished_race(sessions, NOW - (20 - hours) * hour, Result(player, "won", 60_000))
    await finished_race(sessions, NOW, Result(cy, "lost", 60_000, 10))
    await finished_race(sessions, NOW, Result(cy, "won", 60_000), rule_set="octagon")
    await finished_race(sessions, NOW, Result(cy, "won", 60_000), rule_set="octagon")

    board = await most_wins(sessions, RULES, 10)
    assert [(line.rank, line.name, line.wins) for line in board.lines] == [
        (1, "Bob", 3),
        (1, "Ann", 3),
        (3, "Cy", 1),
    ]
    assert board.lines[0].last_win_at == NOW - 16 * hour + timedelta(minutes=1)
    around = await most_wins(sessions, RULES, 1, around=cy)
    assert [(line.rank, line.name) for line in around.lines] == [(3, "Cy")]
    assert around.me == around.lines[0]
    around_ann = await most_wins(sessions, RULES, 3, around=ann)
    assert around_ann.me is not None and (around_ann.me.rank, around_ann.me.wins) == (1, 3)


async def stored_wins(sessions: Sessions) -> set[tuple[str, str, int, datetime]]:
    async with sessions.begin() as session:
        rows = (
            await session.execute(
                select(
                    PlayerWinsRow.rule_set,
                    PlayerWinsRow.player_id,
                    PlayerWinsRow.wins,
                    PlayerWinsRow.last_win_at,
                )
            )
        ).all()
    return {(rule_set, player, wins, last) for rule_set, player, wins, last in rows}


@pytest.mark.asyncio
async def test_a_retried_result_counts_its_wins_once(sessions: Sessions) -> None:
    ann, bob, cy = await new_players(sessions, "Ann", "Bob", "Cy")
    race_id = await new_race(sessions, ann)
    await record_start(sessions, race_id, NOW, [ann, bob])
    ranking = [
        rank_entry(1, ann, "won", 90_000, 52, 90_000),
        rank_entry(2, bob, "won", 95_000, 52, 95_000),
    ]
    # An attempt that fails (cy did not race) is rolled back whole: its wins are not counted.
    with pytest.raises(ValueError, match="did not start"):
        await record_results(sessions, race_id, NOW, [*ranking, rank_entry(3, cy, "won", 1, 52)])
    assert await stored_wins(sessions) == set()
    # The retry counts them; a retry after a commit that did land counts nothing more.
    for _ in range(3):
        await record_results(sessions, race_id, NOW + timedelta(seconds=95), ranking)
    board = await most_wins(sessions, RULES, 10)
    assert [(line.name, line.wins, line.last_win_at) for line in board.lines] == [
        ("Ann", 1, NOW + timedelta(seconds=90)),
        ("Bob", 1, NOW + timedelta(seconds=95)),
    ]
    await finished_race(sessions, NOW + timedelta(hours=1), Result(bob, "won", 60_000))
    assert [(line.name, line.wins) for line in (await most_wins(sessions, RULES, 10)).lines] == [
        ("Bob", 2),
        ("Ann", 1),
    ]


@pytest.mark.asyncio
async def test_a_retry_that_overtakes_its_first_attempt_counts_nothing_more(
    sessions: Sessions, database_url: str
) -> None:
    """The first attempt's commit is still on its way (on a connection the writer gave up on)
    when the retry runs: the retry must wait for it, or fail and be retried, and count no win
    again."""
    (ann,) = await new_players(sessions, "Ann")
    race_id = await new_race(sessions, ann)
    await record_start(sessions, race_id, NOW, [ann])
    ranking = [rank_entry(1, ann, "won", 90_000, 52, 90_000)]
    finished = NOW + timedelta(seconds=90)
    first = make_engine(database_url)
    try:
        async with first.connect() as connection:
            # What the first attempt wrote, not committed yet.
            await connection.execute(
                update(EntryRow)
                .where(EntryRow.race_id == race_id)
                .values(
                    status="won", rank=1, time_ms=90_000, finished_at=finished, ended_at=finished
                )
            )
            await connection.execute(
                PlayerWinsRow.__table__.insert().values(
                    rule_set=RULES, player_id=ann, wins=1, last_win_at=finished
                )
            )
            await connection.execute(
                update(RaceRow).where(RaceRow.id == race_id).values(ended_at=finished)
            )
            retry = asyncio.create_task(record_results(sessions, race_id, finished, ranking))
            await asyncio.sleep(0.5)
            assert not retry.done()  # waiting for the first attempt's locks
            await connection.commit()
        try:
            await retry
        except OperationalError:
            # SQLite may fail a retry that began reading before that commit: the writer retries.
            await record_results(sessions, race_id, finished, ranking)
    finally:
        await first.dispose()
    assert [(line.name, line.wins) for line in (await most_wins(sessions, RULES, 10)).lines] == [
        ("Ann", 1)
    ]


@pytest.mark.asyncio
async def test_wins_stored_out_of_order_keep_the_latest_win(sessions: Sessions) -> None:
    ann, bob = await new_players(sessions, "Ann", "Bob")
    hour = timedelta(hours=1)
    # Bob's two wins are stored latest first (as when the earlier race's write was retried);
    # Ann's in order, both before Bob's last: Ann got to two wins first.
    await finished_race(sessions, NOW - 1 * hour, Result(bob, "won", 60_000))
    await finished_race(
        sessions, NOW - 5 * hour, Result(bob, "won", 60_000), Result(ann, "lost", 70_000, 20)
    )
    await finished_race(sessions, NOW - 4 * hour, Result(ann, "won", 60_000))
    await finished_race(sessions, NOW - 3 * hour, Result(ann, "won", 60_000))
    board = await most_wins(sessions, RULES, 10)
    minute = timedelta(minutes=1)
    assert [(line.rank, line.name, line.wins, line.last_win_at) for line in board.lines] == [
        (1, "Ann", 2, NOW - 3 * hour + minute),
        (1, "Bob", 2, NOW - hour + minute),
    ]


@pytest.mark.asyncio
async def test_recounting_the_wins_from_the_entries_gives_the_counts_kept(
    sessions: Sessions,
) -> None:
    ann, bob, cy = await new_players(sessions, "Ann", "Bob", "Cy")
    rng = random.Random(5)
    for number in range(30):
        players = rng.sample([ann, bob, cy], rng.randint(1, 3))
        await finished_race(
            sessions,
            NOW - timedelta(minutes=rng.randint(0, 10_000)),
            *[
                Result(player, rng.choice(["won", "lost"]), 1_000 * (number + place), 30)
                for place, player in enumerate(players)
            ],
            rule_set=rng.choice([RULES, "octagon"]),
        )
    kept = await stored_wins(sessions)
    assert len(kept) >= 4
    await recount_wins(sessions)
    assert await stored_wins(sessions) == kept


async def _upgrade(url: str, revision: str) -> None:
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    await asyncio.to_thread(command.upgrade, config, revision)


async def players_before_0012(
    sessions: Sessions, *names: str, made_at: datetime = ESTABLISHED
) -> list[str]:
    """Players stored as the revisions before 0012 stored them: the columns they had, no bot
    mark."""
    ids = [new_id() for _ in names]
    async with sessions.begin() as session:
        await session.execute(
            insert(PlayerRow.__table__),
            [
                {"id": player_id, "name": name, "token_hash": player_id, "created_at": made_at}
                for player_id, name in zip(ids, names, strict=True)
            ],
        )
    return ids


async def race_before_0004(
    sessions: Sessions,
    host_id: str,
    *,
    rule_set: str = RULES,
    seed: int = 7,
    deal_kind: DealKind = "number",
) -> str:
    """A race stored as the revisions before 0004 stored one: the columns they had, no rules."""
    race_id = new_id()
    async with sessions.begin() as session:
        await session.execute(
            insert(RaceRow.__table__).values(
                id=race_id,
                code="OLD00001",
                rule_set=rule_set,
                deal_kind=deal_kind,
                seed=seed,
                algorithm=1,
                commitment=commitment(seed),
                seats_max=4,
                host_id=host_id,
                created_at=NOW,
            )
        )
    return race_id


@pytest.mark.asyncio
async def test_migration_0003_counts_the_wins_already_stored(empty_database_url: str) -> None:
    """Results stored before player_wins existed: the upgrade counts them, and the board is
    the one the entries give (ties share a rank, the first to get there first)."""
    await _upgrade(empty_database_url, "0002")
    engine = make_engine(empty_database_url)
    try:
        sessions = make_sessionmaker(engine)
        players = await players_before_0012(sessions, *[f"P{number}" for number in range(8)])
        rng = random.Random(11)
        for _ in range(60):
            rule_set = rng.choice([RULES, "octagon"])
            racers = rng.sample(players, rng.randint(1, 3))
            started = NOW - timedelta(minutes=rng.randint(0, 3) * 60)  # ties in the last win
            # Secret deals: their wins are counted again by 0005 (a chosen deal's are not).
            race_id = await race_before_0004(
                sessions, racers[0], rule_set=rule_set, deal_kind="secret"
            )
            async with sessions.begin() as session:  # record_results needs player_wins
                await session.execute(
                    insert(EntryRow.__table__),
                    [
                        {
                            "race_id": race_id,
                            "player_id": player,
                            "rule_set": rule_set,
                            "seed": 7,
                            "status": rng.choice(["won", "won", "lost"]),
                            "rank": place,
                            "on_foundations": 0,
                            "moves": 0,
                            "time_ms": 60_000,
                            "finished_at": started + timedelta(minutes=1),
                            "ended_at": started + timedelta(minutes=1),
                        }
                        for place, player in enumerate(racers, start=1)
                    ],
                )
        async with sessions.begin() as session:
            won = (
                await session.execute(
                    select(EntryRow.rule_set, EntryRow.player_id, EntryRow.finished_at).where(
                        EntryRow.status == "won"
                    )
                )
            ).all()
        await _upgrade(empty_database_url, "head")

        for rule_set in (RULES, "octagon"):
            wins: dict[str, list[datetime]] = {}
            for line_rule_set, player, finished_at in won:
                if line_rule_set == rule_set:
                    assert finished_at is not None
                    wins.setdefault(player, []).append(finished_at)
            expected = sorted(((-len(times), max(times), player) for player, times in wins.items()))
            ranks = [1 + sum(other[0] < key[0] for other in expected) for key in expected]
            board = await most_wins(sessions, rule_set, 100)
            assert [
                (line.rank, line.player_id, line.wins, line.last_win_at) for line in board.lines
            ] == [
                (rank, player, -minus, last)
                for rank, (minus, last, player) in zip(ranks, expected, strict=True)
            ]
            assert len({line.wins for line in board.lines}) < len(board.lines)  # ties
            middle = expected[len(expected) // 2][2]
            around = await most_wins(sessions, rule_set, 3, around=middle)
            assert around.me is not None and around.me.player_id == middle
            shown = {line.player_id for line in around.lines}
            assert around.lines == [line for line in board.lines if line.player_id in shown]
    finally:
        await engine.dispose()


@pytest.mark.asyncio
async def test_a_deal_board_ranks_everyone_on_that_deal_as_a_race_does(sessions: Sessions) -> None:
    ann, bob, cy, di, ed, fay = await new_players(sessions, "Ann", "Bob", "Cy", "Di", "Ed", "Fay")
    seed = 2**63 + 5
    await finished_race(
        sessions,
        NOW - timedelta(days=2),
        Result(ann, "won", 80_000),
        Result(bob, "resigned", 90_000, 30, 50_000),
        Result(cy, "timed_out", 95_000, 30, 60_000),
        seed=seed,
    )
    await finished_race(
        sessions,
        NOW - timedelta(days=1),
        Result(di, "won", 70_000),
        Result(ed, "lost", 80_000, 40, 70_000),
        Result(fay, "abandoned", 85_000, 30, 50_000),
        seed=seed,
    )
    await finished_race(sessions, NOW, Result(fay, "won", 1_000), seed=seed - 1)
    await finished_race(sessions, NOW, Result(fay, "won", 1_000), seed=seed, rule_set="octagon")
    unfinished = await new_race(sessions, ann, seed=seed)
    await record_start(sessions, unfinished, NOW, [ann])

    board = await deal_board(sessions, RULES, seed, 10)
    assert [(line.rank, line.name, line.status) for line in board.lines] == [
        (1, "Di", "won"),
        (2, "Ann", "won"),
        (3, "Ed", "lost"),
        (4, "Bob", "resigned"),
        (4, "Fay", "abandoned"),
        (6, "Cy", "timed_out"),
    ]
    assert {line.seed for line in board.lines} == {seed}
    around = await deal_board(sessions, RULES, seed, 2, around=fay)
    assert [(line.rank, line.name) for line in around.lines] == [(4, "Fay"), (6, "Cy")]
    assert around.me is not None and around.me.name == "Fay"


@pytest.mark.asyncio
async def test_the_daily_board_and_who_has_played_the_daily(sessions: Sessions) -> None:
    ann, bob, cy, di = await new_players(sessions, "Ann", "Bob", "Cy", "Di")
    day = NOW.date()
    morning = datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=8)
    await finished_race(
        sessions, morning, Result(ann, "lost", 300_000, 20, 100_000), seed=4242, daily_day=day
    )
    await finished_race(sessions, morning, Result(bob, "won", 200_000), seed=4242, daily_day=day)
    await finished_race(
        sessions, morning, Result(cy, "won", 100_000), seed=555, daily_day=day, rule_set="octagon"
    )
    await finished_race(
        sessions,
        morning - timedelta(days=1),
        Result(cy, "won", 50_000),
        seed=4141,
        daily_day=day - timedelta(days=1),
    )
    started = await new_race(sessions, di, seed=4242, daily_day=day)
    await record_start(sessions, started, NOW, [di])

    board = await daily_board(sessions, RULES, day, 10, NOW)
    assert [(line.rank, line.name, line.status) for line in board.lines] == [
        (1, "Bob", "won"),
        (2, "Ann", "lost"),
    ]
    assert [line.seed for line in board.lines] == [None, None]
    tomorrow = await daily_board(sessions, RULES, day, 10, NOW + timedelta(days=1))
    assert [line.seed for line in tomorrow.lines] == [4242, 4242]
    yesterday = await daily_board(sessions, RULES, day - timedelta(days=1), 10, NOW)
    assert [(line.name, line.seed) for line in yesterday.lines] == [("Cy", 4141)]
    fastest = await fastest_wins(sessions, RULES, "all", 10, NOW)
    assert [(line.name, line.seed) for line in fastest.lines] == [("Cy", 4141), ("Bob", None)]

    assert await has_played_daily(sessions, ann, RULES, day)
    assert await has_played_daily(sessions, di, RULES, day)
    assert not await has_played_daily(sessions, cy, RULES, day)
    assert await has_played_daily(sessions, cy, "octagon", day)
    assert not await has_played_daily(sessions, ann, RULES, day + timedelta(days=1))


@pytest.mark.asyncio
async def test_a_daily_deal_is_played_once_per_player_and_day_held_by_the_database(
    sessions: Sessions,
) -> None:
    ann, bob, cy = await new_players(sessions, "Ann", "Bob", "Cy")
    day = NOW.date()
    plays = await asyncio.gather(*(daily_race(sessions, ann, RULES, day) for _ in range(8)))
    assert sorted(play is not None for play in plays) == [False] * 7 + [True]
    async with sessions() as session:  # no race without its claim, nor a claim without its race
        daily_races = await session.scalar(
            select(func.count())
            .select_from(RaceRow)
            .where(RaceRow.host_id == ann, RaceRow.daily_day == day)
        )
    assert daily_races == 1
    assert await daily_race(sessions, ann, RULES, day) is None
    assert await daily_race(sessions, bob, RULES, day) is not None
    assert await daily_race(sessions, ann, "octagon", day) is not None
    assert await daily_race(sessions, ann, RULES, day + timedelta(days=1)) is not None
    assert await has_played_daily(sessions, ann, RULES, day)
    assert not await has_played_daily(sessions, cy, RULES, day)
    # Whoever writes, the database refuses a second play: the rule is its primary key.
    with pytest.raises(IntegrityError):
        async with sessions.begin() as session:
            await session.execute(
                insert(DailyPlayRow.__table__).values(rule_set=RULES, day=day, player_id=ann)
            )
    # A retried write of a daily race that had committed finds its race, and is not refused.
    race_id = new_id()
    first = await daily_race(sessions, cy, RULES, day, race_id)
    again = await daily_race(sessions, cy, RULES, day, race_id)
    assert first is not None and again is not None and again.id == first.id


async def daily_race(
    sessions: Sessions, host_id: str, rule_set: str, day: date, race_id: str | None = None
) -> RaceRow | None:
    return await create_race(
        sessions,
        race_id=race_id or new_id(),
        code="DAILY1",
        rule_set=rule_set,
        deal_kind="daily",
        seed=1,
        algorithm=1,
        rules=RULES_VERSION,
        host_id=host_id,
        seats_max=1,
        time_limit_s=None,
        daily_day=day,
    )


@pytest.mark.asyncio
async def test_a_chosen_deal_is_practice_counted_only_on_its_deal_board(sessions: Sessions) -> None:
    """Anyone can compute a chosen deal's face-down cards, and its host knows the deal
    beforehand: its wins are on that deal's board, but not on the fastest or most wins boards
    (nor in the counts kept for the latter). A secret deal's wins are on all three."""
    ann, bob = await new_players(sessions, "Ann", "Bob")
    hour = timedelta(hours=1)
    await finished_race(
        sessions,
        NOW - hour,
        Result(ann, "won", 30_000),
        Result(bob, "lost", 40_000, 20),
        seed=5,
        deal_kind="number",
    )
    await finished_race(sessions, NOW - 2 * hour, Result(bob, "won", 60_000), seed=5)
    for period in ("today", "week", "all"):
        board = await fastest_wins(sessions, RULES, period, 10, NOW, around=ann)
        assert ranked(board) == [(1, "Bob", 60_000)] and board.me is None, period
    wins = await most_wins(sessions, RULES, 10, around=ann)
    assert [(line.name, line.wins) for line in wins.lines] == [("Bob", 1)] and wins.me is None
    kept = await stored_wins(sessions)
    await recount_wins(sessions)
    assert await stored_wins(sessions) == kept
    deal = await deal_board(sessions, RULES, 5, 10, around=ann)
    assert [(line.rank, line.name, line.status) for line in deal.lines] == [
        (1, "Ann", "won"),
        (2, "Bob", "won"),
        (3, "Bob", "lost"),
    ]
    assert deal.me is not None and deal.me.name == "Ann"


@pytest.mark.asyncio
async def test_a_days_daily_deal_ranks_only_identities_made_before_that_day(
    sessions: Sessions,
) -> None:
    """Scouting: an identity made on the day plays the daily deal (its result is stored and
    on the deal's own board once revealed) but is not ranked on that day's daily board, nor
    on the fastest and most wins boards. From the next day on it is an older identity."""
    day = NOW.date()
    midnight = datetime.combine(day, datetime.min.time(), UTC)
    (old,) = await new_players(sessions, "Old", made_at=midnight - timedelta(microseconds=1))
    (new,) = await new_players(sessions, "New", made_at=midnight)
    morning = midnight + timedelta(hours=8)
    await finished_race(sessions, morning, Result(new, "won", 100_000), seed=4242, daily_day=day)
    await finished_race(sessions, morning, Result(old, "won", 200_000), seed=4242, daily_day=day)

    daily = await daily_board(sessions, RULES, day, 10, NOW, around=new)
    assert [(line.rank, line.name) for line in daily.lines] == [(1, "Old")]
    assert daily.me is None
    fastest = await fastest_wins(sessions, RULES, "all", 10, NOW, around=new)
    assert ranked(fastest) == [(1, "Old", 200_000)] and fastest.me is None
    wins = await most_wins(sessions, RULES, 10)
    assert [(line.name, line.wins) for line in wins.lines] == [("Old", 1)]
    later = NOW + timedelta(days=1)
    deal = await deal_board(sessions, RULES, 4242, 10)
    assert [line.name for line in deal.lines] == ["New", "Old"]

    await finished_race(
        sessions,
        morning + timedelta(days=1),
        Result(new, "won", 90_000),
        seed=4343,
        daily_day=day + timedelta(days=1),
    )
    tomorrow = await daily_board(sessions, RULES, day + timedelta(days=1), 10, later)
    assert [(line.rank, line.name) for line in tomorrow.lines] == [(1, "New")]
    assert ranked(await fastest_wins(sessions, RULES, "all", 10, later)) == [
        (1, "New", 90_000),
        (2, "Old", 200_000),
    ]
    assert [(line.name, line.wins) for line in (await most_wins(sessions, RULES, 10)).lines] == [
        ("Old", 1),
        ("New", 1),
    ]


async def result_before_0005(
    sessions: Sessions,
    player: str,
    *,
    deal_kind: DealKind,
    created_at: datetime,
    status: str = "won",
    time_ms: int = 60_000,
    seed: int = 7,
    daily_day: date | None = None,
) -> str:
    """A finished race of one racer, stored as the revisions before 0005 stored one."""
    race_id = new_id()
    started = created_at + timedelta(seconds=5)
    finished = started + timedelta(milliseconds=time_ms)
    async with sessions.begin() as session:
        await session.execute(
            insert(RaceRow.__table__).values(
                id=race_id,
                code="OLD00005",
                rule_set=RULES,
                deal_kind=deal_kind,
                seed=seed,
                algorithm=1,
                rules=RULES_VERSION,
                commitment=commitment(seed),
                daily_day=daily_day,
                seats_max=1,
                host_id=player,
                created_at=created_at,
                started_at=started,
                ended_at=finished,
            )
        )
        await session.execute(
            insert(EntryRow.__table__).values(
                race_id=race_id,
                player_id=player,
                status=status,
                rank=1,
                time_ms=time_ms,
                on_foundations=52 if status == "won" else 20,
                reached_at_ms=time_ms,
                moves=10,
                finished_at=finished,
                rule_set=RULES,
                seed=seed,
                daily_day=daily_day,
                ended_at=finished,
            )
        )
    return race_id


@pytest.mark.asyncio
async def test_migration_0005_keeps_the_first_daily_play_and_recounts_the_wins(
    empty_database_url: str,
) -> None:
    """Stored before 0005: four plays of one daily deal by one player (as simultaneous
    requests could open them), a daily deal played by an identity made that day, and wins on
    chosen and secret deals, all counted in player_wins. After the upgrade: one daily play
    per player, the first; the daily board lists that first play only, and not the new
    identity; the fastest and most wins boards have no chosen-deal win nor unranked daily."""
    await _upgrade(empty_database_url, "0004")
    engine = make_engine(empty_database_url)
    try:
        sessions = make_sessionmaker(engine)
        day = NOW.date()
        midnight = datetime.combine(day, datetime.min.time(), UTC)
        ann, bob = await players_before_0012(sessions, "Ann", "Bob")
        (cy,) = await players_before_0012(sessions, "Cy", made_at=midnight + timedelta(hours=1))
        morning = midnight + timedelta(hours=8)
        minute = timedelta(minutes=1)
        # Ann's plays of the day's deal: the first one made is the slowest.
        for number, time_ms in enumerate([300_000, 100_000, 120_000, 150_000]):
            await result_before_0005(
                sessions,
                ann,
                deal_kind="daily",
                daily_day=day,
                created_at=morning + number * minute,
                time_ms=time_ms,
            )
        await result_before_0005(
            sessions, cy, deal_kind="daily", daily_day=day, created_at=morning, time_ms=50_000
        )
        await result_before_0005(
            sessions, bob, deal_kind="number", seed=5, created_at=morning, time_ms=10_000
        )
        await result_before_0005(
            sessions,
            ann,
            deal_kind="number",
            seed=5,
            created_at=morning,
            status="lost",
            time_ms=20_000,
        )
        await result_before_0005(
            sessions,
            bob,
            deal_kind="secret",
            seed=99,
            created_at=morning - timedelta(days=1),
            time_ms=200_000,
        )
        async with sessions.begin() as session:
            await session.execute(
                text(
                    "INSERT INTO player_wins (rule_set, player_id, wins, last_win_at) "
                    "SELECT rule_set, player_id, count(*), max(finished_at) FROM entries "
                    "WHERE status = 'won' GROUP BY rule_set, player_id"
                )
            )
        await _upgrade(empty_database_url, "head")

        async with sessions.begin() as session:
            plays = (
                await session.execute(text("SELECT rule_set, day, player_id FROM daily_plays"))
            ).all()
        assert sorted((rule_set, str(on), player) for rule_set, on, player in plays) == sorted(
            [(RULES, day.isoformat(), ann), (RULES, day.isoformat(), cy)]
        )
        assert await has_played_daily(sessions, ann, RULES, day)
        assert not await has_played_daily(sessions, bob, RULES, day)

        daily = await daily_board(sessions, RULES, day, 10, NOW)
        assert ranked(daily) == [(1, "Ann", 300_000)]
        assert ranked(await fastest_wins(sessions, RULES, "all", 10, NOW)) == [
            (1, "Bob", 200_000),
            (2, "Ann", 300_000),
        ]
        assert [
            (line.rank, line.name, line.wins)
            for line in (await most_wins(sessions, RULES, 10)).lines
        ] == [(1, "Bob", 1), (1, "Ann", 1)]
        assert [
            (line.name, line.status) for line in (await deal_board(sessions, RULES, 5, 10)).lines
        ] == [("Bob", "won"), ("Ann", "lost")]
    finally:
        await engine.dispose()


def test_db_upgrade_command_migrates_the_configured_database(tmp_path: Path) -> None:
    """`patience-race db upgrade --database-url URL` as a person runs it."""
    path = tmp_path / "upgrade.sqlite3"
    result = subprocess.run(
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
    )
    assert result.returncode == 0, result.stderr
    assert "latest migration" in result.stdout
    with sqlite3.connect(path) as connection:
        tables = {
            row[0]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
    assert {"players", "races", "entries", "moves", "daily_deals"} <= tables


@dataclass
class FirstMove(Player):
    """Always the first legal move: in Hidden Cards, the reserve taken as reserve:1, 2, 3, 4."""

    def choose(self, legal_moves: Sequence[Move], home: int) -> Move:
        return legal_moves[0]


@pytest.mark.asyncio
async def test_migration_0004_a_race_stored_before_rules_version_2_verifies_as_it_was(
    empty_database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Hidden Cards seed 10 was lost, 50 home, under rules version 1, and is won under version
    2. A race stored before the change is version 1 after the upgrade: its record replays, and
    ``patience-race verify`` agrees, with the outcome it had."""
    await _upgrade(empty_database_url, "0003")
    engine = make_engine(empty_database_url)
    try:
        sessions = make_sessionmaker(engine)
        (ann,) = await players_before_0012(sessions, "Ann")
        race_id = await race_before_0004(sessions, ann, rule_set="hidden-cards", seed=10)
        await _upgrade(empty_database_url, "head")
        async with sessions.begin() as session:
            stored = await session.get(RaceRow, race_id)
            assert stored is not None and stored.rules == 1
        race = Race(
            RaceTerms(
                race_id=race_id,
                code="OLD00001",
                rule_set="hidden-cards",
                seed=10,
                algorithm=1,
                rules=stored.rules,
                deal_kind="number",
                seats_max=4,
                time_limit_s=None,
            ),
            host_id=ann,
            host_name="Ann",
        )
        await play_and_store(sessions, race, {ann: FirstMove(random.Random(0))}, unix(NOW))

        record = await race_record(sessions, race_id, NOW + timedelta(days=1))
        assert record is not None and record["rules"] == 1
        assert record["results"][0]["status"] == "lost"
        assert record["results"][0]["on_foundations"] == 50
        log = record["logs"][ann]
        assert log["rules"] == 1 and log["outcome"] == "lost" and len(log["moves"]) == 54
        assert verify_race("old.json", record) == 0
        assert "54 moves replayed, lost, 50 home; announced lost, 50 home: agrees" in (
            capsys.readouterr().out
        )
        with pytest.raises(ReplayError, match="move 54 .* the game is over \\(won"):
            replay(MoveLog.from_json({**log, "rules": 2}))  # won a move earlier under version 2
    finally:
        await engine.dispose()


async def has_played_daily(sessions: Sessions, player_id: str, rule_set: str, day: date) -> bool:
    """Whether the player has claimed that day's daily deal (``claim_daily``)."""
    async with sessions.begin() as session:
        return await session.get(DailyPlayRow, (rule_set, day, player_id)) is not None
