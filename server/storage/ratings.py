"""Ratings in the database: rating a race as its result is stored, the rated board, and
rebuilding every rating from the stored races.

``rate_race`` runs inside ``server.storage.results.record_results``' transaction, so a result and
the ratings it changes are committed together or not at all. It reads, rates and writes the
racers' ratings in that one transaction: on PostgreSQL the rows are locked first (a row for a
new player inserted, then every racer's row read ``FOR UPDATE``, in player id order so that
two races never wait for each other in a circle), so two races that finish at once for the
same player are rated one after the other, the second from the first's result. SQLite has one
writer at a time: the insert takes the database's write lock before anything is read. What a
race changed is kept in ``rating_changes`` (written with a plain insert: the primary key
refuses a second rating of the same race, and the writer's retry then finds the first).

Who a race rates was decided at its start and stored with each entry (``entries.rated_as``,
``server.core.ratings``): ``rebuild`` rates every stored race again, in the order they finished,
with the same code and from the same stored facts, so the table it leaves is the one the live
updates made. The rated board shows the players with enough rated races (``min_races``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from itertools import groupby
from typing import Any, cast

from sqlalchemy import (
    Table,
    bindparam,
    delete,
    func,
    insert,
    literal,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession, async_sessionmaker

from server.core import ratings
from server.core.ratings import Rating
from server.storage import dialect
from server.storage.models import (
    EntryRow,
    FairPlayRow,
    PlayerRow,
    RaceRow,
    RatingChangeRow,
    RatingRow,
)
from server.storage.models.fairplay import FLAGGED
from wire.protocol import RankEntry
from wire.ratings import MU, SHOWN_BASE, SHOWN_PER_MU, RatingBoard, RatingChange, RatingLine

Sessions = async_sessionmaker[AsyncSession]
_RATINGS = cast(Table, RatingRow.__table__)
_CHANGES = cast(Table, RatingChangeRow.__table__)


async def rate_race(
    connection: AsyncConnection,
    race_id: str,
    rule_set: str,
    rated_as: Mapping[str, str | None],
    ranking: Sequence[RankEntry],
    ended_at: datetime,
) -> dict[str, RatingChange]:
    """Rate a finished race in the caller's transaction, given how each racer may be rated in
    it (``entries.rated_as``, by player id): each rated racer's change
    (``ratings.rated_ranking``: none when the race rates nobody). A race rated already gives
    its stored changes. Core statements, as the rest of storing a result."""
    ranking = ratings.rated_ranking(ranking, rated_as)
    if not ranking:
        return {}
    players = sorted(entry.player_id for entry in ranking)
    held = await _locked(connection, rule_set, players, ended_at)
    c = _CHANGES.c
    done = await connection.execute(
        select(c.player_id, c.mu_before, c.sigma_before, c.mu_after, c.sigma_after).where(
            c.race_id == race_id
        )
    )
    stored = {
        row.player_id: RatingChange(
            before=Rating(row.mu_before, row.sigma_before).wire(),
            after=Rating(row.mu_after, row.sigma_after).wire(),
        )
        for row in done
    }
    if stored:
        return stored
    before = {player_id: rating for player_id, (rating, races) in held.items() if races}
    after = ratings.rate(ranking, before)
    r = _RATINGS.c
    await connection.execute(
        update(_RATINGS).where(r.rule_set == rule_set, r.player_id == bindparam("racer")),
        [
            {
                "racer": player_id,
                "mu": rating.mu,
                "sigma": rating.sigma,
                "ordinal": rating.ordinal,
                "races": held[player_id][1] + 1,
                "updated_at": ended_at,
            }
            for player_id, rating in after.items()
        ],
    )
    await connection.execute(
        insert(_CHANGES),
        [
            {
                "race_id": race_id,
                "player_id": player_id,
                "mu_before": before.get(player_id, ratings.NEW).mu,
                "sigma_before": before.get(player_id, ratings.NEW).sigma,
                "mu_after": rating.mu,
                "sigma_after": rating.sigma,
            }
            for player_id, rating in after.items()
        ],
    )
    return ratings.changes(before, after)


async def _locked(
    connection: AsyncConnection, rule_set: str, players: list[str], now: datetime
) -> dict[str, tuple[Rating, int]]:
    """Each racer's rating and how many rated races made it, their rows locked until the
    transaction ends; a new player's row is made first (a new rating, no races yet), so that
    there is a row to lock."""
    new = ratings.NEW
    values = [
        {
            "rule_set": rule_set,
            "player_id": player_id,
            "mu": new.mu,
            "sigma": new.sigma,
            "ordinal": new.ordinal,
            "races": 0,
            "updated_at": now,
        }
        for player_id in players
    ]
    await connection.execute(
        dialect.insert(connection, _RATINGS).on_conflict_do_nothing(
            index_elements=["rule_set", "player_id"]
        ),
        values,
    )
    r = _RATINGS.c
    found = await connection.execute(
        select(r.player_id, r.mu, r.sigma, r.races)
        .where(r.rule_set == rule_set, r.player_id.in_(players))
        .order_by(r.player_id)
        .with_for_update()
    )
    return {row.player_id: (Rating(row.mu, row.sigma), row.races) for row in found}


# -- the rated board ----------------------------------------------------------------------------


async def rating_board(
    sessions: Sessions, rule_set: str, limit: int, around: str | None = None, min_races: int = 1
) -> RatingBoard:
    """The rule set's rated players with ``min_races`` rated races or more (the others'
    ratings are provisional, and not shown) by ordinal, highest first: the top ``limit``, or
    with ``around`` the ``limit`` lines around that player's (and their line as ``me``).

    Lines are in the order (ordinal, player id), descending, along ``ix_ratings_board``; a
    line's rank is one more than the number of players with a higher ordinal, so equal ordinals
    share a rank (1, 2, 2, 4), and a line's place in the window, after a tie, gives the rest."""
    if limit < 1:
        raise ValueError(f"a board shows at least one line, not {limit}")
    r = RatingRow
    key = tuple_(r.ordinal, r.player_id)
    min_races = max(1, min_races)
    lines = (
        select(r.player_id, PlayerRow.name, PlayerRow.bot, r.mu, r.sigma, r.ordinal, r.races)
        .join(PlayerRow, PlayerRow.id == r.player_id)
        .where(r.rule_set == rule_set, r.races >= min_races)
    )
    async with sessions.begin() as session:
        mine = None if around is None else await session.get(RatingRow, (rule_set, around))
        if mine is not None and mine.races < min_races:
            mine = None
        if mine is None:
            rows = list(
                (
                    await session.execute(
                        lines.order_by(r.ordinal.desc(), r.player_id.desc()).limit(limit)
                    )
                ).all()
            )
        else:
            at = tuple_(mine.ordinal, mine.player_id)
            above = list(
                (
                    await session.execute(
                        lines.where(key > at)
                        .order_by(r.ordinal, r.player_id)
                        .limit((limit - 1) // 2)
                    )
                ).all()
            )[::-1]
            rows = above + list(
                (
                    await session.execute(
                        lines.where(key <= at)
                        .order_by(r.ordinal.desc(), r.player_id.desc())
                        .limit(limit - len(above))
                    )
                ).all()
            )
        before = better = 0
        if rows:  # the lines above the window, and those of them with a higher ordinal
            first = rows[0]
            before, better = (
                await session.execute(
                    select(func.count(), func.count().filter(r.ordinal > first.ordinal)).where(
                        r.rule_set == rule_set,
                        r.races >= min_races,
                        key
                        > tuple_(
                            literal(first.ordinal, r.ordinal.type),
                            literal(first.player_id, r.player_id.type),
                        ),
                    )
                )
            ).one()
    made: list[RatingLine] = []
    for number, row in enumerate(rows):
        if not made:
            rank = better + 1
        elif row.ordinal == made[-1].ordinal:
            rank = made[-1].rank
        else:
            rank = before + number + 1
        made.append(
            RatingLine(
                rank=rank,
                player_id=row.player_id,
                name=row.name,
                mu=row.mu,
                sigma=row.sigma,
                ordinal=row.ordinal,
                races=row.races,
                bot=row.bot,
            )
        )
    me = next(
        (line for line in made if mine is not None and line.player_id == mine.player_id), None
    )
    return RatingBoard(rule_set=rule_set, min_races=min_races, lines=made, me=me)


# -- rebuilding ----------------------------------------------------------------------------------


async def rebuild(sessions: Sessions) -> int:
    """Rate every stored race again from nothing, in the order the races finished (their end,
    then their id), as ``rate_race`` rated them live; return how many races were rated. One
    transaction: the board never shows a half-rebuilt table. Safe while servers run."""
    async with sessions.begin() as session:
        return await rebuild_in(session)


async def rebuild_in(session: AsyncSession, rule_sets: Sequence[str] | None = None) -> int:
    """``rebuild``, in the caller's transaction, of these rule sets' ratings only (None: every
    rule set's). A race with a result held for fair play (``server.storage.fairplay``: flagged
    and not reviewed, or a banned player's) rates nobody: it is left out."""
    if rule_sets is not None and not rule_sets:
        return 0
    e = EntryRow
    held_races = (
        select(FairPlayRow.race_id)
        .where(FairPlayRow.status == FLAGGED)
        .union(
            select(e.race_id)
            .join(PlayerRow, PlayerRow.id == e.player_id)
            .where(PlayerRow.banned_at.is_not(None))
        )
    )
    results = (
        select(
            e.race_id,
            e.player_id,
            e.rank,
            e.status,
            e.time_ms,
            e.on_foundations,
            e.reached_at_ms,
            e.moves,
            e.rated_as,
            RaceRow.rule_set,
            RaceRow.ended_at,
        )
        .join(RaceRow, RaceRow.id == e.race_id)
        .where(RaceRow.ended_at.is_not(None), e.rank.is_not(None), e.race_id.not_in(held_races))
        .order_by(RaceRow.ended_at, RaceRow.id, e.rank, e.player_id)  # (a place may be shared)
    )
    changes_of = delete(RatingChangeRow)
    ratings_of = delete(RatingRow)
    if rule_sets is not None:
        results = results.where(RaceRow.rule_set.in_(rule_sets))
        changes_of = changes_of.where(
            RatingChangeRow.race_id.in_(select(RaceRow.id).where(RaceRow.rule_set.in_(rule_sets)))
        )
        ratings_of = ratings_of.where(RatingRow.rule_set.in_(rule_sets))
    if (await session.connection()).dialect.name == "postgresql":
        # Races finishing meanwhile wait, then are rated from the rebuilt table (SQLite's
        # one writer at a time does the same by itself).
        await session.execute(text("LOCK TABLE ratings IN EXCLUSIVE MODE"))
    await session.execute(changes_of)
    await session.execute(ratings_of)
    current: dict[tuple[str, str], RatingRow] = {}
    changes: list[dict[str, Any]] = []
    rated = 0
    rows = (await session.execute(results)).all()
    for race_id, group in groupby(rows, key=lambda row: row.race_id):
        entries = list(group)
        first = entries[0]
        ranking = ratings.rated_ranking(
            [
                RankEntry(
                    rank=row.rank,
                    player_id=row.player_id,
                    name="",
                    status=row.status,
                    time_ms=row.time_ms,
                    on_foundations=row.on_foundations,
                    reached_at_ms=row.reached_at_ms,
                    moves=row.moves,
                )
                for row in entries
            ],
            {row.player_id: row.rated_as for row in entries},
        )
        if not ranking:
            continue
        rated += 1
        before = {
            entry.player_id: Rating(held.mu, held.sigma)
            for entry in ranking
            if (held := current.get((first.rule_set, entry.player_id))) is not None
        }
        for player_id, rating in ratings.rate(ranking, before).items():
            old = before.get(player_id, ratings.NEW)
            changes.append(
                {
                    "race_id": race_id,
                    "player_id": player_id,
                    "mu_before": old.mu,
                    "sigma_before": old.sigma,
                    "mu_after": rating.mu,
                    "sigma_after": rating.sigma,
                }
            )
            held = current.setdefault(
                (first.rule_set, player_id),
                RatingRow(rule_set=first.rule_set, player_id=player_id, races=0),
            )
            held.mu, held.sigma, held.ordinal = rating.mu, rating.sigma, rating.ordinal
            held.races += 1
            held.updated_at = first.ended_at
    session.add_all(current.values())
    if changes:
        await session.execute(insert(_CHANGES), changes)
    return rated


async def shown_rating(sessions: Sessions, player_id: str, rule_set: str) -> int:
    """A player's rating in a rule set as players are shown it (``wire.ratings``): what the
    quick race's queue matches on; a player never rated there has a new player's, 1500."""
    async with sessions() as session:
        row = await session.get(RatingRow, (rule_set, player_id))
    return round(SHOWN_BASE + SHOWN_PER_MU * ((MU if row is None else row.mu) - MU))
