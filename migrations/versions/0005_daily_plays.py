"""One play of each daily deal per player, held by the database.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24

Hostile clients (issue 10): simultaneous ``daily`` requests with one token each passed the
server's "has this player played today?" check before any of them stored its race, and opened
a game each. ``daily_plays`` has one row per (rule set, day, player), its primary key, claimed
when a daily deal is opened: the database refuses the second however the requests race. It is
filled from the daily races already stored, one row per player and day however many races
they opened.
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


def upgrade() -> None:
    op.create_table(
        "daily_plays",
        sa.Column("rule_set", sa.String(length=40), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"],
                                name=op.f("fk_daily_plays_player_id_players")),
        sa.PrimaryKeyConstraint("rule_set", "day", "player_id", name=op.f("pk_daily_plays")),
    )
    op.execute(DAILY_PLAYS)


def downgrade() -> None:
    op.drop_table("daily_plays")
