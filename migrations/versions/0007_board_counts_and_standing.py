"""Ranks from counts kept per bucket; every board paged along an index in its own order.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24

Issue 14: "around me" counted every line ranked above the player (at 1,000,000 results, p99
23-30 ms on the all-time fastest, most wins and most played deal boards), and the "today"
board read the rule set's wins in time order until it found today's.

- ``board_counts``: per board and bucket of its rank term, how many lines; a rank is a sum over
  the buckets below plus a count inside one bucket (``server.storage.ranks`` has the boards and
  buckets). Filled here from the results already stored, with the statement of
  ``server.storage.ranks.recount`` written out; ``ix_board_counts_sum`` holds the counts too, so the
  sum over the buckets below one reads that index alone.
- ``entries.standing``: a result's place in a race's order as one number (a win by its time,
  then cards home, then when they got there), so the deal and daily boards order, page and
  bucket by one indexed column; ``ix_entries_deal_board`` and ``ix_entries_daily_board`` hold
  those boards in order.
- ``entries.finish_day``: the UTC day of ``finished_at``; ``ix_entries_today`` holds each day's
  ranked wins in time order.
- ``ix_entries_deal`` and ``ix_entries_daily`` give a player's lines on a board in its order:
  SQLite otherwise finds a player's best line by reading the board's own index from the top
  until it meets the player (an ``ORDER BY ... LIMIT 1`` it can answer without a sort).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STANDING = """
UPDATE entries SET standing = CASE WHEN status = 'won' THEN time_ms
    ELSE 1000000000000000 + (1000 - on_foundations) * 10000000000 + COALESCE(reached_at_ms, 0)
    END
WHERE rank IS NOT NULL
"""

FINISH_DAY = {
    "postgresql": "UPDATE entries SET finish_day = (finished_at AT TIME ZONE 'UTC')::date "
    "WHERE finished_at IS NOT NULL",
    # SQLite keeps timestamps as UTC text, "YYYY-MM-DD HH:MM:SS.ffffff".
    "sqlite": "UPDATE entries SET finish_day = date(finished_at) WHERE finished_at IS NOT NULL",
}

COUNT_BOARDS = """
INSERT INTO board_counts (board, bucket, lines)
SELECT 'fastest:' || rule_set, time_ms / 1000, count(*)
FROM entries WHERE status = 'won' AND ranked
GROUP BY rule_set, time_ms / 1000
UNION ALL
SELECT 'fastest:' || rule_set || ':' || CAST(finish_day AS VARCHAR), time_ms / 1000, count(*)
FROM entries WHERE status = 'won' AND ranked
GROUP BY rule_set, finish_day, time_ms / 1000
UNION ALL
SELECT 'wins:' || rule_set, minus_wins, count(*)
FROM player_wins GROUP BY rule_set, minus_wins
UNION ALL
SELECT 'deal:' || rule_set || ':' || seed, standing / 10000, count(*)
FROM entries WHERE standing IS NOT NULL
GROUP BY rule_set, seed, standing / 10000
UNION ALL
SELECT 'daily:' || rule_set || ':' || CAST(daily_day AS VARCHAR), standing / 10000, count(*)
FROM entries WHERE standing IS NOT NULL AND ranked AND daily_day IS NOT NULL
GROUP BY rule_set, daily_day, standing / 10000
"""

INDEXES = {
    "ix_entries_today": [
        "rule_set",
        "status",
        "ranked",
        "finish_day",
        "time_ms",
        "finished_at",
        "race_id",
        "player_id",
    ],
    "ix_entries_deal_board": [
        "rule_set",
        "seed",
        "standing",
        "finished_at",
        "race_id",
        "player_id",
    ],
    "ix_entries_daily_board": [
        "rule_set",
        "daily_day",
        "ranked",
        "standing",
        "finished_at",
        "race_id",
        "player_id",
    ],
}


PLAYER_INDEXES_BEFORE = {
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
PLAYER_INDEXES_AFTER = {
    "ix_entries_deal": ["rule_set", "seed", "player_id", "standing", "finished_at", "race_id"],
    "ix_entries_daily": [
        "rule_set",
        "daily_day",
        "player_id",
        "ranked",
        "standing",
        "finished_at",
        "race_id",
    ],
}


def _replace(indexes: dict[str, list[str]]) -> None:
    for name, columns in indexes.items():
        op.drop_index(name, table_name="entries")
        op.create_index(name, "entries", columns)


def upgrade() -> None:
    op.add_column("entries", sa.Column("standing", sa.BigInteger(), nullable=True))
    op.add_column("entries", sa.Column("finish_day", sa.Date(), nullable=True))
    op.execute(STANDING)
    op.execute(FINISH_DAY[op.get_bind().dialect.name])
    for name, columns in INDEXES.items():
        op.create_index(name, "entries", columns)
    _replace(PLAYER_INDEXES_AFTER)
    op.create_table(
        "board_counts",
        sa.Column("board", sa.String(length=80), nullable=False),
        sa.Column("bucket", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("lines", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("board", "bucket", name=op.f("pk_board_counts")),
    )
    op.execute(COUNT_BOARDS)
    op.create_index("ix_board_counts_sum", "board_counts", ["board", "bucket", "lines"])


def downgrade() -> None:
    op.drop_index("ix_board_counts_sum", table_name="board_counts")
    op.drop_table("board_counts")
    _replace(PLAYER_INDEXES_BEFORE)
    for name in INDEXES:
        op.drop_index(name, table_name="entries")
    with op.batch_alter_table("entries") as batch:
        batch.drop_column("finish_day")
        batch.drop_column("standing")
