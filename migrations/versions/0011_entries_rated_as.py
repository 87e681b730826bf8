"""Who may be rated in each race, decided at its start (issue 23: rating farming).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27

``entries.rated_as`` is how a racer may be rated in the race (``server.core.ratings.roles``):
``established``, ``provisional``, or null (left out: not a secret deal, an address shared with
another racer, another rated race under way, the hourly cap). It is decided once, when the race
starts, from facts that change later (the identity's age, the address, the other races), so
the rating at the end and ``patience-race ratings rebuild`` read it instead of deciding again.
``entries.rated_at`` is the race's start for a racer rated as something; ``ix_entries_rated``
finds a player's rated races of the last hours by it.

The races rated before this revision keep their ratings: each racer with a rating change is
``established`` from the race's start. A rebuild applies today's rule at the end to them too: a
racer who made no move (a resignation aside) is left out of the rating.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RATED_BEFORE = """
UPDATE entries SET rated_as = 'established',
                   rated_at = (SELECT started_at FROM races WHERE races.id = entries.race_id)
WHERE EXISTS (SELECT 1 FROM rating_changes
              WHERE rating_changes.race_id = entries.race_id
                AND rating_changes.player_id = entries.player_id)
"""


def upgrade() -> None:
    op.add_column("entries", sa.Column("rated_as", sa.String(length=12), nullable=True))
    op.add_column("entries", sa.Column("rated_at", sa.DateTime(timezone=True), nullable=True))
    op.execute(RATED_BEFORE)
    op.create_index("ix_entries_rated", "entries", ["player_id", "rated_at"])


def downgrade() -> None:
    op.drop_index("ix_entries_rated", table_name="entries")
    with op.batch_alter_table("entries") as batch:
        batch.drop_column("rated_at")
        batch.drop_column("rated_as")
