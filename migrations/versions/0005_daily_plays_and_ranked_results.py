"""One play of each daily deal per player, held by the database; which results are ranked.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24

Hostile clients (issue 10):

- Simultaneous ``daily`` requests with one token each passed the server's "has this player
  played today?" check before any of them stored its race, and opened a game each.
  ``daily_plays`` has one row per (rule set, day, player), its primary key, claimed when a
  daily deal is opened: the database refuses the second however the requests race. It is
  filled from the daily races already stored, one row per player and day however many races
  they opened.
- ``entries.ranked`` says whether a result counts on the fastest, most wins and daily boards
  (``server.storage.races.ranked`` has the rule): a chosen deal's never does (its host knows the
  deal and anyone can compute its face-down cards), a secret deal's does, and a daily deal's does
  when the player's identity was made before that day (UTC) began and, for the duplicates
  stored before this revision, only the player's first race of it (by creation, then id).
  ``player_wins`` is counted again from the ranked wins alone (the statement of
  ``server.storage.results.recount_wins``, written out: a migration must not change with the code).
- ``ix_entries_fastest`` and ``ix_entries_wins`` gain ``ranked`` after ``status``: the fastest
  board and a player's best line on it stay one index range, in board order.

The column's default is false: a writer that does not decide counts nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DAILY_PLAYS = """
INSERT INTO daily_plays (rule_set, day, player_id)
SELECT DISTINCT rule_set, daily_day, host_id
FROM races
WHERE deal_kind = 'daily' AND daily_day IS NOT NULL
"""

RANK_SECRET = """
UPDATE entries SET ranked = TRUE
WHERE race_id IN (SELECT id FROM races WHERE deal_kind = 'secret')
"""

DAY_START = {
    # A date as the instant its UTC day begins. SQLite keeps timestamps as UTC text,
    # "YYYY-MM-DD HH:MM:SS.ffffff", which orders as the times do.
    "postgresql": "(entries.daily_day::timestamp AT TIME ZONE 'UTC')",
    "sqlite": "datetime(entries.daily_day)",
}

RANK_DAILY = """
UPDATE entries SET ranked = TRUE
WHERE daily_day IS NOT NULL
AND (SELECT created_at FROM players WHERE players.id = entries.player_id) < {day_start}
AND race_id = (
    SELECT races.id FROM entries AS played JOIN races ON races.id = played.race_id
    WHERE played.rule_set = entries.rule_set AND played.daily_day = entries.daily_day
    AND played.player_id = entries.player_id
    ORDER BY races.created_at, races.id
    LIMIT 1)
"""

RECOUNT_WINS = """
INSERT INTO player_wins (rule_set, player_id, wins, last_win_at)
SELECT rule_set, player_id, count(*), max(finished_at)
FROM entries
WHERE status = 'won'{ranked}
GROUP BY rule_set, player_id
"""

INDEXES_BEFORE = {
    "ix_entries_fastest": ["rule_set", "status", "time_ms", "finished_at", "race_id", "player_id"],
    "ix_entries_wins": ["rule_set", "status", "player_id", "time_ms", "finished_at", "race_id"],
}
INDEXES_AFTER = {
    "ix_entries_fastest": [
        "rule_set",
        "status",
        "ranked",
        "time_ms",
        "finished_at",
        "race_id",
        "player_id",
    ],
    "ix_entries_wins": [
        "rule_set",
        "status",
        "ranked",
        "player_id",
        "time_ms",
        "finished_at",
        "race_id",
    ],
}


def _replace(indexes: dict[str, list[str]]) -> None:
    for name, columns in indexes.items():
        op.drop_index(name, table_name="entries")
        op.create_index(name, "entries", columns)


def _recount_wins(*, ranked_only: bool) -> None:
    op.execute("DELETE FROM player_wins")
    op.execute(RECOUNT_WINS.format(ranked=" AND ranked" if ranked_only else ""))


def upgrade() -> None:
    op.create_table(
        "daily_plays",
        sa.Column("rule_set", sa.String(length=40), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_daily_plays_player_id_players")
        ),
        sa.PrimaryKeyConstraint("rule_set", "day", "player_id", name=op.f("pk_daily_plays")),
    )
    op.execute(DAILY_PLAYS)
    op.add_column(
        "entries", sa.Column("ranked", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.execute(RANK_SECRET)
    op.execute(RANK_DAILY.format(day_start=DAY_START[op.get_bind().dialect.name]))
    _recount_wins(ranked_only=True)
    _replace(INDEXES_AFTER)


def downgrade() -> None:
    _replace(INDEXES_BEFORE)
    _recount_wins(ranked_only=False)
    with op.batch_alter_table("entries") as batch:
        batch.drop_column("ranked")
    op.drop_table("daily_plays")
