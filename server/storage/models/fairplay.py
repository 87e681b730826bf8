"""The fair-play checks of rated races (``server.storage.fairplay``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKeyConstraint, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from server.storage.models.base import Base, UTCDateTime

FLAGGED, CLEARED, CLEAN = "flagged", "cleared", "clean"
"""A check's status: ``flagged`` (the result is held off the boards and the ratings until an
operator reviews it), ``cleared`` (flagged, then put back by an operator), ``clean``."""


class FairPlayRow(Base):
    """One racer's fair-play check in one rated race (``server.core.fairplay``): the signals
    measured, whether they flagged the result, and its status. ``ix_fair_play_status`` finds
    the results waiting for review, oldest first."""

    __tablename__ = "fair_play"
    __table_args__ = (
        ForeignKeyConstraint(["race_id", "player_id"], ["entries.race_id", "entries.player_id"]),
        Index("ix_fair_play_status", "status", "checked_at"),
    )

    race_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    player_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    signals: Mapped[dict[str, Any]] = mapped_column(JSON())
    """``server.core.fairplay.Signals.to_json``, with the ``reasons`` that flagged it."""
    flagged: Mapped[bool] = mapped_column(Boolean())
    """What the check said, whatever the review said after."""
    status: Mapped[str] = mapped_column(String(8))
    checked_at: Mapped[datetime] = mapped_column(UTCDateTime())
    reviewed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
