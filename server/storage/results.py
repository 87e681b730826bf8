"""Storing a race's results: each racer's result, the wins and board lines they add, and the
ratings they change, in one transaction.

Results are set, not added, so storing them again changes nothing. The one count kept, each
player's wins in ``player_wins``, grows only by the entries that become ``won`` in that call,
so the retry of a call whose commit did land counts nothing again; the lines each result adds
to the boards are counted the same way (``server.storage.ranks``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, NamedTuple, cast

from sqlalchemy import (
    BigInteger,
    Date,
    Table,
    bindparam,
    case,
    exists,
    func,
    inspect,
    literal,
    select,
    true,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from server.storage import dialect, holding, ranks
from server.storage.engine import Sessions
from server.storage.models import EntryRow, PlayerRow, PlayerWinsRow, RaceRow
from server.storage.races import utc_day
from server.storage.ratings import rate_race
from wire.protocol import RankEntry
from wire.ratings import RatingChange

_ENTRIES_TABLE = cast(Table, EntryRow.__table__)
_ENTRIES = _ENTRIES_TABLE.c
"""The columns of ``entries``, for statements written in SQL terms."""
_RACES = cast(Table, RaceRow.__table__)


@dataclass(frozen=True, slots=True)
class Recorded:
    """What storing a race's result decided, for the room to use once it is committed."""

    ratings: dict[str, RatingChange]
    """Each rated racer's rating change (none for a race that is not rated)."""
    scored: list[ranks.Scored]
    """The race's lines on the hot boards as they now stand (every ranked win, and each ranked
    winner's count), for a rank cache: setting them twice changes nothing."""


class _Race(NamedTuple):
    """What storing the results reads of the race's row."""

    id: str
    rule_set: str
    seed: int
    daily_day: date | None
    started_at: datetime | None


async def record_results(
    sessions: Sessions,
    race_id: str,
    ended_at: datetime,
    ranking: Sequence[RankEntry],
    epoch: int | None = None,
) -> Recorded:
    """The race is over: set each racer's result from the race's ranking, count each new
    ranked win in ``player_wins`` and each new line in ``board_counts`` (``server.storage.ranks``),
    and rate the race (``server.storage.ratings.rate_race``). Safe to retry.

    A win is counted when its entry becomes ``won`` here, having been something else. That is
    decided by the database, not by what was read: ``status`` is set to ``won`` where it was
    not, and the entries that statement changed are the new wins. A retry after a commit that
    failed finds the entries as they were and counts the wins then; a retry after a commit that
    did land (its success lost on the way back) changes nothing and counts nothing; and a retry
    that overtakes its first attempt, still committing on a connection that was given up, waits
    for that attempt's locks and then finds the entries won (the update reads the rows it waited
    for again), or on SQLite may fail and be retried once more. ``Fenced`` if the race's epoch
    is no longer ``epoch``.

    Core statements, not the ORM's unit of work: this is written for every race.
    """
    async with sessions.begin() as session:
        await holding.check(session, race_id, epoch)
        connection = await session.connection()
        race = _Race._make(
            (
                await connection.execute(
                    select(
                        _RACES.c.id,
                        _RACES.c.rule_set,
                        _RACES.c.seed,
                        _RACES.c.daily_day,
                        _RACES.c.started_at,
                    ).where(_RACES.c.id == race_id)
                )
            ).one()
        )
        if race.started_at is None:
            raise ValueError(f"race {race_id} has no recorded start")
        e = _ENTRIES
        entries = (
            await connection.execute(
                select(e.player_id, e.ranked, e.rated_as).where(e.race_id == race_id)
            )
        ).all()
        ranked = {entry.player_id: entry.ranked for entry in entries}
        finished_at: dict[str, datetime | None] = {}
        for result in ranking:
            if result.player_id not in ranked:
                raise ValueError(f"{result.player_id} did not start race {race_id}")
            finished_at[result.player_id] = (
                None
                if result.time_ms is None
                else race.started_at + timedelta(milliseconds=result.time_ms)
            )
        # First, before the results are set below: these updates must meet the stored rows.
        winners = [result.player_id for result in ranking if result.status == "won"]
        won_ranked = [player_id for player_id in winners if ranked[player_id]]
        await _count_new_wins(connection, race, winners, finished_at)
        await _count_new_lines(connection, race, ranking, finished_at)
        if ranking:
            await connection.execute(
                update(_ENTRIES_TABLE).where(
                    e.race_id == race_id, e.player_id == bindparam("racer")
                ),
                [
                    {
                        "racer": result.player_id,
                        "status": result.status,
                        "rank": result.rank,
                        "moves": result.moves,
                        "time_ms": result.time_ms,
                        "reached_at_ms": result.reached_at_ms,
                        "on_foundations": result.on_foundations,
                        "finished_at": finished_at[result.player_id],
                        "ended_at": ended_at,
                    }
                    for result in ranking
                ],
            )
        await connection.execute(
            update(_RACES).where(_RACES.c.id == race_id).values(ended_at=ended_at)
        )
        rated_as = {entry.player_id: entry.rated_as for entry in entries}
        return Recorded(
            await rate_race(connection, race_id, race.rule_set, rated_as, ranking, ended_at),
            await _scored(connection, race, ranking, won_ranked),
        )


async def _count_new_lines(
    connection: AsyncConnection,
    race: _Race,
    ranking: Sequence[RankEntry],
    finished_at: dict[str, datetime | None],
) -> None:
    """Set each result's ``standing`` and ``finish_day`` where it had none, and count the lines
    the results that statement changed add to the boards; as for the wins, the database says
    which results are new. A banned player's result gets no standing: it is on no board
    (``server.storage.fairplay``)."""
    e = _ENTRIES
    placed = {
        result.player_id: (
            ranks.standing(
                result.status, result.time_ms, result.on_foundations, result.reached_at_ms
            ),
            None if (at := finished_at[result.player_id]) is None else utc_day(at),
        )
        for result in ranking
    }
    new = (
        await connection.execute(
            update(_ENTRIES_TABLE)
            .where(
                e.race_id == race.id,
                e.player_id.in_(placed),
                e.standing.is_(None),
                ~exists().where(PlayerRow.id == e.player_id, PlayerRow.banned_at.is_not(None)),
            )
            .values(
                standing=case(
                    {player: literal(value[0], BigInteger()) for player, value in placed.items()},
                    value=e.player_id,
                ),
                finish_day=case(
                    {player: literal(value[1], Date()) for player, value in placed.items()},
                    value=e.player_id,
                ),
            )
            .returning(e.player_id, e.ranked)
        )
    ).all()
    status = {result.player_id: result for result in ranking}
    await ranks.add_counts(
        connection,
        [
            change
            for player_id, counted in new
            for change in ranks.result_changes(
                ranks.StoredResult(
                    race.rule_set,
                    race.seed,
                    race.daily_day,
                    counted,
                    status[player_id].status,
                    status[player_id].time_ms,
                    *placed[player_id],
                )
            )
        ],
    )


async def _scored(
    connection: AsyncConnection, race: _Race, ranking: Sequence[RankEntry], won_ranked: list[str]
) -> list[ranks.Scored]:
    """The race's ranked wins, and the wins its ranked winners now have."""
    if not won_ranked:
        return []
    w = PlayerWinsRow
    counts = (
        await connection.execute(
            select(w.player_id, w.wins).where(
                w.rule_set == race.rule_set, w.player_id.in_(won_ranked)
            )
        )
    ).all()
    times = {result.player_id: result.time_ms for result in ranking}
    return [
        *(
            (ranks.fastest_board(race.rule_set), f"{race.id}:{player_id}", times[player_id] or 0)
            for player_id in won_ranked
        ),
        *((ranks.wins_board(race.rule_set), player_id, -wins) for player_id, wins in counts),
    ]


async def _count_new_wins(
    connection: AsyncConnection,
    race: _Race,
    winners: list[str],
    finished_at: dict[str, datetime | None],
) -> None:
    """Mark the winners' entries ``won`` where they were not yet, and count those wins that
    are ranked (in ``player_wins``, and its buckets in ``board_counts``)."""
    if not winners:
        return
    e = _ENTRIES
    new = (
        await connection.execute(
            update(_ENTRIES_TABLE)
            .where(e.race_id == race.id, e.player_id.in_(winners), e.status != "won")
            .values(status="won")
            .returning(e.player_id, e.ranked)
        )
    ).all()
    wins: list[dict[str, Any]] = []
    for player_id, counted in new:
        if not counted:
            continue
        last_win_at = finished_at[player_id]
        if last_win_at is None:
            raise ValueError(f"{player_id} won race {race.id} without a time")
        wins.append(
            {
                "rule_set": race.rule_set,
                "player_id": player_id,
                "wins": 1,
                "last_win_at": last_win_at,
            }
        )
    if wins:
        await _count_wins(connection, wins)
        w = PlayerWinsRow
        now_has = (
            (
                await connection.execute(
                    select(w.wins).where(
                        w.rule_set == race.rule_set,
                        w.player_id.in_([win["player_id"] for win in wins]),
                    )
                )
            )
            .scalars()
            .all()
        )
        await ranks.add_counts(
            connection,
            [change for count in now_has for change in ranks.wins_changes(race.rule_set, count)],
        )


async def _count_wins(connection: AsyncConnection, wins: list[dict[str, Any]]) -> None:
    """Add one win per row to the player's count (``wins`` is 1 in each), a new row for a
    first win. The last win is the later of the two: results may be stored out of order (a
    result whose write was retried lands after a later race's). The SQL is the same on
    PostgreSQL and SQLite (``ON CONFLICT (key) DO UPDATE``; ``server.storage.dialect``)."""
    table = cast(Table, PlayerWinsRow.__table__)
    statement = dialect.insert(connection, table)
    now, new = table.c, statement.excluded
    await connection.execute(
        statement.on_conflict_do_update(
            index_elements=inspect(PlayerWinsRow).primary_key,
            set_={
                "wins": now.wins + new.wins,
                "last_win_at": case(
                    (new.last_win_at > now.last_win_at, new.last_win_at), else_=now.last_win_at
                ),
            },
        ),
        wins,
    )


async def recount_wins(sessions: Sessions) -> None:
    """Rebuild ``player_wins`` from ``entries`` (the ranked wins): for rows stored without
    ``record_results`` (bench/leaderboard_bench.py loads ``entries`` directly). Migration 0005
    fills the table with the same statement, written out there (a migration must not change
    with the code)."""
    e, table = _ENTRIES, cast(Table, PlayerWinsRow.__table__)
    async with sessions.begin() as session:
        await session.execute(table.delete())
        await session.execute(
            table.insert().from_select(
                ["rule_set", "player_id", "wins", "last_win_at"],
                select(e.rule_set, e.player_id, func.count(), func.max(e.finished_at))
                .where(e.status == "won", e.ranked == true())
                .group_by(e.rule_set, e.player_id),
            )
        )
        await ranks.recount(await session.connection())
