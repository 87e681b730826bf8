"""Each player's wins per rule set, kept as results are stored, for the most wins board.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22

The most wins board counted each player's wins on every request (``GROUP BY player_id`` over a
rule set's wins along ``ix_entries_wins``): that reads every win of the rule set, which at
1,000,000 results missed 20 ms. ``player_wins`` keeps the count and the last win's time, and
``server.storage.results.record_results`` adds each new win to it in the transaction that stores it.

The board's order is ``(-wins, last_win_at, player_id)``, ascending; it reads a page from a key
and counts the lines before a key by comparing that key as a row value, which follows an index
only where the index holds those very terms, in that order and direction. ``minus_wins`` is
``-wins`` as a stored generated column, and ``ix_player_wins_board`` is ``(rule_set,
minus_wins, last_win_at, player_id, wins)``, ``wins`` last so that pages and counts read the
index alone. Measured with bench/leaderboard_bench.py's database at 1,000,000 results (196,570
rows, up to 36,000 a rule set), ``most_wins`` around a player in the middle, p50 of one page /
of the count of the lines before it, SQLite and PostgreSQL:

- ``(rule_set, wins, last_win_at, player_id)``: wins descending with the rest ascending is no
  order of that index, so every page reads and sorts the rule set's lines: 5.3 / 4.2 ms and
  7.8 / 4.5 ms (the board 22 and 30 ms).
- on the expression, ``(rule_set, (-wins), last_win_at, player_id)``: SQLite ranges over an
  index by a row value only when its first term is a column, so it reads pages and counts from
  the rule set's first line, through the table (2.4 / 4.2 ms); PostgreSQL pages by the row
  value but counts through the table (0.6 / 5.6 ms). The board 16 and 15 ms. SQLite's
  reflection does not see expression indexes either, so Alembic's comparison of models and
  database would miss it.
- on the generated column: 0.3 / 3.0 ms and 0.5 / 3.5 ms, every statement an index range (the
  board 11 and 12 ms; counting the wins from ``entries`` it took 116 and 112 ms).

Generated columns need SQLite 3.31 and PostgreSQL 12.

The table is filled from the entries already stored, with the statement that
``server.storage.results.recount_wins`` makes (written out here: a migration must not change with
the code).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BACKFILL = """
INSERT INTO player_wins (rule_set, player_id, wins, last_win_at)
SELECT rule_set, player_id, count(*), max(finished_at)
FROM entries
WHERE status = 'won'
GROUP BY rule_set, player_id
"""


def upgrade() -> None:
    op.create_table(
        "player_wins",
        sa.Column("rule_set", sa.String(length=40), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("last_win_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("minus_wins", sa.Integer(), sa.Computed("-wins", persisted=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_player_wins_player_id_players")
        ),
        sa.PrimaryKeyConstraint("rule_set", "player_id", name=op.f("pk_player_wins")),
    )
    op.execute(BACKFILL)
    # Made after the backfill: one sort of the filled table, not an insert per row.
    op.create_index(
        "ix_player_wins_board",
        "player_wins",
        ["rule_set", "minus_wins", "last_win_at", "player_id", "wins"],
    )


def downgrade() -> None:
    op.drop_index("ix_player_wins_board", table_name="player_wins")
    op.drop_table("player_wins")
