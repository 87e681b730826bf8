"""Fair-play checks of rated races, and banned players (issue 27).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28

``fair_play`` holds, per racer of each rated race, the signals the check after the race
measured (``server.core.fairplay``, as JSON), whether they flagged the result, and its status:
``flagged`` (held off the boards and the ratings until reviewed), ``cleared`` (put back by an
operator) or ``clean``; ``ix_fair_play_status`` lists those waiting for review, oldest first.
``players.banned_at``: when an operator banned the player; a banned player's results are on no
board and in no rating.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "fair_play",
        sa.Column("race_id", sa.String(length=32), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("signals", sa.JSON(), nullable=False),
        sa.Column("flagged", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reviewed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["race_id", "player_id"],
            ["entries.race_id", "entries.player_id"],
            name=op.f("fk_fair_play_race_id_entries"),
        ),
        sa.PrimaryKeyConstraint("race_id", "player_id", name=op.f("pk_fair_play")),
    )
    op.create_index("ix_fair_play_status", "fair_play", ["status", "checked_at"])
    op.add_column("players", sa.Column("banned_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.drop_column("banned_at")
    op.drop_index("ix_fair_play_status", table_name="fair_play")
    op.drop_table("fair_play")
