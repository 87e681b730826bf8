"""The solver's verdicts on deals, and the pool of deals proved winnable (issue 12).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24

``deal_verdicts`` holds, per deal (rule set, seed, algorithm) and rules version, what the
solver found when it searched the deal after a race on it ended: won (with the winning line,
one move per line of text), lost or unknown, the budget it had and when. The race record shows
it ("a win was possible in N moves"). Races stored before this revision have none.

``winnable_deals`` is the pool of secret deals proved winnable, filled in the background
(``server.rooms.pool``), each taken by one race (``used_at``). ``races.winnable`` says whether a
race asked for such a deal and got one (true), asked and got none (false), or did not ask (null);
``daily_deals.winnable`` the same for a day's daily deal, drawn from the pool by default.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "deal_verdicts",
        sa.Column("rule_set", sa.String(length=40), nullable=False),
        sa.Column("seed", sa.String(length=20), nullable=False),
        sa.Column("algorithm", sa.Integer(), nullable=False),
        sa.Column("rules", sa.Integer(), nullable=False),
        sa.Column("result", sa.String(length=8), nullable=False),
        sa.Column("line", sa.Text(), nullable=False),
        sa.Column("budget_s", sa.Float(), nullable=False),
        sa.Column("solved_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "rule_set", "seed", "algorithm", "rules", name=op.f("pk_deal_verdicts")
        ),
    )

    op.create_table(
        "winnable_deals",
        sa.Column("rule_set", sa.String(length=40), nullable=False),
        sa.Column("seed", sa.String(length=20), nullable=False),
        sa.Column("algorithm", sa.Integer(), nullable=False),
        sa.Column("rules", sa.Integer(), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("solved_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("rule_set", "seed", name=op.f("pk_winnable_deals")),
    )
    op.add_column("races", sa.Column("winnable", sa.Boolean(), nullable=True))
    op.add_column("daily_deals", sa.Column("winnable", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("daily_deals") as batch:
        batch.drop_column("winnable")
    with op.batch_alter_table("races") as batch:
        batch.drop_column("winnable")
    op.drop_table("winnable_deals")
    op.drop_table("deal_verdicts")
