"""Players, races, entries, moves and daily deals.

Revision ID: 0001
Revises:
Create Date: 2026-11-22

Timestamps are ``timestamp with time zone`` (text in UTC on SQLite, see
server.storage.models.UTCDateTime);
seeds are 20 zero-padded decimal digits (server.storage.models.Seed), because a 64-bit unsigned
seed does not fit a signed BIGINT.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_players")),
    )
    op.create_index(op.f("ix_players_token_hash"), "players", ["token_hash"], unique=True)

    op.create_table(
        "races",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("code", sa.String(length=16), nullable=False),
        sa.Column("rule_set", sa.String(length=40), nullable=False),
        sa.Column("deal_kind", sa.String(length=8), nullable=False),
        sa.Column("seed", sa.String(length=20), nullable=False),
        sa.Column("algorithm", sa.Integer(), nullable=False),
        sa.Column("commitment", sa.String(length=64), nullable=False),
        sa.Column("daily_day", sa.Date(), nullable=True),
        sa.Column("seats_max", sa.Integer(), nullable=False),
        sa.Column("time_limit_s", sa.Integer(), nullable=True),
        sa.Column("host_id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["host_id"], ["players.id"], name=op.f("fk_races_host_id_players")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_races")),
    )
    op.create_index(op.f("ix_races_ended_at"), "races", ["ended_at"])

    op.create_table(
        "entries",
        sa.Column("race_id", sa.String(length=32), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=True),
        sa.Column("time_ms", sa.Integer(), nullable=True),
        sa.Column("on_foundations", sa.Integer(), nullable=False),
        sa.Column("reached_at_ms", sa.Integer(), nullable=True),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("rule_set", sa.String(length=40), nullable=False),
        sa.Column("seed", sa.String(length=20), nullable=False),
        sa.Column("daily_day", sa.Date(), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_entries_player_id_players")
        ),
        sa.ForeignKeyConstraint(["race_id"], ["races.id"], name=op.f("fk_entries_race_id_races")),
        sa.PrimaryKeyConstraint("race_id", "player_id", name=op.f("pk_entries")),
    )
    op.create_index("ix_entries_fastest", "entries", ["rule_set", "status", "time_ms"])
    op.create_index(op.f("ix_entries_finished_at"), "entries", ["finished_at"])
    op.create_index("ix_entries_wins", "entries", ["rule_set", "status", "player_id"])
    op.create_index("ix_entries_deal", "entries", ["rule_set", "seed"])
    op.create_index("ix_entries_daily", "entries", ["rule_set", "daily_day"])

    op.create_table(
        "moves",
        sa.Column("race_id", sa.String(length=32), nullable=False),
        sa.Column("player_id", sa.String(length=32), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("text", sa.String(length=80), nullable=False),
        sa.Column("at_ms", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["race_id", "player_id"],
            ["entries.race_id", "entries.player_id"],
            name=op.f("fk_moves_race_id_entries"),
        ),
        sa.PrimaryKeyConstraint("race_id", "player_id", "index", name=op.f("pk_moves")),
    )

    op.create_table(
        "daily_deals",
        sa.Column("rule_set", sa.String(length=40), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("seed", sa.String(length=20), nullable=False),
        sa.PrimaryKeyConstraint("rule_set", "day", name=op.f("pk_daily_deals")),
    )


def downgrade() -> None:
    op.drop_table("daily_deals")
    op.drop_table("moves")
    op.drop_table("entries")
    op.drop_table("races")
    op.drop_table("players")
