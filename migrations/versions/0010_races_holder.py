"""Who holds each race in progress: a holder, an epoch and a lease on the race row.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27

With several workers a room must have exactly one holder, whatever Redis forgets (it keeps
nothing on disk): the database fences it (``server.storage.holding``). ``races.holder`` names the
process that holds the race, ``races.holder_epoch`` grows by one each time it is taken, and
``races.held_until`` is the lease its holder renews. Races stored before this revision are
held by nobody, at epoch 0: the next server to start takes them.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("races", sa.Column("holder", sa.String(64), nullable=True))
    op.add_column(
        "races",
        sa.Column("holder_epoch", sa.Integer(), server_default=sa.text("0"), nullable=False),
    )
    op.add_column("races", sa.Column("held_until", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("races") as batch:
        batch.drop_column("held_until")
        batch.drop_column("holder_epoch")
        batch.drop_column("holder")
