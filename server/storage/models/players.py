"""The players."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String, false
from sqlalchemy.orm import Mapped, mapped_column

from server.storage.models.base import Base, UTCDateTime


class PlayerRow(Base):
    """A player. The secret token is given to them once and only its SHA-256 is kept."""

    __tablename__ = "players"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(32))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    banned_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    """Set by an operator (``patience-race fairplay ban``): the player's results are on no board
    and in no rating from then on, past ones included (``server.storage.fairplay``)."""
    bot: Mapped[bool] = mapped_column(server_default=false())
    """A bot account (``Hello.bot``), for ever: never rated, and a race with it rates nobody
    (``server.core.ratings.roles``)."""
