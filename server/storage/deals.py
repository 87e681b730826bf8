"""Deals: the daily deal drawn once per rule set and day, and each player's one play of it; the
solver's verdicts on deals; and the pool of secret deals proved winnable (``server.rooms.pool``
fills it and hands its deals to rooms).

Each function that takes the session factory runs in one transaction of its own; those that
take a session run in the caller's.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from datetime import date, datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from engine.deal import DEAL_ALGORITHM
from engine.game import RULES_VERSION
from engine.solver import FULL_KNOWLEDGE
from server.storage import dialect
from server.storage.engine import Sessions
from server.storage.models import DailyDealRow, DailyPlayRow, DealVerdictRow, WinnableDealRow

TAKE_TRIES = 3


# -- the daily deal ---------------------------------------------------------------------------


async def claim_daily(session: AsyncSession, player_id: str, rule_set: str, day: date) -> bool:
    """Claim the player's one play of that day's daily deal: True for the first claim, False
    for every other, however many race for it. The database decides (the primary key of
    ``daily_plays``): of simultaneous inserts exactly one is stored, and the others find it
    there and insert nothing."""
    connection = await session.connection()
    claimed = (
        await connection.execute(
            dialect.insert_or_ignore(connection, DailyPlayRow)
            .values(rule_set=rule_set, day=day, player_id=player_id)
            .returning(DailyPlayRow.player_id)
        )
    ).first()
    return claimed is not None


async def daily_seed(
    sessions: Sessions,
    rule_set: str,
    day: date,
    pooled: Callable[[AsyncSession], Awaitable[int | None]] | None = None,
) -> tuple[int, bool | None]:
    """The day's secret seed for the rule set, and whether it was proved winnable: drawn once,
    the first time it is asked for (two servers asking at once agree, as the insert keeps
    whichever came first). The draw takes a deal from the winnable pool when ``pooled`` gives
    one (``server.rooms.pool``), else a random deal (``winnable`` false; null when not asked)."""
    async with sessions.begin() as session:
        row = await session.get(DailyDealRow, (rule_set, day))
        if row is None:
            taken = None if pooled is None else await pooled(session)
            await dialect.insert_new(
                await session.connection(),
                DailyDealRow,
                [
                    {
                        "rule_set": rule_set,
                        "day": day,
                        "seed": secrets.randbits(64) if taken is None else taken,
                        "winnable": None if pooled is None else taken is not None,
                    }
                ],
            )
            row = await session.get_one(DailyDealRow, (rule_set, day))
        return row.seed, row.winnable


# -- the solver's verdicts --------------------------------------------------------------------


async def solver_fields(sessions: Sessions, record: dict[str, Any]) -> dict[str, Any]:
    """``winnable`` and ``solver`` for a revealed race record (its deal's verdict, as
    ``race_record`` gives them): to look again for a verdict stored after the record was
    read, without reading the race again."""
    async with sessions.begin() as session:
        verdict = await session.get(
            DealVerdictRow,
            (record["rule_set"], int(record["seed"]), record["algorithm"], record["rules"]),
        )
    return verdict_fields(verdict)


def verdict_fields(verdict: DealVerdictRow | None) -> dict[str, Any]:
    """``winnable`` (true, false, or null: not searched yet, not revealed yet, or undecided)
    and ``solver``, the verdict with its winning line (null until searched and revealed)."""
    if verdict is None:
        return {"winnable": None, "solver": None}
    line = verdict.line.split("\n") if verdict.line else []
    return {
        "winnable": {"won": True, "lost": False}.get(verdict.result),
        "solver": {
            "result": verdict.result,
            "moves": len(line),
            "line": line,
            "budget_s": verdict.budget_s,
            "knowledge": FULL_KNOWLEDGE,
        },
    }


async def save_verdict(
    sessions: Sessions,
    rule_set: str,
    seed: int,
    algorithm: int,
    rules: int,
    result: str,
    line: list[str],
    budget_s: float,
    now: datetime,
) -> None:
    """Store the solver's verdict on a deal; a deal searched already keeps its first one."""
    async with sessions.begin() as session:
        connection = await session.connection()
        await connection.execute(
            dialect.insert_or_ignore(connection, DealVerdictRow),
            [
                {
                    "rule_set": rule_set,
                    "seed": seed,
                    "algorithm": algorithm,
                    "rules": rules,
                    "result": result,
                    "line": "\n".join(line),
                    "budget_s": budget_s,
                    "solved_at": now,
                }
            ],
        )


# -- the winnable pool ------------------------------------------------------------------------


async def ready_counts(sessions: Sessions) -> dict[str, int]:
    """Deals ready (proved winnable, unused) per rule set, for this deal algorithm and rules."""
    async with sessions.begin() as session:
        rows = await session.execute(
            select(WinnableDealRow.rule_set, func.count())
            .where(
                WinnableDealRow.used_at.is_(None),
                WinnableDealRow.algorithm == DEAL_ALGORITHM,
                WinnableDealRow.rules == RULES_VERSION,
            )
            .group_by(WinnableDealRow.rule_set)
        )
        return {rule_set: count for rule_set, count in rows}


async def add_winnable(
    sessions: Sessions, rule_set: str, seed: int, line: list[str], budget_s: float, now: datetime
) -> None:
    """Keep a deal the solver won: its verdict (with the line), then its place in the pool."""
    await save_verdict(
        sessions, rule_set, seed, DEAL_ALGORITHM, RULES_VERSION, "won", line, budget_s, now
    )
    async with sessions.begin() as session:
        if await session.get(WinnableDealRow, (rule_set, seed)) is None:
            session.add(
                WinnableDealRow(
                    rule_set=rule_set,
                    seed=seed,
                    algorithm=DEAL_ALGORITHM,
                    rules=RULES_VERSION,
                    moves=len(line),
                    solved_at=now,
                )
            )


async def take_winnable(sessions: Sessions, rule_set: str, now: datetime) -> int | None:
    """Mark the oldest ready deal of the rule set used and give its seed; None if there is
    none. The update takes it only while it is unused, so two takers never get the same one."""
    async with sessions.begin() as session:
        return await take_in(session, rule_set, now)


async def take_in(session: AsyncSession, rule_set: str, now: datetime) -> int | None:
    """``take_winnable`` in a transaction under way (the daily deal's draw)."""
    table = WinnableDealRow
    for _ in range(TAKE_TRIES):
        seed = await session.scalar(
            select(table.seed)
            .where(
                table.rule_set == rule_set,
                table.used_at.is_(None),
                table.algorithm == DEAL_ALGORITHM,
                table.rules == RULES_VERSION,
            )
            .order_by(table.solved_at, table.seed)
            .limit(1)
        )
        if seed is None:
            return None
        taken = await session.execute(
            update(table)
            .where(table.rule_set == rule_set, table.seed == seed, table.used_at.is_(None))
            .values(used_at=now)
        )
        if taken.rowcount == 1:  # type: ignore[attr-defined]
            return int(seed)
    return None


async def give_back(session: AsyncSession, rule_set: str, seed: int) -> None:
    """Put a deal taken by a room whose race never started back in the pool, in the
    transaction that deletes that race: nobody was dealt it, and its commitment was never
    published (a lobby shows none), so it is as good as unused."""
    await session.execute(
        update(WinnableDealRow)
        .where(WinnableDealRow.rule_set == rule_set, WinnableDealRow.seed == seed)
        .values(used_at=None)
    )
