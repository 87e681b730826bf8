"""Ratings per player and rule set, and what each rated race changed (issue 13).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24

``ratings`` holds each player's openskill rating in a rule set (mu, sigma, and the ordinal
mu − 3·sigma the rated board orders by, along ``ix_ratings_board``), with the number of rated
races behind it. ``rating_changes`` holds, per racer of each rated race, the rating before and
after: written once with the race's result, so a retried write rates nothing twice.

Races stored before this revision are not rated here (a migration must not change with the
code that rates): ``patience-race ratings rebuild`` rates every stored race, in the order they
finished.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "ratings",
        sa.Column("rule_set", sa.String(length=40), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("ordinal", sa.Float(), nullable=False),
        sa.Column("races", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_ratings_player_id_players")
        ),
        sa.PrimaryKeyConstraint("rule_set", "player_id", name=op.f("pk_ratings")),
    )
    op.create_index("ix_ratings_board", "ratings", ["rule_set", "ordinal", "player_id"])
    op.create_table(
        "rating_changes",
        sa.Column("race_id", sa.String(length=32), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("mu_before", sa.Float(), nullable=False),
        sa.Column("sigma_before", sa.Float(), nullable=False),
        sa.Column("mu_after", sa.Float(), nullable=False),
        sa.Column("sigma_after", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["race_id", "player_id"],
            ["entries.race_id", "entries.player_id"],
            name=op.f("fk_rating_changes_race_id_entries"),
        ),
        sa.PrimaryKeyConstraint("race_id", "player_id", name=op.f("pk_rating_changes")),
    )


def downgrade() -> None:
    op.drop_table("rating_changes")
    op.drop_index("ix_ratings_board", table_name="ratings")
    op.drop_table("ratings")
