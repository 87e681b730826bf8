"""Leaderboards and persistence at scale: a million stored results on SQLite and PostgreSQL.

    python bench/leaderboard_bench.py [--results 1000000 | --quick] [--calls 200]
                                      [--databases sqlite,postgresql] [--postgres URL]
                                      [--sqlite-path FILE] [--keep] [--explain]
    python bench/leaderboard_bench.py --results 10000000 --databases postgresql --server-side --keep
    python bench/leaderboard_bench.py --results 10000000 --databases sqlite --sqlite-copy-of URL

For each database: a fresh one, migrated with ``alembic upgrade head`` (so it has exactly the
server's tables and indexes), is filled with ``--results`` entries rows (one racer's result in
one race; ~1 player per 20 results, races of 1 to 4 racers with matching ``players`` and
``races`` rows, the seven rule sets at different popularities and win rates, secret, numbered
and daily deals (the numbered ones not ranked, as the server stores them: see
``server.storage.races.ranked``), finish times over the last 60 days), by COPY on PostgreSQL and by
``executemany`` in large transactions on SQLite. The data is the same on both (seeded). The
entries are loaded directly, not through ``record_results``, so the win counts of the most wins
board (``player_wins``) are then made from them by ``server.storage.results.recount_wins``,
the statement migration 0005 fills the table with. PostgreSQL is then ``VACUUM ANALYZE``d, as
autovacuum would after such a load; SQLite is left as the server leaves it (no ``ANALYZE``).

Then, through the real store functions (``server.storage``) on the server's own engine
(``server.storage.engine.make_engine``), each leaderboard query is timed ``--calls`` times after a
warm-up, taking the rule sets in turn, and its p50/p99 reported: fastest wins (today, this week, all
time, and today just after midnight, when no win is in yet and the whole rule set is looked
through), most wins, the most played numbered deal's board and the biggest daily board, top 100
and around a player in the middle of the board. "Board lines" is the size of the largest such
board over the rule sets. Then the writes the server makes are timed: ``record_start`` +
``record_results`` for whole races of two, and ``record_moves`` in batches of 1, 10 and 100
moves (what ``server.storage.writer`` commits at once), one transaction after another as the writer
does. The machine's load average is printed with the settings: other work on the machine shows
in the p99s.

PostgreSQL is used when ``--postgres`` names a server where the user may create databases, else
``PATIENCE_RACE_TEST_POSTGRES_URL``, else ``postgresql://postgres@127.0.0.1/test`` if it answers;
the bench database (``patience_race_bench_*``) is dropped at the end unless ``--keep``.
At ten million results PostgreSQL makes its rows itself (``--server-side``: the same shape,
not the same rows), and ``--sqlite-copy-of`` fills SQLite with a kept PostgreSQL bench
database's rows, so that both hold the same ten million.
``--explain`` prints each query's plan (EXPLAIN ANALYZE, EXPLAIN QUERY PLAN). Progress goes to
stderr; the tables to stdout, in Markdown.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import math
import os
import platform
import random
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from itertools import accumulate
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import asyncpg  # type: ignore[import-untyped]  # noqa: E402
import sqlalchemy  # noqa: E402
from sqlalchemy import Select, Table, event, func, make_url, select, text, true  # noqa: E402
from sqlalchemy.engine import Dialect  # noqa: E402
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine  # noqa: E402

from engine.deal import DEAL_ALGORITHM  # noqa: E402
from engine.game import RULES_VERSION  # noqa: E402
from engine.registry import RULE_SET_NAMES  # noqa: E402
from server.cluster.rank_cache import RedisRanks  # noqa: E402
from server.settings import async_url  # noqa: E402
from server.storage import board_statements, leaderboards, ranks, results
from server.storage.engine import (  # noqa: E402
    Sessions,
    make_engine,
    make_sessionmaker,
    upgrade_database,
)
from server.storage.models import Base, EntryRow, PlayerRow, PlayerWinsRow  # noqa: E402
from server.storage.players import new_id  # noqa: E402
from server.storage.races import (  # noqa: E402
    AcceptedMove,
    create_race,
    record_moves,
    record_start,
    utc_day,
)
from wire.commitment import commitment  # noqa: E402
from wire.protocol import RankEntry  # noqa: E402

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1/test"
POSTGRES_VARIABLE = "PATIENCE_RACE_TEST_POSTGRES_URL"
QUICK_RESULTS = 20_000
QUICK_CALLS = 50
RESULTS_PER_PLAYER = 20
DAYS = 60
LIMIT = 100
TARGET_P99_MS = 10.0
CHUNK_RACES = 20_000
MOVE_BATCHES = (1, 10, 100)

# Per rule set, in registry order: share of the races, a winner's median time in seconds, and
# the chance that a racer wins. Invented, plausible for people: they only shape the boards'
# sizes (the engine's simple players win far less, see bench/engine_bench.py).
POPULARITY = (0.22, 0.18, 0.10, 0.12, 0.16, 0.10, 0.12)
MEDIAN_WIN_S = (240, 260, 300, 200, 330, 350, 420)
WIN_RATE = (0.30, 0.45, 0.60, 0.25, 0.50, 0.40, 0.20)
DEAL_KINDS = ("secret", "number", "daily")
DEAL_KIND_SHARE = (0.65, 0.20, 0.15)
SEATS = (1, 2, 3, 4)
SEATS_SHARE = (0.30, 0.45, 0.15, 0.10)
NUMBERED_DEALS = 10_000
"""Chosen deal numbers 1..10,000, Zipf-distributed: deal 1 is the most played."""


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# -- the data ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    results: int
    players: int
    seed: int
    now: datetime


@dataclass
class Chunk:
    """Rows for the tables, in foreign key order: players, races, entries."""

    players: list[dict[str, Any]] = field(default_factory=list)
    races: list[dict[str, Any]] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)


class Generator:
    """Seeded fake history: the same ``Shape`` gives the same rows."""

    def __init__(self, shape: Shape) -> None:
        self.shape = shape
        self.rng = random.Random(shape.seed)
        self.player_ids = [self.new_id() for _ in range(shape.players)]
        # A few players play a lot, most a little: activity falls as 1/sqrt(rank).
        self.player_cum = list(accumulate(1 / math.sqrt(n + 1) for n in range(shape.players)))
        self.rule_cum = list(
            accumulate(POPULARITY[n % len(POPULARITY)] for n in range(len(RULE_SET_NAMES)))
        )
        self.deal_cum = list(accumulate(1 / n for n in range(1, NUMBERED_DEALS + 1)))
        self.daily_seeds: dict[tuple[str, date], int] = {}
        self.dailies_played: set[tuple[str, str, date]] = set()

    def new_id(self) -> str:
        return base64.urlsafe_b64encode(self.rng.getrandbits(96).to_bytes(12, "big")).decode()

    def chunks(self) -> Iterator[Chunk]:
        shape = self.shape
        first = Chunk(
            players=[
                {
                    "id": player_id,
                    "name": f"Player {number}",
                    "token_hash": f"{number:064x}",
                    "created_at": shape.now - timedelta(days=DAYS + 30),
                    "bot": False,
                }
                for number, player_id in enumerate(self.player_ids)
            ]
        )
        chunk, made = first, 0
        while made < shape.results:
            for row in self.race(min(shape.results - made, 4)):
                if "status" in row:
                    chunk.entries.append(row)
                    made += 1
                else:
                    chunk.races.append(row)
            if len(chunk.races) >= CHUNK_RACES:
                yield chunk
                chunk = Chunk()
        yield chunk

    def race(self, seats_left: int) -> list[dict[str, Any]]:
        """A race row then its entries rows."""
        rng, now = self.rng, self.shape.now
        number = rng.choices(range(len(RULE_SET_NAMES)), cum_weights=self.rule_cum)[0]
        rule_set = RULE_SET_NAMES[number]
        kind = rng.choices(DEAL_KINDS, DEAL_KIND_SHARE)[0]
        started = now - timedelta(seconds=rng.uniform(1200, DAYS * 86400))
        day = started.date() if kind == "daily" else None
        seats = 1 if kind == "daily" else min(seats_left, rng.choices(SEATS, SEATS_SHARE)[0])
        players: list[str] = []
        while len(players) < seats:
            player = rng.choices(self.player_ids, cum_weights=self.player_cum)[0]
            if player in players:
                continue
            if day is not None:
                if (player, rule_set, day) in self.dailies_played:
                    continue
                self.dailies_played.add((player, rule_set, day))
            players.append(player)
        if kind == "secret":
            seed = rng.getrandbits(64)
        elif kind == "number":
            seed = rng.choices(range(1, NUMBERED_DEALS + 1), cum_weights=self.deal_cum)[0]
        else:
            assert day is not None
            seed = self.daily_seeds.setdefault((rule_set, day), rng.getrandbits(64))
        results = [self.result(number) for _ in players]
        results.sort(key=lambda r: (r[0] != "won", r[1] if r[0] == "won" else 0, -r[2], r[3]))
        ended = started + timedelta(milliseconds=max(r[1] for r in results))
        race_id = self.new_id()
        common = {"rule_set": rule_set, "seed": seed, "daily_day": day}
        rows: list[dict[str, Any]] = [
            {
                "id": race_id,
                "code": self.new_id()[:8].upper(),
                "deal_kind": kind,
                "algorithm": DEAL_ALGORITHM,
                "rules": RULES_VERSION,
                "commitment": commitment(seed),
                "seats_max": seats,
                "public": False,
                "holder": None,
                "holder_epoch": 0,
                "held_until": None,
                "time_limit_s": None,
                "host_id": players[0],
                "created_at": started - timedelta(seconds=rng.uniform(5, 120)),
                "started_at": started,
                "ended_at": ended,
                **common,
            }
        ]
        for rank, (player, (status, time_ms, home, reached_ms, moves)) in enumerate(
            zip(players, results, strict=True), start=1
        ):
            finished = started + timedelta(milliseconds=time_ms)
            rows.append(
                {
                    "race_id": race_id,
                    "player_id": player,
                    "status": status,
                    "rank": rank,
                    "time_ms": time_ms,
                    "on_foundations": home,
                    "reached_at_ms": reached_ms,
                    "moves": moves,
                    "finished_at": finished,
                    "ended_at": ended,
                    "ranked": kind != "number",
                    "finish_day": finished.date(),
                    "standing": ranks.standing(status, time_ms, home, reached_ms),
                    **common,
                }
            )
        return rows

    def result(self, number: int) -> tuple[str, int, int, int, int]:
        """status, time_ms, cards home, when that count was reached (ms), moves."""
        rng = self.rng
        median_ms = MEDIAN_WIN_S[number % len(MEDIAN_WIN_S)] * 1000
        time_ms = max(15_000, round(rng.lognormvariate(math.log(median_ms), 0.45)))
        if rng.random() < WIN_RATE[number % len(WIN_RATE)]:
            return "won", time_ms, 52, time_ms, rng.randint(52, 220)
        status = "lost" if rng.random() < 0.7 else "resigned"
        home = rng.randint(0, 51)
        return status, time_ms, home, rng.randint(0, time_ms), rng.randint(5, 200)


# -- databases --------------------------------------------------------------------------------


def columns(table: Table) -> list[str]:
    return [column.name for column in table.columns]


def converters(table: Table, dialect: Dialect) -> list[Callable[[Any], Any] | None]:
    """Each column's bind processor for the dialect: the exact values SQLAlchemy would send."""
    return [column.type.dialect_impl(dialect).bind_processor(dialect) for column in table.columns]


def records(rows: list[dict[str, Any]], table: Table, dialect: Dialect) -> list[tuple[Any, ...]]:
    convert = list(zip(columns(table), converters(table, dialect), strict=True))
    return [
        tuple(
            row.get(name) if to is None or row.get(name) is None else to(row[name])
            for name, to in convert
        )
        for row in rows
    ]


TABLES = tuple((name, Base.metadata.tables[name]) for name in ("players", "races", "entries"))
"""The tables the bench fills, in foreign key order."""


@dataclass
class Database:
    kind: str
    """``sqlite`` or ``postgresql``."""
    url: str
    version: str = ""
    load_s: float = 0.0
    size_bytes: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    cache_rebuild: tuple[int, float] | None = None
    """With Redis: the lines the rank cache was rebuilt with, and the seconds it took."""


def sqlite_size(path: str) -> int:
    """Bytes of a SQLite database: its file and its write-ahead log."""
    return sum(os.path.getsize(part) for part in (path, f"{path}-wal") if os.path.exists(part))


async def load_sqlite(database: Database, generator: Generator) -> None:
    path = make_url(database.url).database
    assert path is not None
    dialect = make_engine(database.url).dialect
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA synchronous = OFF")  # this connection only: loading
    started, done = time.perf_counter(), 0
    try:
        for chunk in generator.chunks():
            with connection:
                for name, table in TABLES:
                    rows = records(getattr(chunk, name), table, dialect)
                    if rows:
                        marks = ", ".join("?" for _ in table.columns)
                        connection.executemany(
                            f"INSERT INTO {name} ({', '.join(columns(table))}) VALUES ({marks})",
                            rows,
                        )
                    database.counts[name] = database.counts.get(name, 0) + len(rows)
            done = progress(database, done, generator.shape.results, started)
        database.version = sqlite3.sqlite_version
    finally:
        connection.close()
    await recount_wins(database)
    database.load_s = time.perf_counter() - started
    database.size_bytes = sqlite_size(path)


COPY_ROWS = 50_000
"""Rows read from PostgreSQL and written to SQLite at a time by ``load_sqlite_copy``."""


async def load_sqlite_copy(database: Database, source_url: str) -> None:
    """The rows of a PostgreSQL bench database (one ``--server-side --keep`` made) copied into
    SQLite, so that both databases hold the same ten million results: the Python generator
    fills SQLite at ~2,000 results a second (80 minutes for ten million). The indexes are made
    after the rows, each in one sort, as PostgreSQL's were."""
    path = make_url(database.url).database
    assert path is not None
    dialect = make_engine(database.url).dialect
    target = sqlite3.connect(path)
    target.execute("PRAGMA synchronous = OFF")  # this connection only: loading
    source = create_async_engine(source_url)  # rows read as the server's types make them
    started = time.perf_counter()
    try:
        names = ", ".join(f"'{name}'" for name, _ in TABLES)
        indexes = target.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND "
            f"sql IS NOT NULL AND tbl_name IN ({names})"
        ).fetchall()
        for name, _ in indexes:
            target.execute(f'DROP INDEX "{name}"')
        for name, table in TABLES:
            marks = ", ".join("?" for _ in table.columns)
            insert = f"INSERT INTO {name} ({', '.join(columns(table))}) VALUES ({marks})"
            database.counts[name] = 0
            async with source.connect() as connection:
                total = await connection.scalar(select(func.count()).select_from(table)) or 0
                result = await connection.stream(
                    select(table).execution_options(yield_per=COPY_ROWS)
                )
                async for rows in result.mappings().partitions(COPY_ROWS):
                    with target:
                        target.executemany(
                            insert, records([dict(row) for row in rows], table, dialect)
                        )
                    before = database.counts[name]
                    database.counts[name] += len(rows)
                    if name == "entries":
                        progress(database, before, total, started)
        for name, sql in indexes:
            log(f"{database.kind}: {name}")
            with target:
                target.execute(sql)
        database.version = sqlite3.sqlite_version
    finally:
        target.close()
        await source.dispose()
    await recount_wins(database)
    database.load_s = time.perf_counter() - started
    database.size_bytes = sqlite_size(path)


def asyncpg_dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def settle_postgres(database: Database, connection: Any) -> None:
    """After a PostgreSQL load: the win counts made from the entries, ``VACUUM ANALYZE`` (as
    autovacuum would after such a load), and the server's version and the database's size."""
    await recount_wins(database)
    log(f"{database.kind}: VACUUM ANALYZE")
    await connection.execute("VACUUM ANALYZE")
    database.version = str(await connection.fetchval("SHOW server_version"))
    database.size_bytes = int(
        await connection.fetchval("SELECT pg_database_size(current_database())")
    )


async def load_postgresql(database: Database, generator: Generator) -> None:
    dialect = make_engine(database.url).dialect
    connection = await asyncpg.connect(asyncpg_dsn(database.url))
    started, done = time.perf_counter(), 0
    try:
        for chunk in generator.chunks():
            async with connection.transaction():
                for name, table in TABLES:
                    rows = records(getattr(chunk, name), table, dialect)
                    if rows:
                        await connection.copy_records_to_table(
                            name, records=rows, columns=columns(table)
                        )
                    database.counts[name] = database.counts.get(name, 0) + len(rows)
            done = progress(database, done, generator.shape.results, started)
        await settle_postgres(database, connection)
    finally:
        await connection.close()
    database.load_s = time.perf_counter() - started


SERIES_RACES = 250_000
"""Races made per statement by ``load_postgresql_series``."""


def weighted(u: str, values: Sequence[Any], weights: Sequence[float]) -> str:
    """SQL choosing one of ``values`` by a uniform ``u`` in [0, 1), with these weights."""
    total, edge, cases = sum(weights), 0.0, []
    for value, weight in zip(values, weights, strict=True):
        edge += weight / total
        cases.append(f"WHEN {u} < {edge!r} THEN {value}")
    return f"CASE {' '.join(cases[:-1])} ELSE {values[-1]} END"


def by_rule_set(values: Sequence[Any]) -> str:
    """SQL giving each rule set its value from a per-rule-set table (in registry order)."""
    cases = " ".join(
        f"WHEN '{name}' THEN {values[number % len(values)]}"
        for number, name in enumerate(RULE_SET_NAMES)
    )
    return f"CASE rule_set {cases} END"


async def load_postgresql_series(database: Database, shape: Shape) -> None:
    """Rows made by PostgreSQL itself from ``generate_series`` and ``random()``, for ten
    million results (``--server-side``): the Python generator and COPY make ~8,000 rows a
    second. The same shape (rule set popularity, win rates, median times, deal kinds, seats,
    a few players playing much more), not the same rows; races of a daily deal are not kept to
    one per player and day."""
    connection = await asyncpg.connect(asyncpg_dsn(database.url))
    started, players = time.perf_counter(), shape.players
    rules = weighted(
        "u_rule",
        [f"'{name}'" for name in RULE_SET_NAMES],
        [POPULARITY[n % len(POPULARITY)] for n in range(len(RULE_SET_NAMES))],
    )
    kinds = weighted("u_kind", [f"'{kind}'" for kind in DEAL_KINDS], DEAL_KIND_SHARE)
    seats = weighted("u_seats", SEATS, SEATS_SHARE)
    try:
        # Indexes are made after the rows, each in one sort: kept up row by row, the load ran
        # at 4,000 rows a second.
        indexes = await connection.fetch(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND "
            "tablename IN ('entries', 'races', 'players') AND indexname NOT LIKE 'pk_%'"
        )
        for index in indexes:
            await connection.execute(f'DROP INDEX "{index["indexname"]}"')
        await connection.execute("SET synchronous_commit = off")
        await connection.execute("SET maintenance_work_mem = '512MB'")
        await connection.execute(f"SELECT setseed({1 / (shape.seed + 1)!r})")
        await connection.execute(f"""
            INSERT INTO players (id, name, token_hash, created_at)
            SELECT 'p' || n, 'Player ' || n, md5(n::text) || md5((-n)::text),
                   now() - interval '{DAYS + 30} days'
            FROM generate_series(0, {players - 1}) AS n""")
        database.counts["players"] = players
        database.counts["races"] = database.counts["entries"] = 0
        first = 0
        while database.counts["entries"] < shape.results:
            races = min(SERIES_RACES, max(1000, (shape.results - database.counts["entries"]) // 2))
            async with connection.transaction():
                await connection.execute(f"""
                    CREATE TEMP TABLE g ON COMMIT DROP AS
                    SELECT n, rule_set, kind, started, base,
                        CASE WHEN kind = 'daily' THEN 1 ELSE seats END AS seats,
                        lpad((CASE kind WHEN 'secret' THEN floor(u_seed * 1e18)
                            WHEN 'number' THEN floor(exp(u_seed * ln({NUMBERED_DEALS})))
                            ELSE abs(hashtext(rule_set || (started::date)::text)) END
                            )::bigint::text, 20, '0') AS seed,
                        CASE WHEN kind = 'daily'
                            THEN (started AT TIME ZONE 'UTC')::date END AS daily_day
                    FROM (SELECT n, {rules} AS rule_set, {kinds} AS kind, {seats} AS seats,
                            now() - make_interval(secs => 1200 + u_start * {DAYS * 86400})
                                AS started,
                            floor({players} * u_player * u_player)::int AS base, u_seed
                        FROM (SELECT n, random() AS u_rule, random() AS u_kind,
                                random() AS u_seats, random() AS u_start,
                                random() AS u_player, random() AS u_seed
                            FROM generate_series({first}, {first + races - 1}) AS n
                        ) AS u) AS r""")
                await connection.execute(f"""
                    INSERT INTO races (id, code, rule_set, deal_kind, seed, algorithm, rules,
                        commitment, daily_day, seats_max, host_id, created_at, started_at,
                        ended_at)
                    SELECT 'r' || n, upper(substr(md5(n::text), 1, 8)), rule_set, kind, seed,
                        {DEAL_ALGORITHM}, {RULES_VERSION}, md5(seed) || md5(seed || '.'),
                        daily_day, seats, 'p' || ((base + 7919) % {players}),
                        started - interval '1 minute', started, started + interval '2 hours'
                    FROM g""")
                made = await connection.execute(f"""
                    INSERT INTO entries (race_id, player_id, status, rank, time_ms,
                        on_foundations, reached_at_ms, moves, finished_at, rule_set, seed,
                        daily_day, ended_at, ranked, standing, finish_day)
                    SELECT race_id, player_id, status, rank, time_ms, on_foundations,
                        reached_at_ms, moves, finished_at, rule_set, seed, daily_day, ended_at,
                        ranked, {ranks.STANDING_SQL}, (finished_at AT TIME ZONE 'UTC')::date
                    FROM (SELECT race_id, player_id, status, rank, time_ms, moves, rule_set,
                            seed, daily_day, ended_at, ranked,
                            CASE WHEN status = 'won' THEN 52 ELSE floor(u_home * 52)::int END
                                AS on_foundations,
                            CASE WHEN status = 'won' THEN time_ms
                                ELSE floor(u_home * time_ms)::int END AS reached_at_ms,
                            started + time_ms * interval '1 millisecond' AS finished_at
                        FROM (SELECT 'r' || n AS race_id,
                                'p' || ((base + seat * 7919) % {players}) AS player_id,
                                CASE WHEN u_win < {by_rule_set(WIN_RATE)} THEN 'won'
                                    WHEN u_home < 0.7 THEN 'lost' ELSE 'resigned' END AS status,
                                seat AS rank, 5 + floor(u_home * 200)::int AS moves,
                                greatest(15000, round({by_rule_set(MEDIAN_WIN_S)} * 1000 *
                                    exp(0.45 * sqrt(-2 * ln(1 - u_t1)) * cos(2 * pi() * u_t2))
                                ))::int AS time_ms,
                                rule_set, seed, daily_day, started,
                                started + interval '2 hours' AS ended_at,
                                kind <> 'number' AS ranked, u_home
                            FROM (SELECT g.*, seat, random() AS u_win, random() AS u_home,
                                    random() AS u_t1, random() AS u_t2
                                FROM g CROSS JOIN LATERAL generate_series(1, g.seats) AS seat
                            ) AS s) AS t) AS e""")
                database.counts["entries"] += int(made.split()[-1])
                database.counts["races"] += races
            first += races
            progress(database, database.counts["entries"] - races, shape.results, started)
        for index in indexes:
            log(f"{database.kind}: {index['indexname']}")
            await connection.execute(index["indexdef"])
        await settle_postgres(database, connection)
    finally:
        await connection.close()
    database.load_s = time.perf_counter() - started


async def describe_loaded(database: Database) -> None:
    """The rows, version and size of a database an earlier run loaded (``--reuse``): its
    queries timed again without loading it again (no load time to report)."""
    engine = create_async_engine(database.url)
    try:
        async with engine.connect() as connection:
            for name, table in (*TABLES, ("player_wins", PlayerWinsRow.__table__)):
                database.counts[name] = (
                    await connection.scalar(select(func.count()).select_from(table)) or 0
                )
            if database.kind == "postgresql":
                database.version = str(await connection.scalar(text("SHOW server_version")))
                database.size_bytes = int(
                    await connection.scalar(text("SELECT pg_database_size(current_database())"))
                    or 0
                )
    finally:
        await engine.dispose()
    if database.kind == "sqlite":
        path = make_url(database.url).database
        assert path is not None
        database.version = sqlite3.sqlite_version
        database.size_bytes = sqlite_size(path)
    database.load_s = math.nan


async def recount_wins(database: Database) -> None:
    """Fill ``player_wins`` from the loaded entries, as the server's own engine would."""
    started = time.perf_counter()
    engine = create_async_engine(database.url)  # not the server's: no statement time limit
    try:
        await results.recount_wins(make_sessionmaker(engine))
        async with engine.connect() as connection:
            database.counts["player_wins"] = (
                await connection.scalar(select(func.count()).select_from(PlayerWinsRow)) or 0
            )
    finally:
        await engine.dispose()
    log(
        f"{database.kind}: {database.counts['player_wins']:,} player_wins rows (and the board "
        "counts) counted from the "
        f"entries in {time.perf_counter() - started:.1f} s"
    )


def progress(database: Database, before: int, total: int, started: float) -> int:
    done = database.counts.get("entries", 0)
    if done // 100_000 > before // 100_000 or done == total:
        rate = done / max(time.perf_counter() - started, 1e-9)
        log(f"{database.kind}: {done:,} / {total:,} results stored ({rate:,.0f}/s)")
    return done


async def postgres_server(requested: str | None) -> str | None:
    """The PostgreSQL server URL to use, or None when there is none to use."""
    url = requested or os.environ.get(POSTGRES_VARIABLE) or DEFAULT_POSTGRES
    try:
        connection = await asyncpg.connect(asyncpg_dsn(async_url(url)), timeout=3)
    except (TimeoutError, OSError, asyncpg.PostgresError) as error:
        if requested:
            raise
        log(f"postgresql: not reachable at {url} ({error}); SQLite only")
        return None
    await connection.close()
    return async_url(url)


async def create_postgres(server_url: str) -> str:
    name = f"patience_race_bench_{secrets.token_hex(4)}"
    connection = await asyncpg.connect(asyncpg_dsn(server_url))
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


async def drop_postgres(server_url: str, url: str) -> None:
    connection = await asyncpg.connect(asyncpg_dsn(server_url))
    try:
        await connection.execute(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)')
    finally:
        await connection.close()


# -- timing -----------------------------------------------------------------------------------


@dataclass
class Timing:
    samples_ms: list[float]
    lines: int = 0
    """The size of the largest board of this kind (over the rule sets)."""

    @property
    def p50(self) -> float:
        return statistics.median(self.samples_ms)

    @property
    def p99(self) -> float:
        ordered = sorted(self.samples_ms)
        return ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]


async def timed(
    call: Callable[[int], Awaitable[Any]], calls: int, warm_up: int
) -> tuple[Timing, Any]:
    """Call ``call(0..)`` ``warm_up`` times untimed, then ``calls`` times timed."""
    for number in range(warm_up):
        await call(number)
    samples, result = [], None
    for number in range(calls):
        started = time.perf_counter()
        result = await call(number)
        samples.append((time.perf_counter() - started) * 1000)
    return Timing(samples), result


@dataclass(frozen=True)
class Targets:
    """What to ask for: per rule set, a player in the middle of its fastest and most-wins
    boards, its most played numbered deal, the day of its biggest daily board and a player in
    the middle of that board."""

    rule_sets: list[str]
    fastest_middle: dict[str, str]
    wins_middle: dict[str, str]
    deal: dict[str, int]
    daily_day: dict[str, date]
    daily_middle: dict[str, str]
    deal_middle: dict[str, str]


async def find_targets(engine: AsyncEngine) -> Targets:
    e = EntryRow
    fastest: dict[str, str] = {}
    wins: dict[str, str] = {}
    deals: dict[str, int] = {}
    days: dict[str, date] = {}
    daily: dict[str, str] = {}
    on_deal: dict[str, str] = {}
    sessions = make_sessionmaker(engine)
    async with sessions.begin() as session:
        rule_sets = list(
            (
                await session.scalars(
                    select(e.rule_set).group_by(e.rule_set).order_by(func.count().desc())
                )
            ).all()
        )
        for rule_set in rule_sets:
            won = (e.rule_set == rule_set, e.status == "won", e.ranked == true())
            total = await session.scalar(select(func.count()).where(*won)) or 0
            fastest[rule_set] = (
                await session.scalars(
                    select(e.player_id).where(*won).order_by(e.time_ms).offset(total // 2).limit(1)
                )
            ).one()
            w = PlayerWinsRow
            players = await session.scalar(select(func.count()).where(w.rule_set == rule_set)) or 0
            wins[rule_set] = (
                await session.scalars(
                    select(w.player_id)
                    .where(w.rule_set == rule_set)
                    .order_by(-w.wins, w.last_win_at, w.player_id)
                    .offset(players // 2)
                    .limit(1)
                )
            ).one()
            deals[rule_set] = (
                await session.scalars(
                    select(e.seed)
                    .where(e.rule_set == rule_set, e.daily_day.is_(None))
                    .group_by(e.seed)
                    .order_by(func.count().desc())
                    .limit(1)
                )
            ).one()
            day = (
                await session.scalars(
                    select(e.daily_day)
                    .where(e.rule_set == rule_set, e.daily_day.is_not(None))
                    .group_by(e.daily_day)
                    .order_by(func.count().desc())
                    .limit(1)
                )
            ).one()
            assert day is not None
            days[rule_set] = day
            on_day = (e.rule_set == rule_set, e.daily_day == days[rule_set], e.ranked == true())
            total = await session.scalar(select(func.count()).where(*on_day)) or 0
            daily[rule_set] = (
                await session.scalars(
                    select(e.player_id)
                    .where(*on_day)
                    .order_by(e.rank.is_(None), e.status != "won", e.time_ms, -e.on_foundations)
                    .offset(total // 2)
                    .limit(1)
                )
            ).one()
            on_seed = (e.rule_set == rule_set, e.seed == deals[rule_set])
            total = await session.scalar(select(func.count()).where(*on_seed)) or 0
            on_deal[rule_set] = (
                await session.scalars(
                    select(e.player_id)
                    .where(*on_seed)
                    .order_by(e.rank.is_(None), e.status != "won", e.time_ms, -e.on_foundations)
                    .offset(total // 2)
                    .limit(1)
                )
            ).one()
    return Targets(rule_sets, fastest, wins, deals, days, daily, on_deal)


Query = Callable[[Sessions, str, datetime], Awaitable[leaderboards.Board[Any]]]
Count = Callable[[str, datetime], Select[Any]]


@dataclass(frozen=True)
class BoardSpec:
    """A leaderboard query as the server makes it, and how many lines its board has."""

    label: str
    query: Query
    count: Count


def board_specs(targets: Targets, cache: RedisRanks | None = None) -> list[BoardSpec]:
    """Every board query; with ``cache``, the ones whose ranks the Redis cache gives, through
    it ("(Redis)")."""
    t, e = targets, EntryRow

    def wins(rule_set: str, since: datetime | None) -> Select[Any]:
        return select(func.count()).where(
            e.rule_set == rule_set,
            e.status == "won",
            e.ranked == true(),
            *([] if since is None else [e.finished_at >= since]),
        )

    def fastest(period: board_statements.Period) -> Query:
        return lambda s, r, now: leaderboards.fastest_wins(s, r, period, LIMIT, now)

    def at_midnight(s: Sessions, r: str, now: datetime) -> Awaitable[leaderboards.Board[Any]]:
        return leaderboards.fastest_wins(
            s, r, "today", LIMIT, next_midnight(now) + timedelta(minutes=1)
        )

    all_wins: Count = lambda r, now: wins(r, None)  # noqa: E731
    deal: Count = lambda r, now: select(func.count()).where(  # noqa: E731
        e.rule_set == r, e.seed == t.deal[r], e.rank.is_not(None)
    )
    daily: Count = lambda r, now: select(func.count()).where(  # noqa: E731
        e.rule_set == r, e.daily_day == t.daily_day[r], e.rank.is_not(None), e.ranked == true()
    )
    players: Count = lambda r, now: select(func.count(e.player_id.distinct())).where(  # noqa: E731
        e.rule_set == r, e.status == "won", e.ranked == true()
    )
    specs = [
        BoardSpec(
            "fastest wins, today, top 100",
            fastest("today"),
            lambda r, now: wins(r, leaderboards.period_start("today", now)),
        ),
        BoardSpec(
            "fastest wins, today, just after midnight (no win yet)",
            at_midnight,
            lambda r, now: wins(r, next_midnight(now)),
        ),
        BoardSpec(
            "fastest wins, this week, top 100",
            fastest("week"),
            lambda r, now: wins(r, leaderboards.period_start("week", now)),
        ),
        BoardSpec("fastest wins, all time, top 100", fastest("all"), all_wins),
    ]
    hot = [
        BoardSpec(
            "fastest wins, all time, around me",
            lambda s, r, now: leaderboards.fastest_wins(
                s, r, "all", LIMIT, now, around=t.fastest_middle[r], cache=cache
            ),
            all_wins,
        ),
        BoardSpec(
            "fastest wins, all time, a player's rank",
            lambda s, r, now: leaderboards.fastest_wins(
                s, r, "all", 1, now, around=t.fastest_middle[r], cache=cache
            ),
            all_wins,
        ),
        BoardSpec(
            "most wins, around me",
            lambda s, r, now: leaderboards.most_wins(
                s, r, LIMIT, around=t.wins_middle[r], cache=cache
            ),
            players,
        ),
        BoardSpec(
            "most wins, a player's rank",
            lambda s, r, now: leaderboards.most_wins(s, r, 1, around=t.wins_middle[r], cache=cache),
            players,
        ),
    ]
    if cache is not None:
        return [BoardSpec(f"{spec.label} (Redis)", spec.query, spec.count) for spec in hot]
    return [
        *specs,
        *hot,
        BoardSpec(
            "most wins, top 100", lambda s, r, now: leaderboards.most_wins(s, r, LIMIT), players
        ),
        BoardSpec(
            "most played deal, top 100",
            lambda s, r, now: leaderboards.deal_board(s, r, t.deal[r], LIMIT),
            deal,
        ),
        BoardSpec(
            "most played deal, around me",
            lambda s, r, now: leaderboards.deal_board(
                s, r, t.deal[r], LIMIT, around=t.deal_middle[r]
            ),
            deal,
        ),
        BoardSpec(
            "biggest daily board, top 100",
            lambda s, r, now: leaderboards.daily_board(s, r, t.daily_day[r], LIMIT, now),
            daily,
        ),
        BoardSpec(
            "biggest daily board, around me",
            lambda s, r, now: leaderboards.daily_board(
                s, r, t.daily_day[r], LIMIT, now, around=t.daily_middle[r]
            ),
            daily,
        ),
    ]


def next_midnight(now: datetime) -> datetime:
    return datetime.combine(utc_day(now) + timedelta(days=1), datetime.min.time(), UTC)


async def bench_boards(
    database: Database,
    engine: AsyncEngine,
    now: datetime,
    calls: int,
    explain: bool,
    targets: Targets,
    cache: RedisRanks | None = None,
) -> dict[str, Timing]:
    sessions = make_sessionmaker(engine)
    rule_sets = targets.rule_sets
    timings: dict[str, Timing] = {}
    for spec in board_specs(targets, cache):

        async def call(number: int, query: Query = spec.query) -> leaderboards.Board[Any]:
            return await query(sessions, rule_sets[number % len(rule_sets)], now)

        timing, _ = await timed(call, calls, warm_up=max(len(rule_sets), calls // 10))
        async with sessions.begin() as session:
            sizes = [await session.scalar(spec.count(r, now)) or 0 for r in rule_sets]
        timing.lines = max(sizes)
        timings[spec.label] = timing
        log(f"{database.kind}: {spec.label}: p50 {timing.p50:.2f} ms, p99 {timing.p99:.2f} ms")
        if explain:

            async def once(query: Query = spec.query) -> leaderboards.Board[Any]:
                return await query(sessions, rule_sets[0], now)

            await explain_query(database, engine, spec.label, once)
    return timings


async def explain_query(
    database: Database, engine: AsyncEngine, label: str, call: Callable[[], Awaitable[Any]]
) -> None:
    """Run the query once, capturing its SQL, and print each statement's plan."""
    captured: list[tuple[str, Any]] = []

    def capture(
        conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
    ) -> None:
        captured.append((statement, parameters))

    event.listen(engine.sync_engine, "before_cursor_execute", capture)
    try:
        await call()
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", capture)
    prefix = (
        "EXPLAIN (ANALYZE, BUFFERS) " if database.kind == "postgresql" else ("EXPLAIN QUERY PLAN ")
    )
    print(f"\n#### {database.kind}: {label}\n")
    async with engine.connect() as connection:
        for statement, parameters in captured:
            if not statement.lstrip().upper().startswith("SELECT"):
                continue
            plan = await connection.exec_driver_sql(prefix + statement, parameters)
            lines = [" | ".join(str(v) for v in row[-1:]) for row in plan]
            print("```\n" + " ".join(statement.split()) + "\n--\n" + "\n".join(lines) + "\n```")


# -- writes -----------------------------------------------------------------------------------


@dataclass
class WriteFigures:
    per_s: float
    unit: str
    timing: Timing


async def bench_writes(
    database: Database, engine: AsyncEngine, now: datetime, calls: int, cache: RedisRanks | None
) -> dict[str, WriteFigures]:
    """The server's writes, one transaction after another as ``server.storage.writer`` makes them;
    with ``cache``, results also with the Redis cache kept in step after each commit."""
    sessions = make_sessionmaker(engine)
    async with sessions.begin() as session:
        players = list((await session.scalars(select(PlayerRow.id).limit(200))).all())
    rng = random.Random(7)

    async def new_race(rule_set: str) -> str:
        race_id = new_id()
        await create_race(
            sessions,
            race_id=race_id,
            code="BENCH",
            rule_set=rule_set,
            deal_kind="secret",
            seed=rng.getrandbits(64),
            algorithm=DEAL_ALGORITHM,
            rules=RULES_VERSION,
            host_id=players[0],
            seats_max=2,
            time_limit_s=None,
        )
        return race_id

    figures: dict[str, WriteFigures] = {}
    started_at = now - timedelta(minutes=10)
    for kept in (None, cache) if cache is not None else (None,):
        races = [await new_race(RULE_SET_NAMES[n % len(RULE_SET_NAMES)]) for n in range(calls)]

        async def whole_race(
            number: int, races: list[str] = races, kept: RedisRanks | None = kept
        ) -> None:
            pair = rng.sample(players, 2)
            await record_start(sessions, races[number], started_at, pair)
            ranking = [
                RankEntry(
                    rank=1,
                    player_id=pair[0],
                    name="",
                    status="won",
                    time_ms=rng.randint(60_000, 600_000),
                    on_foundations=52,
                    reached_at_ms=300_000,
                    moves=120,
                ),
                RankEntry(
                    rank=2,
                    player_id=pair[1],
                    name="",
                    status="lost",
                    time_ms=610_000,
                    on_foundations=30,
                    reached_at_ms=200_000,
                    moves=90,
                ),
            ]
            recorded = await results.record_results(sessions, races[number], now, ranking)
            if kept is not None:
                await kept.set_lines(recorded.scored)

        timing, _ = await timed(whole_race, calls, warm_up=0)
        total_s = sum(timing.samples_ms) / 1000
        label = "results: record_start + record_results, races of 2"
        figures[label + ("" if kept is None else ", + Redis ZADD")] = WriteFigures(
            2 * calls / total_s, "results", timing
        )
        log(
            f"{database.kind}: results{'' if kept is None else ' + Redis'}: "
            f"{2 * calls / total_s:,.0f}/s"
        )

    racing = [await new_race(RULE_SET_NAMES[n % len(RULE_SET_NAMES)]) for n in range(50)]
    seats = []
    for race_id in racing:
        pair = rng.sample(players, 2)
        await record_start(sessions, race_id, started_at, pair)
        seats += [(race_id, player) for player in pair]
    next_index = dict.fromkeys(seats, 0)
    for size in MOVE_BATCHES:

        async def batch(number: int, size: int = size) -> None:
            rows: list[AcceptedMove] = []
            for n in range(size):
                race_id, player = seats[(number * size + n) % len(seats)]
                index = next_index[race_id, player]
                next_index[race_id, player] = index + 1
                rows.append(
                    {
                        "race_id": race_id,
                        "player_id": player,
                        "index": index,
                        "text": "8H left:3 -> ace:2",
                        "at_ms": 1000 * index,
                    }
                )
            await record_moves(sessions, rows)

        timing, _ = await timed(batch, calls, warm_up=5)
        total_s = sum(timing.samples_ms) / 1000
        figures[f"moves: record_moves, batches of {size}"] = WriteFigures(
            size * calls / total_s, "moves", timing
        )
        log(f"{database.kind}: moves in batches of {size}: {size * calls / total_s:,.0f}/s")
    return figures


# -- the run ----------------------------------------------------------------------------------


@dataclass
class Run:
    database: Database
    boards: dict[str, Timing]
    writes: dict[str, WriteFigures]


async def bench_database(
    database: Database,
    shape: Shape,
    calls: int,
    explain: bool,
    redis_url: str | None,
    server_side: bool,
    copy_of: str | None = None,
    reuse: bool = False,
) -> Run:
    log(f"{database.kind}: alembic upgrade head")
    await upgrade_database(database.url)
    if reuse:
        await describe_loaded(database)
    elif database.kind == "sqlite" and copy_of is not None:
        await load_sqlite_copy(database, copy_of)
    elif database.kind == "sqlite":
        await load_sqlite(database, Generator(shape))
    elif server_side:
        await load_postgresql_series(database, shape)
    else:
        await load_postgresql(database, Generator(shape))
    log(f"{database.kind}: loaded in {database.load_s:.1f} s")
    engine = make_engine(database.url)
    cache = (
        None
        if redis_url is None
        else RedisRanks(redis_url, f"patience-race-bench-{secrets.token_hex(4)}:")
    )
    try:
        targets = await find_targets(engine)
        boards = await bench_boards(database, engine, shape.now, calls, explain, targets)
        if cache is not None:
            started = time.perf_counter()
            lines = await cache.rebuild(make_sessionmaker(engine))
            database.cache_rebuild = (lines, time.perf_counter() - started)
            log(
                f"{database.kind}: Redis rank cache rebuilt, {lines:,} lines in "
                f"{database.cache_rebuild[1]:.1f} s"
            )
            boards |= await bench_boards(
                database, engine, shape.now, calls, explain, targets, cache
            )
        writes = await bench_writes(database, engine, shape.now, calls, cache)
    finally:
        if cache is not None:
            stale = [key async for key in cache.redis.scan_iter(f"{cache.prefix}*")]
            if stale:
                await cache.redis.delete(*stale)
            await cache.close()
        await engine.dispose()
    return Run(database, boards, writes)


def report(runs: list[Run], shape: Shape, calls: int, load: tuple[float, ...]) -> str:
    names = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
    out = [
        f"## Leaderboards and writes at {shape.results:,} results",
        "",
        f"{shape.now:%Y-%m-%d %H:%M} UTC; {shape.results:,} results (entries rows), "
        f"{shape.players:,} players, data seed {shape.seed}; {calls} timed calls per query "
        f"after a warm-up, rule sets taken in turn, top {LIMIT} lines; Python "
        f"{platform.python_version()}, SQLAlchemy {sqlalchemy.__version__}, asyncpg "
        f"{asyncpg.__version__}; {platform.machine()}, {os.cpu_count()} CPUs, "
        f"{platform.system()} {platform.release()}; load average {load[0]:.1f} at the "
        f"start, {os.getloadavg()[0]:.1f} at the end. Load s includes making the rows.",
        "",
        "| database | version | players | races | results | load s | results/s loaded | size MB |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for run in runs:
        d = run.database
        out.append(
            f"| {names[d.kind]} | {d.version} | {d.counts['players']:,} | "
            f"{d.counts['races']:,} | {d.counts['entries']:,} | "
            + (
                "loaded before | - | "
                if math.isnan(d.load_s)
                else f"{d.load_s:.1f} | {d.counts['entries'] / d.load_s:,.0f} | "
            )
            + f"{d.size_bytes / 1e6:,.0f} |"
        )
    for run in runs:
        if run.database.cache_rebuild is not None:
            lines, seconds = run.database.cache_rebuild
            out.append(
                f"\n{names[run.database.kind]}: the Redis rank cache rebuilt from the "
                f"database: {lines:,} lines in {seconds:.1f} s."
            )
    heads = " | ".join(
        f"{names[r.database.kind]} p50 ms | {names[r.database.kind]} p99 ms" for r in runs
    )
    out += [
        "",
        f"| leaderboard query | board lines | {heads} | p99 < {TARGET_P99_MS:g} ms |",
        "| --- | ---: |" + " ---: | ---: |" * len(runs) + " --- |",
    ]
    for label in runs[0].boards:
        cells = " | ".join(f"{r.boards[label].p50:.2f} | {r.boards[label].p99:.2f}" for r in runs)
        met = all(r.boards[label].p99 < TARGET_P99_MS for r in runs)
        out.append(
            f"| {label} | {runs[0].boards[label].lines:,} | {cells} | {'yes' if met else 'NO'} |"
        )
    heads = " | ".join(f"{names[r.database.kind]} per s | p50 ms | p99 ms" for r in runs)
    out += [
        "",
        f"| write (one transaction each, {calls} in a row) | {heads} |",
        "| --- |" + " ---: | ---: | ---: |" * len(runs),
    ]
    for label in runs[0].writes:
        cells = " | ".join(
            f"{r.writes[label].per_s:,.0f} {r.writes[label].unit} | "
            f"{r.writes[label].timing.p50:.2f} | {r.writes[label].timing.p99:.2f}"
            for r in runs
        )
        out.append(f"| {label} | {cells} |")
    return "\n".join(out)


async def main_async(args: argparse.Namespace) -> int:
    results = QUICK_RESULTS if args.quick and args.results is None else (args.results or 1_000_000)
    calls = args.calls or (QUICK_CALLS if args.quick else 200)
    kinds = [kind.strip() for kind in args.databases.split(",") if kind.strip()]
    if not set(kinds) <= {"sqlite", "postgresql"}:
        raise SystemExit("--databases is a list of sqlite and postgresql")
    shape = Shape(
        results=results,
        players=max(10, results // RESULTS_PER_PLAYER),
        seed=args.seed,
        now=datetime.now(UTC).replace(microsecond=0),
    )
    runs: list[Run] = []
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="patience-race-bench-") as directory:
        for kind in kinds:
            if kind == "sqlite":
                path = Path(args.sqlite_path or Path(directory) / "bench.sqlite3")
                if path.exists() != bool(args.reuse):
                    raise SystemExit(
                        f"{path} exists: the bench fills a fresh database"
                        if path.exists()
                        else f"{path}: nothing to --reuse"
                    )
                runs.append(
                    await bench_database(
                        Database(kind, f"sqlite+aiosqlite:///{path}"),
                        shape,
                        calls,
                        args.explain,
                        args.redis,
                        args.server_side,
                        args.sqlite_copy_of,
                        args.reuse,
                    )
                )
                continue
            if args.reuse_postgres:
                runs.append(
                    await bench_database(
                        Database(kind, async_url(args.reuse_postgres)),
                        shape,
                        calls,
                        args.explain,
                        args.redis,
                        args.server_side,
                        reuse=True,
                    )
                )
                continue
            server = await postgres_server(args.postgres)
            if server is None:
                continue
            url = await create_postgres(server)
            try:
                runs.append(
                    await bench_database(
                        Database(kind, url),
                        shape,
                        calls,
                        args.explain,
                        args.redis,
                        args.server_side,
                    )
                )
            finally:
                if args.keep:
                    log(f"postgresql: kept {make_url(url).render_as_string()}")
                else:
                    await drop_postgres(server, url)
    print(report(runs, shape, calls, load))
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--results", type=int, help="entries rows to store (1,000,000)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a smoke test: {QUICK_RESULTS:,} results, {QUICK_CALLS} calls",
    )
    parser.add_argument("--calls", type=int, help="timed calls per query and per write (200)")
    parser.add_argument(
        "--databases",
        default="sqlite,postgresql",
        help="which to bench: sqlite,postgresql (PostgreSQL if reachable)",
    )
    parser.add_argument(
        "--postgres",
        help="PostgreSQL server URL where the user may create "
        f"databases (else ${POSTGRES_VARIABLE}, else {DEFAULT_POSTGRES})",
    )
    parser.add_argument(
        "--sqlite-path",
        help="where to make the SQLite file (a temporary directory, removed at the end)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL database")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="time the queries again on the "
        "SQLite file --sqlite-path names, as an earlier run left it",
    )
    parser.add_argument(
        "--reuse-postgres",
        metavar="URL",
        help="time the queries again on "
        "this PostgreSQL bench database (one --keep kept), not a new one",
    )
    parser.add_argument(
        "--sqlite-copy-of",
        metavar="URL",
        help="fill SQLite with the rows of "
        "this PostgreSQL database (one --server-side --keep made), not with "
        "the generator: the same rows on both at 10,000,000",
    )
    parser.add_argument("--explain", action="store_true", help="print every query's plan")
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated data")
    parser.add_argument(
        "--redis",
        help="Redis URL: also time the hot boards' ranks from the "
        "Redis rank cache, and results written with it kept in step",
    )
    parser.add_argument(
        "--server-side",
        action="store_true",
        help="PostgreSQL makes its rows itself (generate_series): for 10,000,000 results",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(main_async(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
