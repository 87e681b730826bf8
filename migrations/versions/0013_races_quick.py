"""Quick races: a race's room opened by the queue, and who may sit in it (issue 27).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28

``races.quick`` is ``rated`` or ``unrated`` for a quick race's room (``quick_race``), null for
any other. ``races.invited`` lists the players the queue matched into it, space-separated: only
they may take a seat, and a lobby rebuilt after a restart, or by another worker, keeps them.
Races stored before this revision are no quick races: both null.

(Written after 0011 beside the other branches of issue 27; follows 0012, bots, merged first.)
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("races", sa.Column("quick", sa.String(length=8), nullable=True))
    op.add_column("races", sa.Column("invited", sa.String(length=255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("races") as batch:
        batch.drop_column("invited")
        batch.drop_column("quick")
