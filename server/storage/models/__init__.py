"""The database: what is stored, as SQLAlchemy models, and how to connect.

Only facts are stored: who played, the seed and deal algorithm version of every race, every
accepted move with its server time, and the results. A position is rebuilt by replaying the
moves (``engine.replay``), never stored.

``entries`` (one row per racer per race) repeats the race's rule set, seed, daily day and end
time, so that every time board is a query on that one table along one of its indexes, and says
whether the result is ``ranked`` (counts on the fastest, most wins and daily boards). The most
wins board is not: counting every player's wins on each request reads every win of the rule set,
so ``player_wins`` keeps the count of ranked wins, updated with each result
(``server.storage.results.record_results``).

``daily_plays`` holds the rule "each player plays each daily deal once": its primary key is
(rule set, day, player), so the database refuses a second play however many requests race
for it (``server.storage.races.create_race``).

How to connect is ``server.storage.engine``. The schema itself is created by the Alembic
migrations in ``migrations/``, whose constraint names come from ``NAMING_CONVENTION``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Computed,
    Date,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    MetaData,
    String,
    Text,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

from engine.deal import SEED_MAX

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware timestamp that comes back aware from every database.

    SQLite has no time zone type: SQLAlchemy stores the text without an offset and reads back
    naive datetimes. This type stores UTC, marks what it reads as UTC, and refuses a naive
    datetime, so a local time cannot be stored by mistake. Stored as UTC text of one fixed
    format, SQLite timestamps also compare correctly as text.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"a naive datetime cannot be stored: {value!r}")
        return value.astimezone(UTC)

    def process_result_value(self, value: Any | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Seed(TypeDecorator[int]):
    """A 64-bit unsigned deal number, stored as 20 zero-padded decimal digits.

    BIGINT is signed (seeds from 2**63 up would not fit), NUMERIC is not exact on SQLite, and
    text is exact everywhere; the zero padding makes text order the numbers' order and leaves
    one spelling per seed, so equality and indexes work.
    """

    impl = String(20)
    cache_ok = True

    def process_bind_param(self, value: int | None, dialect: Dialect) -> str | None:
        if value is None:
            return None
        if not 0 <= value <= SEED_MAX:
            raise ValueError(f"a seed is a 64-bit deal number 0..{SEED_MAX}, not {value}")
        return f"{value:020d}"

    def process_result_value(self, value: Any | None, dialect: Dialect) -> int | None:
        return None if value is None else int(value)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class PlayerRow(Base):
    """A player. The secret token is given to them once and only its SHA-256 is kept."""

    __tablename__ = "players"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(32))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


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


class PlayerWinsRow(Base):
    """A player's wins in one rule set, and when the last of them was: the most wins board.

    It is what ``entries`` says (the count and latest ``finished_at`` of the player's ``won``
    entries that are ``ranked``), kept by ``record_results`` in the transaction that stores
    the wins: counting the wins on each request read every win of the rule set (at a million
    results, 30-110 ms a board), this reads the lines shown.

    ``ix_player_wins_board`` holds the board's order, ``(-wins, last_win_at, player_id)``, for
    one rule set. The board pages and ranks by comparing that key as a row value, and SQLite
    ranges over an index by a row value only when its first term is a column, not an
    expression: hence ``minus_wins``, a generated column (it cannot disagree with ``wins``).
    ``wins`` ends the index so that a page and a count read the index alone. Migration 0003
    has the measurements.
    """

    __tablename__ = "player_wins"
    __table_args__ = (
        Index("ix_player_wins_board", "rule_set", "minus_wins", "last_win_at", "player_id", "wins"),
    )

    rule_set: Mapped[str] = mapped_column(String(40), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    wins: Mapped[int]
    last_win_at: Mapped[datetime] = mapped_column(UTCDateTime())
    minus_wins: Mapped[int] = mapped_column(Computed("-wins", persisted=True))
    """``-wins``: the board's first sort key, ascending. Stored: PostgreSQL cannot index a
    virtual generated column."""


class BoardCountRow(Base):
    """How many lines of a board have their rank term in one bucket (``server.storage.ranks``): a
    line's rank is one more than the lines in the buckets before its own plus those before it
    in its own bucket, a sum over a few rows and a count over a short index range instead of
    a count of everything above. Kept by ``record_results`` in the transaction that stores the
    results."""

    __tablename__ = "board_counts"
    __table_args__ = (
        # The sum over the buckets below one reads this index alone: through the primary key
        # it read a table page per bucket (the rows of one board lie scattered).
        Index("ix_board_counts_sum", "board", "bucket", "lines"),
    )

    board: Mapped[str] = mapped_column(String(80), primary_key=True)
    bucket: Mapped[int] = mapped_column(BigInteger(), primary_key=True, autoincrement=False)
    lines: Mapped[int]


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


class RatingRow(Base):
    """A player's rating in one rule set (``server.core.ratings``): openskill's ``mu`` and
    ``sigma``, the ``ordinal`` mu − 3·sigma the rated board orders by, and how many rated races
    made it. Updated in the transaction that stores each rated race's result
    (``server.storage.ratings``), and rebuilt from ``rating_changes``' races by ``patience-race
    ratings rebuild``. ``ix_ratings_board`` holds the board's order for one rule set, read
    backwards (best first)."""

    __tablename__ = "ratings"
    __table_args__ = (Index("ix_ratings_board", "rule_set", "ordinal", "player_id"),)

    rule_set: Mapped[str] = mapped_column(String(40), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    mu: Mapped[float] = mapped_column(Float())
    sigma: Mapped[float] = mapped_column(Float())
    ordinal: Mapped[float] = mapped_column(Float())
    races: Mapped[int]
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class RatingChangeRow(Base):
    """What one rated race did to one racer's rating: before and after. Written with the
    race's result, once: a retried write of a result whose commit did land finds these rows
    and rates nothing again (and announces the same change). The race finishing is what
    orders the changes, ``races.ended_at``."""

    __tablename__ = "rating_changes"
    __table_args__ = (
        ForeignKeyConstraint(["race_id", "player_id"], ["entries.race_id", "entries.player_id"]),
    )

    race_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    player_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    mu_before: Mapped[float] = mapped_column(Float())
    sigma_before: Mapped[float] = mapped_column(Float())
    mu_after: Mapped[float] = mapped_column(Float())
    sigma_after: Mapped[float] = mapped_column(Float())
