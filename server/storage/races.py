"""Storing players, races, moves and results, and reading them back: plain async functions.

Each function takes the session factory first and runs in one transaction of its own. The
server calls the functions that write only through its writer (``server.storage.writer``), one at a
time, and retries them after an error. Most are idempotent: entries and moves are inserted with
"insert or ignore" on their primary key (``ON CONFLICT DO NOTHING`` on PostgreSQL and SQLite
alike), and results are set, not added. The one count kept, each player's wins in
``player_wins``, grows only by the entries that become ``won`` in that call, so the retry of a
call whose commit did land counts nothing again.

Leaderboards are read in ``server.storage.leaderboards``; which results they count is ``ranked``,
here, decided as each result is stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any, TypedDict, cast

from alembic import command
from alembic.config import Config
from sqlalchemy import (
    BigInteger,
    Date,
    Insert,
    Table,
    case,
    func,
    inspect,
    literal,
    select,
    true,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import selectinload

from engine.moves import Move
from engine.replay import MoveLog, replay_trusted
from engine.solver import FULL_KNOWLEDGE
from server.core import ratings
from server.core.race import DealKind
from server.core.ratings import DEFAULT_RULES, RatingRules
from server.core.said import MoveMade
from server.storage import holding, ranks
from server.storage.models import (
    Base,
    DailyDealRow,
    DailyPlayRow,
    DealVerdictRow,
    EntryRow,
    MoveRow,
    PlayerRow,
    PlayerWinsRow,
    RaceRow,
)
from server.storage.ratings import rate_race
from wire.commitment import commitment
from wire.protocol import RankEntry
from wire.ratings import RatingChange

Sessions = async_sessionmaker[AsyncSession]

_ENTRIES = EntryRow.__table__.c
"""The columns of ``entries``, for statements written in SQL terms."""
ALEMBIC_INI = Path(__file__).resolve().parents[2] / "alembic.ini"


def new_id() -> str:
    """A random URL-safe id of 16 characters (96 bits), for players and races."""
    return secrets.token_urlsafe(12)


ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What a player or race id may look like (they are 16 URL-safe characters): anything else names
nobody and no race, and is answered without a database query (PostgreSQL refuses a NUL in text,
for one)."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


async def upgrade_database(url: str) -> None:
    """``alembic upgrade head`` on ``url``. Alembic's async environment runs its own event loop,
    so it runs in a worker thread, which keeps this usable from a running loop."""
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))  # ini-style escaping
    await asyncio.to_thread(command.upgrade, config, "head")


# -- players ----------------------------------------------------------------------------------


async def create_player(sessions: Sessions, name: str) -> tuple[PlayerRow, str]:
    """A new player and their secret token, which is returned once and stored only hashed."""
    token = secrets.token_urlsafe(32)
    player = PlayerRow(id=new_id(), name=name, token_hash=token_hash(token),
                       created_at=datetime.now(UTC))
    async with sessions.begin() as session:
        session.add(player)
    return player, token


async def player_by_token(sessions: Sessions, token: str) -> PlayerRow | None:
    async with sessions.begin() as session:
        return await session.scalar(
            select(PlayerRow).where(PlayerRow.token_hash == token_hash(token)))


# -- races ------------------------------------------------------------------------------------


async def create_race(sessions: Sessions, *, race_id: str, code: str, rule_set: str,
                      deal_kind: DealKind, seed: int, algorithm: int, rules: int, host_id: str,
                      seats_max: int, time_limit_s: int | None,
                      holder: str | None = None, daily_day: date | None = None,
                      winnable: bool | None = None, public: bool = False) -> RaceRow | None:
    """A race in its lobby, held by ``holder`` at epoch 1 (``server.storage.holding``). The
    commitment is computed here from the seed, as the race does.

    A daily deal's race is its host's one play of that day's deal: the play is claimed in the
    same transaction, so there is no claim without its race, nor a race without its claim.
    None, and nothing written, if the host has played that day's deal already, however many
    requests race for it (``_claim_daily``). A retry of this very write that had committed
    (its answer lost) finds its race and gives it again."""
    if (deal_kind == "daily") != (daily_day is not None):
        raise ValueError("a daily deal, and only a daily deal, has a daily day")
    now = datetime.now(UTC)
    race = RaceRow(id=race_id, code=code, rule_set=rule_set, deal_kind=deal_kind, seed=seed,
                   algorithm=algorithm, rules=rules, commitment=commitment(seed),
                   daily_day=daily_day, winnable=winnable, public=public,
                   seats_max=seats_max, time_limit_s=time_limit_s, host_id=host_id,
                   created_at=now, holder=holder, holder_epoch=1, held_until=holding.lease_end(now))
    async with sessions.begin() as session:
        if daily_day is not None:
            written = await session.get(RaceRow, race_id)
            if written is not None:
                return written
            if not await _claim_daily(session, host_id, rule_set, daily_day):
                return None
        session.add(race)
    return race


def ranked(deal_kind: str, daily_day: date | None, player_made_at: datetime) -> bool:
    """Whether a racer's result counts on the fastest, most wins and daily boards: whether
    the deal was hidden from them until the race, as far as the server can tell.

    A secret deal is drawn for the race and revealed at its end. A chosen deal (``number``)
    is not hidden: its host knows it beforehand and anyone can compute its face-down cards, so
    its races are practice, on that deal's board only. A daily deal is the same for everyone
    all day and identities are free, so it counts for identities made before the day (UTC)
    began: one made on the day (a throwaway that looks first, a second name for a player who
    has played) plays it unranked. An older identity kept for scouting is beyond what the
    server can tell apart from a player."""
    if deal_kind == "secret":
        return True
    if deal_kind == "daily" and daily_day is not None:
        return player_made_at < datetime.combine(daily_day, time(), UTC)
    return False


async def record_start(sessions: Sessions, race_id: str, started_at: datetime,
                       player_ids: Sequence[str], epoch: int | None = None,
                       addresses: Mapping[str, str] | None = None,
                       rating: RatingRules = DEFAULT_RULES) -> None:
    """The race started with these racers: each gets an entry, ``racing``, ``ranked`` or not,
    and how they may be rated in it (``ratings.roles``: ``addresses`` are where each racer
    connected from; without them, each racer counts as from an address of their own). Safe
    to retry. ``Fenced`` if the race's epoch is no longer ``epoch``.

    The racers' player rows are locked first (in id order, as ``rating_store`` does; ``FOR NO
    KEY UPDATE`` on PostgreSQL, which rows referring to them do not wait for), so that two
    races starting at once for one player on two workers decide one after the other: the
    second sees the first as a rated race under way."""
    async with sessions.begin() as session:
        await holding.check(session, race_id, epoch)
        race = await session.get_one(RaceRow, race_id)
        race.started_at = started_at
        made_at: dict[str, datetime] = dict((await session.execute(
            select(PlayerRow.id, PlayerRow.created_at).where(PlayerRow.id.in_(player_ids))
            .order_by(PlayerRow.id).with_for_update(key_share=True))).all())
        recent = (await _rated_lately(session, race_id, started_at, player_ids, rating)
                  if race.deal_kind == "secret" and len(player_ids) > 1 else {})
        roles = ratings.roles(race.deal_kind, [
            ratings.Candidate(player_id, player_id if addresses is None
                              else addresses.get(player_id, ""),
                              (started_at - made_at[player_id]).total_seconds(),
                              recent.get(player_id, ()))
            for player_id in player_ids], rating)
        await _insert_new(session, EntryRow, [
            {"race_id": race_id, "player_id": player_id, "status": "racing",
             "on_foundations": 0, "moves": 0, "rule_set": race.rule_set, "seed": race.seed,
             "daily_day": race.daily_day,
             "ranked": ranked(race.deal_kind, race.daily_day, made_at[player_id]),
             "rated_as": roles[player_id],
             "rated_at": None if roles[player_id] is None else started_at}
            for player_id in player_ids])


async def _rated_lately(session: AsyncSession, race_id: str, started_at: datetime,
                        player_ids: Sequence[str],
                        rating: RatingRules) -> dict[str, list[tuple[float, bool]]]:
    """Each racer's other rated races started in the ``looks_back_s`` before ``started_at``:
    how long before, and whether still under way (``ratings.Candidate.recent``), read along
    ``ix_entries_rated``."""
    e = EntryRow
    rows = await session.execute(
        select(e.player_id, e.rated_at, e.ended_at)
        .where(e.player_id.in_(player_ids), e.race_id != race_id,
               e.rated_at > started_at - timedelta(seconds=rating.looks_back_s)))
    recent: dict[str, list[tuple[float, bool]]] = {}
    for player_id, rated_at, ended_at in rows:
        assert rated_at is not None  # (the query's range leaves out the nulls)
        recent.setdefault(player_id, []).append(
            ((started_at - rated_at).total_seconds(), ended_at is None))
    return recent


class AcceptedMove(TypedDict):
    """A row of ``record_moves``: ``index`` is 0-based per player, ``text`` the move's text
    form, ``at_ms`` the server time since the race's start."""

    race_id: str
    player_id: str
    index: int
    text: str
    at_ms: int


async def record_moves(sessions: Sessions, moves: Sequence[AcceptedMove]) -> None:
    """Store accepted moves, all in one transaction; moves already stored are skipped, so a
    batch can be retried whole after an error."""
    async with sessions.begin() as session:
        await _insert_new(session, MoveRow, [dict(move) for move in moves])


class MoveRecorder:
    """``record_moves`` over a connection of its own, held open from one batch to the next.

    The server's writer commits a batch of moves before it acknowledges them, hundreds of times
    a second: a session per batch (with a pool checkout, a reset on return, and on PostgreSQL a
    ping) cost 1.0-1.2 ms of CPU per commit, the insert on a held connection 0.45 ms. After any
    error the connection is dropped, and the writer's retry opens a new one."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._connection: AsyncConnection | None = None

    async def __call__(self, moves: Mapping[str, Sequence[MoveMade]],
                       epochs: Mapping[str, int]) -> set[str]:
        """Store the moves of each race (by race id) still held at these epochs (race id:
        epoch), in one transaction; return the races held by another process now, whose moves
        are not stored (``server.storage.holding``)."""
        if self._connection is None:
            self._connection = await self._engine.connect()
        try:
            async with self._connection.begin():
                fenced = await holding.stale(self._connection, epochs)
                await _insert_ignoring(self._connection, MoveRow, [
                    {"race_id": race_id, "player_id": move.player_id, "index": move.index,
                     "text": move.text, "at_ms": move.at_ms}
                    for race_id, made in moves.items() if race_id not in fenced
                    for move in made])
                return fenced
        except Exception:
            await self.close()
            raise

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):  # it may be the broken one
                await connection.close()


@dataclass(frozen=True, slots=True)
class Recorded:
    """What storing a race's result decided, for the room to use once it is committed."""

    ratings: dict[str, RatingChange]
    """Each rated racer's rating change (none for a race that is not rated)."""
    scored: list[ranks.Scored]
    """The race's lines on the hot boards as they now stand (every ranked win, and each ranked
    winner's count), for a rank cache: setting them twice changes nothing."""


async def record_results(sessions: Sessions, race_id: str, ended_at: datetime,
                         ranking: Sequence[RankEntry], epoch: int | None = None) -> Recorded:
    """The race is over: set each racer's result from the race's ranking, count each new
    ranked win in ``player_wins`` and each new line in ``board_counts`` (``server.storage.ranks``),
    and rate the race (``rating_store.rate_race``). Safe to retry.

    A win is counted when its entry becomes ``won`` here, having been something else. That is
    decided by the database, not by what was read: ``status`` is set to ``won`` where it was
    not, and the entries that statement changed are the new wins. A retry after a commit that
    failed finds the entries as they were and counts the wins then; a retry after a commit that
    did land (its success lost on the way back) changes nothing and counts nothing; and a retry
    that overtakes its first attempt, still committing on a connection that was given up, waits
    for that attempt's locks and then finds the entries won (the update reads the rows it waited
    for again), or on SQLite may fail and be retried once more. ``Fenced`` if the race's epoch
    is no longer ``epoch``.
    """
    async with sessions.begin() as session:
        await holding.check(session, race_id, epoch)
        race = await session.get_one(RaceRow, race_id, options=[selectinload(RaceRow.entries)])
        started_at = race.started_at
        if started_at is None:
            raise ValueError(f"race {race_id} has no recorded start")
        entries = {entry.player_id: entry for entry in race.entries}
        finished_at: dict[str, datetime | None] = {}
        for result in ranking:
            if result.player_id not in entries:
                raise ValueError(f"{result.player_id} did not start race {race_id}")
            finished_at[result.player_id] = (
                None if result.time_ms is None
                else started_at + timedelta(milliseconds=result.time_ms))
        # First, while the session has changed nothing: the updates must meet the stored rows.
        winners = [result.player_id for result in ranking if result.status == "won"]
        won_ranked = await _count_new_wins(session, race, winners, finished_at)
        await _count_new_lines(session, race, ranking, finished_at)
        for result in ranking:
            entry = entries[result.player_id]
            entry.status, entry.rank, entry.moves = result.status, result.rank, result.moves
            entry.time_ms, entry.reached_at_ms = result.time_ms, result.reached_at_ms
            entry.on_foundations = result.on_foundations
            entry.finished_at = finished_at[result.player_id]
            entry.ended_at = ended_at
        race.ended_at = ended_at
        return Recorded(await rate_race(session, race, ranking, ended_at),
                        await _scored(session, race, ranking, won_ranked))


async def _count_new_lines(session: AsyncSession, race: RaceRow, ranking: Sequence[RankEntry],
                           finished_at: dict[str, datetime | None]) -> None:
    """Set each result's ``standing`` and ``finish_day`` where it had none, and count the lines
    the results that statement changed add to the boards; as for the wins, the database says
    which results are new."""
    e = _ENTRIES
    placed = {result.player_id: (
        ranks.standing(result.status, result.time_ms, result.on_foundations,
                       result.reached_at_ms),
        None if (at := finished_at[result.player_id]) is None else utc_day(at))
        for result in ranking}
    connection = await session.connection()
    new = (await connection.execute(
        update(cast(Table, EntryRow.__table__))
        .where(e.race_id == race.id, e.player_id.in_(placed), e.standing.is_(None))
        .values(standing=case({player: literal(value[0], BigInteger())
                               for player, value in placed.items()}, value=e.player_id),
                finish_day=case({player: literal(value[1], Date())
                                 for player, value in placed.items()}, value=e.player_id))
        .returning(e.player_id, e.ranked))).all()
    status = {result.player_id: result for result in ranking}
    await ranks.add_counts(connection, [change for player_id, counted in new
                                        for change in ranks.result_changes(ranks.StoredResult(
        race.rule_set, race.seed, race.daily_day, counted, status[player_id].status,
        status[player_id].time_ms, *placed[player_id]))])


async def _scored(session: AsyncSession, race: RaceRow, ranking: Sequence[RankEntry],
                  won_ranked: list[str]) -> list[ranks.Scored]:
    """The race's ranked wins, and the wins its ranked winners now have."""
    if not won_ranked:
        return []
    w = PlayerWinsRow
    counts = (await session.execute(select(w.player_id, w.wins).where(
        w.rule_set == race.rule_set, w.player_id.in_(won_ranked)))).all()
    times = {result.player_id: result.time_ms for result in ranking}
    return [*((ranks.fastest_board(race.rule_set), f"{race.id}:{player_id}",
               times[player_id] or 0) for player_id in won_ranked),
            *((ranks.wins_board(race.rule_set), player_id, -wins) for player_id, wins in counts)]


async def _count_new_wins(session: AsyncSession, race: RaceRow, winners: list[str],
                          finished_at: dict[str, datetime | None]) -> list[str]:
    """Mark the winners' entries ``won`` where they were not yet, and count those wins that
    are ranked (in ``player_wins``, and its buckets in ``board_counts``). Returns the winners
    whose wins are ranked, new or not."""
    won_ranked = [player_id for player_id in winners if any(
        entry.player_id == player_id and entry.ranked for entry in race.entries)]
    if not winners:
        return won_ranked
    e = _ENTRIES
    connection = await session.connection()
    new = (await connection.execute(
        update(cast(Table, EntryRow.__table__))
        .where(e.race_id == race.id, e.player_id.in_(winners), e.status != "won")
        .values(status="won").returning(e.player_id, e.ranked))).all()
    wins: list[dict[str, Any]] = []
    for player_id, counted in new:
        if not counted:
            continue
        last_win_at = finished_at[player_id]
        if last_win_at is None:
            raise ValueError(f"{player_id} won race {race.id} without a time")
        wins.append({"rule_set": race.rule_set, "player_id": player_id, "wins": 1,
                     "last_win_at": last_win_at})
    if wins:
        await _count_wins(connection, wins)
        w = PlayerWinsRow
        now_has = (await connection.execute(select(w.wins).where(
            w.rule_set == race.rule_set, w.player_id.in_([win["player_id"] for win in wins]))
        )).scalars().all()
        await ranks.add_counts(connection, [change for count in now_has
                                            for change in ranks.wins_changes(race.rule_set,
                                                                             count)])
    return won_ranked


async def _count_wins(connection: AsyncConnection, wins: list[dict[str, Any]]) -> None:
    """Add one win per row to the player's count (``wins`` is 1 in each), a new row for a
    first win. The last win is the later of the two: results may be stored out of order (a
    result whose write was retried lands after a later race's). The SQL is the same on
    PostgreSQL and SQLite (``ON CONFLICT (key) DO UPDATE``); each dialect has its own
    construct."""
    table = cast(Table, PlayerWinsRow.__table__)
    dialect = connection.dialect.name
    statement: postgresql.Insert | sqlite.Insert
    if dialect == "postgresql":
        statement = postgresql.insert(table)
    elif dialect == "sqlite":
        statement = sqlite.insert(table)
    else:
        raise NotImplementedError(f"upsert is not written for {dialect}")
    now, new = table.c, statement.excluded
    await connection.execute(statement.on_conflict_do_update(
        index_elements=inspect(PlayerWinsRow).primary_key,
        set_={"wins": now.wins + new.wins,
              "last_win_at": case((new.last_win_at > now.last_win_at, new.last_win_at),
                                  else_=now.last_win_at)}), wins)


async def recount_wins(sessions: Sessions) -> None:
    """Rebuild ``player_wins`` from ``entries`` (the ranked wins): for rows stored without
    ``record_results`` (bench/leaderboard_bench.py loads ``entries`` directly). Migration 0005
    fills the table with the same statement, written out there (a migration must not change
    with the code)."""
    e, table = _ENTRIES, cast(Table, PlayerWinsRow.__table__)
    async with sessions.begin() as session:
        await session.execute(table.delete())
        await session.execute(table.insert().from_select(
            ["rule_set", "player_id", "wins", "last_win_at"],
            select(e.rule_set, e.player_id, func.count(), func.max(e.finished_at))
            .where(e.status == "won", e.ranked == true()).group_by(e.rule_set, e.player_id)))
        await ranks.recount(await session.connection())


async def _insert_new(session: AsyncSession, model: type[Base],
                      rows: list[dict[str, Any]]) -> None:
    """Insert the rows whose primary key is not taken yet, in the session's transaction."""
    await _insert_ignoring(await session.connection(), model, rows)


async def _insert_ignoring(connection: AsyncConnection, model: type[Base],
                           rows: list[dict[str, Any]]) -> None:
    """Insert the rows whose primary key is not taken yet. The SQL is the same on PostgreSQL and
    SQLite (``ON CONFLICT (key) DO NOTHING``), but each dialect has its own insert construct.
    The rows are plain column values: nothing is loaded into a session."""
    if not rows:
        return
    # A Core insert on the connection: the ORM's bulk insert path costs more than the statement.
    await connection.execute(_insert_or_ignore(connection, model), rows)


def _insert_or_ignore(connection: AsyncConnection, model: type[Base]) -> Insert:
    """An insert that skips a row whose primary key is taken, in the connection's dialect."""
    table = cast(Table, model.__table__)
    key = inspect(model).primary_key
    dialect = connection.dialect.name
    if dialect == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing(index_elements=key)
    if dialect == "sqlite":
        return sqlite.insert(table).on_conflict_do_nothing(index_elements=key)
    raise NotImplementedError(f"insert-or-ignore is not written for {dialect}")


async def _claim_daily(session: AsyncSession, player_id: str, rule_set: str, day: date) -> bool:
    """Claim the player's one play of that day's daily deal: True for the first claim, False
    for every other, however many race for it. The database decides (the primary key of
    ``daily_plays``): of simultaneous inserts exactly one is stored, and the others find it
    there and insert nothing."""
    connection = await session.connection()
    claimed = (await connection.execute(
        _insert_or_ignore(connection, DailyPlayRow)
        .values(rule_set=rule_set, day=day, player_id=player_id)
        .returning(DailyPlayRow.player_id))).first()
    return claimed is not None


async def daily_seed(sessions: Sessions, rule_set: str, day: date,
                     pooled: Callable[[AsyncSession], Awaitable[int | None]] | None = None
                     ) -> tuple[int, bool | None]:
    """The day's secret seed for the rule set, and whether it was proved winnable: drawn once,
    the first time it is asked for (two servers asking at once agree, as the insert keeps
    whichever came first). The draw takes a deal from the winnable pool when ``pooled`` gives
    one (``server.rooms.pool``), else a random deal (``winnable`` false; null when not asked)."""
    async with sessions.begin() as session:
        row = await session.get(DailyDealRow, (rule_set, day))
        if row is None:
            taken = None if pooled is None else await pooled(session)
            await _insert_new(session, DailyDealRow, [{
                "rule_set": rule_set, "day": day,
                "seed": secrets.randbits(64) if taken is None else taken,
                "winnable": None if pooled is None else taken is not None}])
            row = await session.get_one(DailyDealRow, (rule_set, day))
        return row.seed, row.winnable


async def unfinished_race_codes(sessions: Sessions) -> list[str]:
    """The room codes of the races with no end yet."""
    async with sessions.begin() as session:
        return list(await session.scalars(select(RaceRow.code).where(RaceRow.ended_at.is_(None))))


async def race_record(sessions: Sessions, race_id: str, now: datetime) -> dict[str, Any] | None:
    """A race as plain JSON-ready data: its deal, players, results and every racer's move log
    (docs/move-log.md, with ``time_ms`` per move).

    The seed and the logs (whose moves name the cards) are given only once they are revealed:
    after the race's end, and for a daily deal after the end of its day, so nobody can look up
    today's daily before playing it. ``None`` for an unknown race, and for a ``race_id`` that
    cannot be one (``ID``), unasked: the WebSocket request lets any text of up to 64 characters
    through, and a NUL in it made PostgreSQL refuse the query (the connection closed, 1011).
    """
    if not ID.fullmatch(race_id):
        return None
    async with sessions.begin() as session:
        race = await session.get(RaceRow, race_id, options=[
            selectinload(RaceRow.entries).selectinload(EntryRow.player),
            selectinload(RaceRow.entries).selectinload(EntryRow.move_log)])
        if race is None:
            return None
        revealed = race.ended_at is not None and (race.daily_day is None
                                                  or race.daily_day < utc_day(now))
        verdict = await session.get(DealVerdictRow, (race.rule_set, race.seed, race.algorithm,
                                                     race.rules)) if revealed else None
    entries = sorted(race.entries, key=lambda entry: (entry.rank is None, entry.rank or 0,
                                                      entry.player.name))
    return {
        "race_id": race.id,
        "rule_set": race.rule_set,
        "deal_kind": race.deal_kind,
        "daily_day": None if race.daily_day is None else race.daily_day.isoformat(),
        "algorithm": race.algorithm,
        "rules": race.rules,
        "commitment": race.commitment,
        "seed": str(race.seed) if revealed else None,
        "created_at": race.created_at.isoformat(),
        "started_at": None if race.started_at is None else race.started_at.isoformat(),
        "ended_at": None if race.ended_at is None else race.ended_at.isoformat(),
        "players": [{"player_id": entry.player_id, "name": entry.player.name}
                    for entry in entries],
        "results": [{"rank": entry.rank, "player_id": entry.player_id, "status": entry.status,
                     "time_ms": entry.time_ms, "on_foundations": entry.on_foundations,
                     "reached_at_ms": entry.reached_at_ms, "moves": entry.moves}
                    for entry in entries if entry.rank is not None],
        "logs": {entry.player_id: _move_log(race, entry) for entry in entries}
        if revealed else None,
        **_solver_fields(verdict),
    }


async def solver_fields(sessions: Sessions, record: dict[str, Any]) -> dict[str, Any]:
    """``winnable`` and ``solver`` for a revealed race record (its deal's verdict, as
    ``race_record`` gives them): to look again for a verdict stored after the record was
    read, without reading the race again."""
    async with sessions.begin() as session:
        verdict = await session.get(DealVerdictRow, (
            record["rule_set"], int(record["seed"]), record["algorithm"], record["rules"]))
    return _solver_fields(verdict)


def _solver_fields(verdict: DealVerdictRow | None) -> dict[str, Any]:
    """``winnable`` (true, false, or null: not searched yet, not revealed yet, or undecided)
    and ``solver``, the verdict with its winning line (null until searched and revealed)."""
    if verdict is None:
        return {"winnable": None, "solver": None}
    line = verdict.line.split("\n") if verdict.line else []
    return {"winnable": {"won": True, "lost": False}.get(verdict.result),
            "solver": {"result": verdict.result, "moves": len(line), "line": line,
                       "budget_s": verdict.budget_s, "knowledge": FULL_KNOWLEDGE}}


async def save_verdict(sessions: Sessions, rule_set: str, seed: int, algorithm: int, rules: int,
                       result: str, line: list[str], budget_s: float, now: datetime) -> None:
    """Store the solver's verdict on a deal; a deal searched already keeps its first one."""
    async with sessions.begin() as session:
        connection = await session.connection()
        await connection.execute(_insert_or_ignore(connection, DealVerdictRow), [{
            "rule_set": rule_set, "seed": seed, "algorithm": algorithm, "rules": rules,
            "result": result, "line": "\n".join(line), "budget_s": budget_s,
            "solved_at": now}])


def _move_log(race: RaceRow, entry: EntryRow) -> dict[str, Any]:
    """The racer's move log, with the outcome their moves reach (found by replaying them)."""
    moves = tuple(Move.parse(move.text) for move in entry.move_log)
    game = replay_trusted(MoveLog(race.rule_set, race.seed, race.algorithm, moves,
                                  rules=race.rules))
    return MoveLog.of(game, [move.at_ms for move in entry.move_log]).to_json()


def utc_day(now: datetime) -> date:
    if now.tzinfo is None:
        raise ValueError(f"a naive datetime has no UTC day: {now!r}")
    return now.astimezone(UTC).date()
