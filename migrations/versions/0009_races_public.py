"""Public rooms: whether a race's room is listed while its lobby has a free seat (issue 13).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24

``races.public`` is the room option ``create_room.public``: the room is listed at
``GET /api/rooms`` while it waits in its lobby with a free seat. It is stored with the race so
that a lobby rebuilt after a restart, or by another worker, is listed again, and a rematch's
race keeps it. Races stored before this revision were never listed: false.

(In the rooms branch this follows 0006; when issue 13 is merged it is chained after 0008.)
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "races", sa.Column("public", sa.Boolean(), server_default=sa.false(), nullable=False)
    )


def downgrade() -> None:
    with op.batch_alter_table("races") as batch:
        batch.drop_column("public")
