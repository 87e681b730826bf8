"""Every race names the rules version its games are played under, beside the deal algorithm.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24

Rules version 2 (engine/game.py) makes a redeal that is the only thing left to do a forced step
and judges Hidden Cards by its final layout, which changes what a stored move list means. The
races stored before it were played under version 1, which the column's default gives them, so
they replay, and verify, with the outcome they had.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "races", sa.Column("rules", sa.Integer(), nullable=False, server_default=sa.text("1"))
    )


def downgrade() -> None:
    with op.batch_alter_table("races") as batch:
        batch.drop_column("rules")
