"""The deals: each day's daily deal and who has played it, and the solver's verdicts and the
winnable deals they found.

``daily_plays`` holds the rule "each player plays each daily deal once": its primary key is
(rule set, day, player), so the database refuses a second play however many requests race
for it (``server.storage.races.create_race``).
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Boolean, Date, Float, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from server.storage.models.base import Base, Seed, UTCDateTime


class DailyDealRow(Base):
    """The secret seed of one rule set's daily deal for one UTC day, drawn at random the first
    time anyone asks for it; revealed only once the day is over."""

    __tablename__ = "daily_deals"

    rule_set: Mapped[str] = mapped_column(String(40), primary_key=True)
    day: Mapped[date] = mapped_column(Date(), primary_key=True)
    seed: Mapped[int] = mapped_column(Seed())
    winnable: Mapped[bool | None] = mapped_column(Boolean())
    """True: taken from the winnable pool (``server.rooms.pool``); false: none was ready, a random
    deal; null: drawn before the pool existed."""


class DailyPlayRow(Base):
    """A player's one play of a rule set's daily deal on one UTC day, claimed when they open it.
    The primary key is the rule: a second claim conflicts, in the database itself."""

    __tablename__ = "daily_plays"

    rule_set: Mapped[str] = mapped_column(String(40), primary_key=True)
    day: Mapped[date] = mapped_column(Date(), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)


class DealVerdictRow(Base):
    """The solver's verdict on a deal (issue 12), searched after a race on it ends: ``result``
    won, lost or unknown, and for a win the ``line``, its moves one per line of text. Given
    with full knowledge of the hidden cards (``engine.solver.FULL_KNOWLEDGE``). One per deal
    and rules version: a later race on the same deal finds it there."""

    __tablename__ = "deal_verdicts"

    rule_set: Mapped[str] = mapped_column(String(40), primary_key=True)
    seed: Mapped[int] = mapped_column(Seed(), primary_key=True)
    algorithm: Mapped[int] = mapped_column(primary_key=True)
    rules: Mapped[int] = mapped_column(primary_key=True)
    result: Mapped[str] = mapped_column(String(8))
    line: Mapped[str] = mapped_column(Text())
    budget_s: Mapped[float] = mapped_column(Float())
    solved_at: Mapped[datetime] = mapped_column(UTCDateTime())


class WinnableDealRow(Base):
    """A secret deal the solver proved winnable, kept for a race that asks for one
    (``server.rooms.pool``); ``used_at`` is set when a race takes it: each is used once. Its
    winning line is in ``deal_verdicts``."""

    __tablename__ = "winnable_deals"

    rule_set: Mapped[str] = mapped_column(String(40), primary_key=True)
    seed: Mapped[int] = mapped_column(Seed(), primary_key=True)
    algorithm: Mapped[int]
    rules: Mapped[int]
    moves: Mapped[int]
    """The winning line's length."""
    solved_at: Mapped[datetime] = mapped_column(UTCDateTime())
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
