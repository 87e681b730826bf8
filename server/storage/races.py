"""Storing races and their moves, and reading a race back: plain async functions.

Each function takes the session factory first and runs in one transaction of its own. The
server calls the functions that write only through its writer (``server.storage.writer``), one at a
time, and retries them after an error. They are idempotent: entries and moves are inserted with
"insert or ignore" on their primary key (``ON CONFLICT DO NOTHING`` on PostgreSQL and SQLite
alike, ``server.storage.dialect``). A race's results are stored in ``server.storage.results``.

Leaderboards are read in ``server.storage.leaderboards``; which results they count is ``ranked``,
here, decided as each racer's entry is made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, TypedDict, cast

from sqlalchemy import Table, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import selectinload

from engine.moves import Move
from engine.replay import MoveLog, replay_trusted
from server.core import ratings
from server.core.ratings import DEFAULT_RULES, RatingRules
from server.core.terms import DealKind
from server.storage import dialect, holding
from server.storage.deals import claim_daily, give_back, verdict_fields
from server.storage.engine import Sessions
from server.storage.models import DealVerdictRow, EntryRow, MoveRow, PlayerRow, RaceRow
from server.storage.players import ID
from wire.commitment import commitment

_RACES = cast(Table, RaceRow.__table__)


async def create_race(
    sessions: Sessions,
    *,
    race_id: str,
    code: str,
    rule_set: str,
    deal_kind: DealKind,
    seed: int,
    algorithm: int,
    rules: int,
    host_id: str,
    seats_max: int,
    time_limit_s: int | None,
    holder: str | None = None,
    daily_day: date | None = None,
    winnable: bool | None = None,
    public: bool = False,
    quick: str | None = None,
    invited: Sequence[str] | None = None,
) -> RaceRow | None:
    """A race in its lobby, held by ``holder`` at epoch 1 (``server.storage.holding``). The
    commitment is computed here from the seed, as the race does.

    A daily deal's race is its host's one play of that day's deal: the play is claimed in the
    same transaction, so there is no claim without its race, nor a race without its claim.
    None, and nothing written, if the host has played that day's deal already, however many
    requests race for it (``claim_daily``). A retry of this very write that had committed
    (its answer lost) finds its race and gives it again. ``quick`` and ``invited``: a quick
    race's room and the players who alone may sit in it."""
    if (deal_kind == "daily") != (daily_day is not None):
        raise ValueError("a daily deal, and only a daily deal, has a daily day")
    now = datetime.now(UTC)
    race = RaceRow(
        id=race_id,
        code=code,
        rule_set=rule_set,
        deal_kind=deal_kind,
        seed=seed,
        algorithm=algorithm,
        rules=rules,
        commitment=commitment(seed),
        daily_day=daily_day,
        winnable=winnable,
        public=public,
        quick=quick,
        invited=None if invited is None else " ".join(invited),
        seats_max=seats_max,
        time_limit_s=time_limit_s,
        host_id=host_id,
        created_at=now,
        holder=holder,
        holder_epoch=1,
        held_until=holding.lease_end(now),
    )
    async with sessions.begin() as session:
        if daily_day is not None:
            written = await session.get(RaceRow, race_id)
            if written is not None:
                return written
            if not await claim_daily(session, host_id, rule_set, daily_day):
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


async def record_start(
    sessions: Sessions,
    race_id: str,
    started_at: datetime,
    player_ids: Sequence[str],
    epoch: int | None = None,
    addresses: Mapping[str, str] | None = None,
    rating: RatingRules = DEFAULT_RULES,
) -> None:
    """The race started with these racers: each gets an entry, ``racing``, ``ranked`` or not,
    and how they may be rated in it (``ratings.roles``: ``addresses`` are where each racer
    connected from, without them each racer counts as from an address of their own; whether
    each is a bot is their account's, ``players.bot``, as it is now). A banned player
    (``server.storage.fairplay``) is not ranked, and a race with one rates nobody (as ``ratings
    rebuild`` leaves it out). Safe to retry.
    ``Fenced`` if the race's epoch is no longer ``epoch``.

    The racers' player rows are locked first (in id order, as ``server.storage.ratings``
    does; ``FOR NO KEY UPDATE`` on PostgreSQL, which rows referring to them do not wait for),
    so that two races starting at once for one player on two workers decide one after the
    other: the second sees the first as a rated race under way."""
    async with sessions.begin() as session:
        await holding.check(session, race_id, epoch)
        # Core statements, not the ORM's unit of work: this is written for every race.
        race = (
            await session.execute(
                update(_RACES)
                .where(_RACES.c.id == race_id)
                .values(started_at=started_at)
                .returning(
                    _RACES.c.deal_kind,
                    _RACES.c.rule_set,
                    _RACES.c.seed,
                    _RACES.c.daily_day,
                    _RACES.c.quick,
                )
            )
        ).one()
        players = {
            row.id: row
            for row in await session.execute(
                select(PlayerRow.id, PlayerRow.created_at, PlayerRow.bot, PlayerRow.banned_at)
                .where(PlayerRow.id.in_(player_ids))
                .order_by(PlayerRow.id)
                .with_for_update(key_share=True)
            )
        }
        banned = any(player.banned_at is not None for player in players.values())
        recent = (
            await _rated_lately(session, race_id, started_at, player_ids, rating)
            if race.deal_kind == "secret" and race.quick != "unrated" and len(player_ids) > 1
            else {}
        )
        roles = ratings.roles(
            race.deal_kind,
            [
                ratings.Candidate(
                    player_id,
                    player_id if addresses is None else addresses.get(player_id, ""),
                    (started_at - players[player_id].created_at).total_seconds(),
                    recent.get(player_id, ()),
                    players[player_id].bot,
                )
                for player_id in player_ids
            ],
            rating,
            unrated=race.quick == "unrated",
        )
        await dialect.insert_new(
            await session.connection(),
            EntryRow,
            [
                {
                    "race_id": race_id,
                    "player_id": player_id,
                    "status": "racing",
                    "on_foundations": 0,
                    "moves": 0,
                    "rule_set": race.rule_set,
                    "seed": race.seed,
                    "daily_day": race.daily_day,
                    "ranked": players[player_id].banned_at is None
                    and ranked(race.deal_kind, race.daily_day, players[player_id].created_at),
                    "rated_as": None if banned else roles[player_id],
                    "rated_at": None if banned or roles[player_id] is None else started_at,
                }
                for player_id in player_ids
            ],
        )


async def _rated_lately(
    session: AsyncSession,
    race_id: str,
    started_at: datetime,
    player_ids: Sequence[str],
    rating: RatingRules,
) -> dict[str, list[tuple[float, bool]]]:
    """Each racer's other rated races started in the ``looks_back_s`` before ``started_at``:
    how long before, and whether still under way (``ratings.Candidate.recent``), read along
    ``ix_entries_rated``."""
    e = EntryRow
    rows = await session.execute(
        select(e.player_id, e.rated_at, e.ended_at).where(
            e.player_id.in_(player_ids),
            e.race_id != race_id,
            e.rated_at > started_at - timedelta(seconds=rating.looks_back_s),
        )
    )
    recent: dict[str, list[tuple[float, bool]]] = {}
    for player_id, rated_at, ended_at in rows:
        assert rated_at is not None  # (the query's range leaves out the nulls)
        recent.setdefault(player_id, []).append(
            ((started_at - rated_at).total_seconds(), ended_at is None)
        )
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
        await dialect.insert_new(
            await session.connection(), MoveRow, [dict(move) for move in moves]
        )


async def unfinished_race_codes(sessions: Sessions) -> list[str]:
    """The room codes of the races with no end yet."""
    async with sessions.begin() as session:
        return list(await session.scalars(select(RaceRow.code).where(RaceRow.ended_at.is_(None))))


async def delete_unstarted_race(sessions: Sessions, race_id: str, epoch: int) -> None:
    """Delete a race that never started (its lobby closed), unless another process holds it
    now (it is theirs), and give its winnable deal back to the pool (``deals.give_back``)."""
    async with sessions.begin() as session:
        deleted = (
            await session.execute(
                delete(RaceRow)
                .where(
                    RaceRow.id == race_id,
                    RaceRow.started_at.is_(None),
                    RaceRow.holder_epoch == epoch,
                )
                .returning(RaceRow.rule_set, RaceRow.seed, RaceRow.winnable)
            )
        ).first()
        if deleted is not None and deleted.winnable:
            await give_back(session, deleted.rule_set, deleted.seed)


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
        race = await session.get(
            RaceRow,
            race_id,
            options=[
                selectinload(RaceRow.entries).selectinload(EntryRow.player),
                selectinload(RaceRow.entries).selectinload(EntryRow.move_log),
            ],
        )
        if race is None:
            return None
        revealed = race.ended_at is not None and (
            race.daily_day is None or race.daily_day < utc_day(now)
        )
        verdict = (
            await session.get(
                DealVerdictRow, (race.rule_set, race.seed, race.algorithm, race.rules)
            )
            if revealed
            else None
        )
    entries = sorted(
        race.entries, key=lambda entry: (entry.rank is None, entry.rank or 0, entry.player.name)
    )
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
        "players": [
            {"player_id": entry.player_id, "name": entry.player.name, "bot": entry.player.bot}
            for entry in entries
        ],
        "results": [
            {
                "rank": entry.rank,
                "player_id": entry.player_id,
                "status": entry.status,
                "time_ms": entry.time_ms,
                "on_foundations": entry.on_foundations,
                "reached_at_ms": entry.reached_at_ms,
                "moves": entry.moves,
                "bot": entry.player.bot,
            }
            for entry in entries
            if entry.rank is not None
        ],
        "logs": {entry.player_id: _move_log(race, entry) for entry in entries}
        if revealed
        else None,
        **verdict_fields(verdict),
    }


def _move_log(race: RaceRow, entry: EntryRow) -> dict[str, Any]:
    """The racer's move log, with the outcome their moves reach (found by replaying them)."""
    moves = tuple(Move.parse(move.text) for move in entry.move_log)
    game = replay_trusted(
        MoveLog(race.rule_set, race.seed, race.algorithm, moves, rules=race.rules)
    )
    return MoveLog.of(game, [move.at_ms for move in entry.move_log]).to_json()


def utc_day(now: datetime) -> date:
    if now.tzinfo is None:
        raise ValueError(f"a naive datetime has no UTC day: {now!r}")
    return now.astimezone(UTC).date()
