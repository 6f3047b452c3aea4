"""Fair seating between servers: the ladder_presence and ladder_turn tables

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04 19:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table("ladder_presence",
    sa.Column("instance", sa.String(), nullable=False),
    sa.Column("game", sa.String(), nullable=False),
    sa.Column("bot", sa.String(), nullable=False),
    sa.PrimaryKeyConstraint("instance", "game", "bot")
    )
    op.create_table("ladder_turn",
    sa.Column("game", sa.String(), nullable=False),
    sa.Column("instance", sa.String(), nullable=False),
    sa.Column("seated_at", sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint("game", "instance")
    )


def downgrade() -> None:
    """Undo this revision."""
    op.drop_table("ladder_turn")
    op.drop_table("ladder_presence")
