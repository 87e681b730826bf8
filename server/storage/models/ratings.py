"""The ratings: each player's in each rule set, and what each rated race changed."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Float, ForeignKey, ForeignKeyConstraint, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from server.storage.models.base import Base, UTCDateTime


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
