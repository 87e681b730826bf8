"""Bot accounts: whether a player is a program playing by itself (issue 27).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28

``players.bot`` is set by a hello with ``bot`` true (a new player made by it, or the owner of
the token it gives) and never cleared: a bot account stays one. The start of a race reads it
beside ``created_at`` (``server.storage.races.record_start``): a bot is never rated, and a race
with a bot in it rates nobody (``server.core.ratings.roles``); every board marks its lines.
Players stored before this revision said nothing of it: false.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "players", sa.Column("bot", sa.Boolean(), server_default=sa.false(), nullable=False)
    )


def downgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.drop_column("bot")
