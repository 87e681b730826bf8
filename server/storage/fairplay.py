"""Fair play in the database: the checks of rated races, results held off the boards and the
ratings while flagged, the operator's review (clear) and bans.

A result is *held* while its check says ``flagged`` (until an operator clears it) and for ever
once its player is banned. A held result is on no board: its entry is made unranked and its
``standing`` taken away (the fastest, most wins and daily boards count ranked results only, a
deal's board those with a standing), and the counts it added (``player_wins``,
``board_counts``) are taken back, in the same transaction; clearing it recomputes both from the
stored facts (``server.storage.races.ranked``, ``server.storage.ranks.standing``) and counts it
again. A race with a held result rates nobody: its rule set's ratings are rebuilt without it
(``server.storage.ratings.rebuild``), in the same transaction, when a result is held or put
back. A rank cache (Redis) is the caller's to rebuild after a change
(``server.cluster.rank_cache.RedisRanks.rebuild``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, Row, Table, and_, func, or_, select, true, update
from sqlalchemy.ext.asyncio import AsyncConnection

from server.core.fairplay import Verdict
from server.storage import dialect, ranks
from server.storage.engine import Sessions
from server.storage.models import EntryRow, FairPlayRow, MoveRow, PlayerRow, PlayerWinsRow, RaceRow
from server.storage.models.fairplay import CLEAN, CLEARED, FLAGGED
from server.storage.races import ranked
from server.storage.ratings import rebuild_in

_ENTRIES = cast(Table, EntryRow.__table__)
_FAIR_PLAY = cast(Table, FairPlayRow.__table__)
_WINS = cast(Table, PlayerWinsRow.__table__)


@dataclass(frozen=True, slots=True)
class RaceToCheck:
    """What the check of a finished race reads: its deal and each racer's stored moves (text,
    ms from the start), in order."""

    race_id: str
    rule_set: str
    seed: int
    algorithm: int
    rules: int
    moves: dict[str, list[tuple[str, int]]]


@dataclass(frozen=True, slots=True)
class Check:
    """One racer's check in one race, as the operator sees it."""

    race_id: str
    player_id: str
    name: str
    rule_set: str
    status: str
    flagged: bool
    signals: dict[str, Any]
    checked_at: datetime
    reviewed_at: datetime | None
    banned: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "race_id": self.race_id,
            "player_id": self.player_id,
            "name": self.name,
            "rule_set": self.rule_set,
            "status": self.status,
            "flagged": self.flagged,
            "signals": self.signals,
            "checked_at": self.checked_at.isoformat(),
            "reviewed_at": None if self.reviewed_at is None else self.reviewed_at.isoformat(),
            "banned": self.banned,
        }


async def race_to_check(sessions: Sessions, race_id: str) -> RaceToCheck:
    """The race's deal and its racers' stored moves."""
    async with sessions.begin() as session:
        race = (
            await session.execute(
                select(RaceRow.rule_set, RaceRow.seed, RaceRow.algorithm, RaceRow.rules).where(
                    RaceRow.id == race_id
                )
            )
        ).one()
        m = MoveRow
        rows = await session.execute(
            select(m.player_id, m.text, m.at_ms)
            .where(m.race_id == race_id)
            .order_by(m.player_id, m.index)
        )
        moves: dict[str, list[tuple[str, int]]] = {}
        for player_id, text, at_ms in rows:
            moves.setdefault(player_id, []).append((text, at_ms))
    return RaceToCheck(race_id, race.rule_set, race.seed, race.algorithm, race.rules, moves)


async def record_checks(
    sessions: Sessions, race_id: str, verdicts: Mapping[str, Verdict], now: datetime
) -> list[str]:
    """Store each racer's check (a race checked already keeps its first checks); hold the
    flagged results and rebuild the rule set's ratings without the race. Returns who was
    flagged."""
    rows = [
        {
            "race_id": race_id,
            "player_id": player_id,
            "signals": {**verdict.signals.to_json(), "reasons": list(verdict.reasons)},
            "flagged": verdict.flagged,
            "status": FLAGGED if verdict.flagged else CLEAN,
            "checked_at": now,
            "reviewed_at": None,
        }
        for player_id, verdict in verdicts.items()
    ]
    async with sessions.begin() as session:
        connection = await session.connection()
        new = (
            await connection.execute(
                dialect.insert(connection, _FAIR_PLAY)
                .on_conflict_do_nothing(index_elements=["race_id", "player_id"])
                .returning(_FAIR_PLAY.c.player_id, _FAIR_PLAY.c.flagged),
                rows,
            )
        ).all()
        flagged = sorted(player_id for player_id, was_flagged in new if was_flagged)
        if flagged:
            await _hold(connection, _entry(race_id, flagged))
            await rebuild_in(session, await _rule_sets(connection, _entry(race_id, flagged)))
    return flagged


async def flagged_checks(sessions: Sessions, limit: int = 100) -> list[Check]:
    """The results waiting for review, oldest first."""
    return await _checks(sessions, FairPlayRow.status == FLAGGED, limit)


async def race_checks(sessions: Sessions, race_id: str) -> list[Check]:
    """Every check of a race's racers (none: the race was not rated, or not checked yet)."""
    return await _checks(sessions, FairPlayRow.race_id == race_id, None)


async def clear(sessions: Sessions, race_id: str, now: datetime) -> list[str]:
    """An operator reviewed the race's flagged results and found them fair: they are
    ``cleared``, back on the boards (unless their player is banned) and in the ratings.
    Returns whose results were put back (none: nothing of the race was flagged)."""
    async with sessions.begin() as session:
        connection = await session.connection()
        f = _FAIR_PLAY.c
        cleared = list(
            (
                await connection.execute(
                    update(_FAIR_PLAY)
                    .where(f.race_id == race_id, f.status == FLAGGED)
                    .values(status=CLEARED, reviewed_at=now)
                    .returning(f.player_id)
                )
            ).scalars()
        )
        if cleared:
            await _put_back(connection, _entry(race_id, cleared))
            await rebuild_in(session, await _rule_sets(connection, _entry(race_id, cleared)))
    return sorted(cleared)


async def ban(sessions: Sessions, player_id: str, now: datetime) -> bool:
    """Ban the player: every result of theirs leaves every board, and the ratings of the rule
    sets they raced in are rebuilt without their races; a race they are in now rates nobody
    when it ends. False: no such player (a player banned already stays banned from the first
    time)."""
    async with sessions.begin() as session:
        connection = await session.connection()
        found = (
            await connection.execute(
                select(PlayerRow.banned_at).where(PlayerRow.id == player_id).with_for_update()
            )
        ).one_or_none()
        if found is None:
            return False
        if found.banned_at is None:
            await connection.execute(
                update(PlayerRow).where(PlayerRow.id == player_id).values(banned_at=now)
            )
        theirs = _ENTRIES.c.player_id == player_id
        await _hold(connection, theirs)
        e = _ENTRIES.c
        racing = select(e.race_id).where(theirs, e.status == "racing")
        await connection.execute(  # a race they are in now rates nobody when it ends
            update(_ENTRIES).where(e.race_id.in_(racing)).values(rated_as=None, rated_at=None)
        )
        await rebuild_in(session, await _rule_sets(connection, theirs))
    return True


# -- holding results off the boards -------------------------------------------------------------


def _entry(race_id: str, player_ids: Sequence[str]) -> ColumnElement[bool]:
    e = _ENTRIES.c
    return and_(e.race_id == race_id, e.player_id.in_(player_ids))


async def _rule_sets(connection: AsyncConnection, entries: ColumnElement[bool]) -> list[str]:
    return list(
        (await connection.execute(select(_ENTRIES.c.rule_set).where(entries).distinct())).scalars()
    )


def _stored(row: Row[Any], is_ranked: bool, standing: int) -> ranks.StoredResult:
    return ranks.StoredResult(
        row.rule_set,
        row.seed,
        row.daily_day,
        is_ranked,
        row.status,
        row.time_ms,
        standing,
        row.finish_day,
    )


async def _hold(connection: AsyncConnection, entries: ColumnElement[bool]) -> None:
    """Take these entries off every board: unranked, no standing, and the lines and wins they
    added counted out."""
    e = _ENTRIES.c
    rows = (
        await connection.execute(
            select(_ENTRIES)
            .where(entries, or_(e.ranked == true(), e.standing.is_not(None)))
            .with_for_update()
        )
    ).all()
    if not rows:
        return
    changes: list[ranks.Change] = []
    for row in rows:
        if row.standing is not None:
            changes += [
                (board, bucket, -lines)
                for board, bucket, lines in ranks.result_changes(
                    _stored(row, row.ranked, row.standing)
                )
            ]
    await connection.execute(update(_ENTRIES).where(entries).values(ranked=False, standing=None))
    won = [row for row in rows if row.ranked and row.status == "won"]
    for rule_set, player_id in sorted({(row.rule_set, row.player_id) for row in won}):
        lost = sum((row.rule_set, row.player_id) == (rule_set, player_id) for row in won)
        changes += await _recount_wins(connection, rule_set, player_id, -lost)
    await ranks.add_counts(connection, changes)


async def _put_back(connection: AsyncConnection, entries: ColumnElement[bool]) -> None:
    """Put these held entries back on the boards, as storing their results put them there
    (their players' banned results stay held)."""
    e = _ENTRIES.c
    rows = (
        await connection.execute(
            select(_ENTRIES, RaceRow.deal_kind, PlayerRow.created_at)
            .join(RaceRow, RaceRow.id == e.race_id)
            .join(PlayerRow, PlayerRow.id == e.player_id)
            .where(
                entries,
                PlayerRow.banned_at.is_(None),
                e.standing.is_(None),
                e.status != "racing",
            )
            .with_for_update(of=_ENTRIES)
        )
    ).all()
    changes: list[ranks.Change] = []
    for row in rows:
        is_ranked = ranked(row.deal_kind, row.daily_day, row.created_at)
        standing = ranks.standing(row.status, row.time_ms, row.on_foundations, row.reached_at_ms)
        await connection.execute(
            update(_ENTRIES)
            .where(e.race_id == row.race_id, e.player_id == row.player_id)
            .values(ranked=is_ranked, standing=standing)
        )
        changes += ranks.result_changes(_stored(row, is_ranked, standing))
        if is_ranked and row.status == "won":
            changes += await _recount_wins(connection, row.rule_set, row.player_id, 1)
    await ranks.add_counts(connection, changes)


async def _recount_wins(
    connection: AsyncConnection, rule_set: str, player_id: str, change: int
) -> list[ranks.Change]:
    """Set the player's ``player_wins`` row from their ranked wins as ``entries`` now has them
    (``change`` more or fewer than before), and return how the most wins board's counts
    move."""
    e = _ENTRIES.c
    wins, last = (
        await connection.execute(
            select(func.count(), func.max(e.finished_at)).where(
                e.rule_set == rule_set,
                e.player_id == player_id,
                e.status == "won",
                e.ranked == true(),
            )
        )
    ).one()
    w = _WINS.c
    await connection.execute(_WINS.delete().where(w.rule_set == rule_set, w.player_id == player_id))
    if wins:
        await connection.execute(
            _WINS.insert().values(
                rule_set=rule_set, player_id=player_id, wins=wins, last_win_at=last
            )
        )
    before = wins - change
    board = ranks.wins_board(rule_set)
    return [
        *([(board, -before, -1)] if before else []),
        *([(board, -wins, 1)] if wins else []),
    ]


async def _checks(sessions: Sessions, where: ColumnElement[bool], limit: int | None) -> list[Check]:
    f = FairPlayRow
    query = (
        select(
            f.race_id,
            f.player_id,
            PlayerRow.name,
            RaceRow.rule_set,
            f.status,
            f.flagged,
            f.signals,
            f.checked_at,
            f.reviewed_at,
            PlayerRow.banned_at,
        )
        .join(PlayerRow, PlayerRow.id == f.player_id)
        .join(RaceRow, RaceRow.id == f.race_id)
        .where(where)
        .order_by(f.checked_at, f.race_id, f.player_id)
    )
    if limit is not None:
        query = query.limit(limit)
    async with sessions.begin() as session:
        rows = (await session.execute(query)).all()
    return [
        Check(
            row.race_id,
            row.player_id,
            row.name,
            row.rule_set,
            row.status,
            row.flagged,
            row.signals,
            row.checked_at,
            row.reviewed_at,
            row.banned_at is not None,
        )
        for row in rows
    ]
