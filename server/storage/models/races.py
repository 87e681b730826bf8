"""The races, each racer's entry in one, and the moves: the facts a race is replayed from.

``entries`` (one row per racer per race) repeats the race's rule set, seed, daily day and end
time, so that every time board is a query on that one table along one of its indexes, and says
whether the result is ``ranked`` (counts on the fastest, most wins and daily boards).
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    String,
    false,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from server.storage.models.base import Base, Seed, UTCDateTime
from server.storage.models.players import PlayerRow


class RaceRow(Base):
    """A race: its deal (rule set, seed, algorithm), the rules version its games are played
    under, and when it was created, started, ended."""

    __tablename__ = "races"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    code: Mapped[str] = mapped_column(String(16))
    rule_set: Mapped[str] = mapped_column(String(40))
    deal_kind: Mapped[str] = mapped_column(String(8))
    """``secret``, ``number`` or ``daily``."""
    seed: Mapped[int] = mapped_column(Seed())
    algorithm: Mapped[int]
    rules: Mapped[int] = mapped_column(server_default=text("1"))
    """Races stored before rules version 2 existed were played under version 1."""
    commitment: Mapped[str] = mapped_column(String(64))
    """SHA-256 (hex) of the seed's decimal text, published at the start."""
    daily_day: Mapped[date | None] = mapped_column(Date())
    winnable: Mapped[bool | None] = mapped_column(Boolean())
    """Asked for a deal proved winnable (issue 12): true, one was taken from the pool; false,
    none was ready and the deal is an unproved secret one; null, not asked."""
    public: Mapped[bool] = mapped_column(server_default=false())
    """Listed at ``GET /api/rooms`` while its lobby has a free seat (issue 13)."""
    quick: Mapped[str | None] = mapped_column(String(8))
    """A quick race's room (issue 27): ``rated`` or ``unrated``; null for any other room."""
    invited: Mapped[str | None] = mapped_column(String(255))
    """A quick race's players, who alone may take its seats: their ids, space-separated."""
    seats_max: Mapped[int]
    time_limit_s: Mapped[int | None]
    host_id: Mapped[str] = mapped_column(ForeignKey("players.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), index=True)
    holder: Mapped[str | None] = mapped_column(String(64))
    """The process that holds the race while it is in progress (``server.storage.holding``)."""
    holder_epoch: Mapped[int] = mapped_column(server_default=text("0"))
    """Grows by one each time the race is taken: a write of an older epoch is refused."""
    held_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    """The holder's lease: until then no other process may take the race."""

    host: Mapped[PlayerRow] = relationship(lazy="raise")
    entries: Mapped[list[EntryRow]] = relationship(
        back_populates="race", lazy="raise", order_by="EntryRow.player_id"
    )


class EntryRow(Base):
    """One racer in one race: ``racing`` from the start, then the result.

    ``rule_set``, ``seed``, ``daily_day`` and ``ended_at`` repeat the race's, for the
    leaderboards. ``time_ms`` and ``reached_at_ms`` count from the race's start;
    ``finished_at`` is the start plus ``time_ms``.
    """

    __tablename__ = "entries"
    __table_args__ = (
        # Each board's lines are found, and mostly ordered and counted, from one of these
        # indexes alone (migration 0002 says which query each serves).
        Index(
            "ix_entries_fastest",
            "rule_set",
            "status",
            "ranked",
            "time_ms",
            "finished_at",
            "race_id",
            "player_id",
        ),
        Index(
            "ix_entries_wins",
            "rule_set",
            "status",
            "ranked",
            "player_id",
            "time_ms",
            "finished_at",
            "race_id",
        ),
        Index(
            "ix_entries_deal", "rule_set", "seed", "player_id", "standing", "finished_at", "race_id"
        ),
        Index(
            "ix_entries_daily",
            "rule_set",
            "daily_day",
            "player_id",
            "ranked",
            "standing",
            "finished_at",
            "race_id",
        ),
        # In board order, for pages by key and the counts within a bucket (migration 0007).
        Index(
            "ix_entries_today",
            "rule_set",
            "status",
            "ranked",
            "finish_day",
            "time_ms",
            "finished_at",
            "race_id",
            "player_id",
        ),
        Index(
            "ix_entries_deal_board",
            "rule_set",
            "seed",
            "standing",
            "finished_at",
            "race_id",
            "player_id",
        ),
        Index(
            "ix_entries_daily_board",
            "rule_set",
            "daily_day",
            "ranked",
            "standing",
            "finished_at",
            "race_id",
            "player_id",
        ),
        # A player's rated races of the last hours, at each start (migration 0011).
        Index("ix_entries_rated", "player_id", "rated_at"),
    )

    race_id: Mapped[str] = mapped_column(ForeignKey("races.id"), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    status: Mapped[str] = mapped_column(String(16))
    """``racing``, then ``won``, ``lost``, ``resigned``, ``timed_out`` or ``abandoned``."""
    rank: Mapped[int | None]
    time_ms: Mapped[int | None]
    on_foundations: Mapped[int]
    reached_at_ms: Mapped[int | None]
    moves: Mapped[int]
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), index=True)
    rule_set: Mapped[str] = mapped_column(String(40))
    seed: Mapped[int] = mapped_column(Seed())
    daily_day: Mapped[date | None] = mapped_column(Date())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    standing: Mapped[int | None] = mapped_column(BigInteger())
    """Where the result stands on its deal's board, as one number (lower is better): set with
    the result (``server.storage.ranks.standing``), null while racing."""
    finish_day: Mapped[date | None] = mapped_column(Date())
    """The UTC day of ``finished_at``: the day of the "today" board."""
    ranked: Mapped[bool] = mapped_column(server_default=false())
    """Whether the result counts on the fastest, most wins and daily boards: whether its deal
    was hidden from the racer until the race, as far as the server can tell. A secret deal's
    is; a chosen deal's (``number``) never is (the host knows the deal, and anyone can compute
    its face-down cards); a daily deal's is when the racer's identity was made before that
    day (UTC) began, so an identity made on the day gains nothing on the day's boards. Decided
    when the race starts (``server.storage.races.ranked``); every result is on its deal's board."""
    rated_as: Mapped[str | None] = mapped_column(String(12))
    """How the racer may be rated in this race, decided at its start
    (``server.core.ratings.roles``):
    ``established``, ``provisional``, or null (not rated: not a secret deal, an address shared
    with another racer, another rated race under way, the hourly cap). The rating at the end
    and ``ratings rebuild`` read it, never the facts it was decided from."""
    rated_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    """The race's start, for a racer ``rated_as`` something: their rated races of the last
    hours are found by it (``ix_entries_rated``)."""

    race: Mapped[RaceRow] = relationship(back_populates="entries", lazy="raise")
    player: Mapped[PlayerRow] = relationship(lazy="raise")
    move_log: Mapped[list[MoveRow]] = relationship(lazy="raise", order_by="MoveRow.index")


class MoveRow(Base):
    """An accepted move. The primary key makes a retried write of the same move a no-op."""

    __tablename__ = "moves"
    __table_args__ = (
        ForeignKeyConstraint(["race_id", "player_id"], ["entries.race_id", "entries.player_id"]),
    )

    race_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    player_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    index: Mapped[int] = mapped_column(primary_key=True)
    """0-based, per player."""
    text: Mapped[str] = mapped_column(String(80))
    """The move's text form (docs/moves.md)."""
    at_ms: Mapped[int]
    """Server time since the race's start."""
