"""Leaderboard indexes that cover what the boards read.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

Measured with bench/leaderboard_bench.py at 1,000,000 results; every index keeps its name.

- ``ix_entries_fastest`` gains the rest of the fastest board's order (finished_at, race_id,
  player_id): a page from any key, the count of the lines before a key (a rank) and the
  today/week filter on finished_at are read from the index alone, by row-value range.
- ``ix_entries_wins`` gains a player's wins in board order (time_ms, finished_at, race_id): a
  player's best line is one index probe (SQLite, having no statistics, otherwise walks the
  fastest index until it meets the player), and counting each player's wins and last win is
  an index-only scan.
- ``ix_entries_deal`` gains player_id, then every column the deal board sorts on and shows
  (but daily_day): a player's line on it is an index probe, and a popular deal's board (thousands
  of lines, sorted in the race's order, which no index gives) is sorted from the index alone.
- ``ix_entries_daily`` gains player_id: a player's line on a daily board, and whether they have
  played the daily, are index probes (a daily board has hundreds of lines, not thousands).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BEFORE = {
    "ix_entries_fastest": ["rule_set", "status", "time_ms"],
    "ix_entries_wins": ["rule_set", "status", "player_id"],
    "ix_entries_deal": ["rule_set", "seed"],
    "ix_entries_daily": ["rule_set", "daily_day"],
}
AFTER = {
    "ix_entries_fastest": ["rule_set", "status", "time_ms", "finished_at", "race_id", "player_id"],
    "ix_entries_wins": ["rule_set", "status", "player_id", "time_ms", "finished_at", "race_id"],
    "ix_entries_deal": [
        "rule_set",
        "seed",
        "player_id",
        "status",
        "time_ms",
        "on_foundations",
        "reached_at_ms",
        "finished_at",
        "race_id",
        "rank",
    ],
    "ix_entries_daily": ["rule_set", "daily_day", "player_id"],
}


def _replace(indexes: dict[str, list[str]]) -> None:
    for name, columns in indexes.items():
        op.drop_index(name, table_name="entries")
        op.create_index(name, "entries", columns)


def upgrade() -> None:
    _replace(AFTER)


def downgrade() -> None:
    _replace(BEFORE)
