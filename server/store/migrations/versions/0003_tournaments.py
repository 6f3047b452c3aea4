"""Live tournaments: the tournament table

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-04 17:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table("tournament",
    sa.Column("id", sa.String(), nullable=False),
    sa.Column("game", sa.String(), nullable=False),
    sa.Column("format", sa.String(), nullable=False),
    sa.Column("entrants_json", sa.String(), nullable=False),
    sa.Column("games", sa.Integer(), nullable=False),
    sa.Column("seats", sa.Integer(), nullable=False),
    sa.Column("wait_s", sa.Float(), nullable=False),
    sa.Column("status", sa.String(), nullable=False),
    sa.Column("schedule_json", sa.String(), nullable=False),
    sa.Column("standings_json", sa.String(), nullable=False),
    sa.Column("forfeited_json", sa.String(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint("id")
    )
    with op.batch_alter_table("tournament", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tournament_status"), ["status"], unique=False)


def downgrade() -> None:
    """Undo this revision."""
    with op.batch_alter_table("tournament", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tournament_status"))
    op.drop_table("tournament")
