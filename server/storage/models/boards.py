"""What the boards keep beside ``entries`` so that a page and a rank read a few rows: each
player's count of wins, and how many lines each bucket of a board holds. Both are kept by
``server.storage.results.record_results`` in the transaction that stores the results."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Computed, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from server.storage.models.base import Base, UTCDateTime


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
