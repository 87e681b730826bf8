"""What every table is built on: the declarative base, whose metadata names constraints by
``NAMING_CONVENTION`` (the Alembic migrations' constraint names come from it), and the column
types for UTC timestamps and 64-bit seeds."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Dialect, MetaData, String
from sqlalchemy.orm import DeclarativeBase
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
