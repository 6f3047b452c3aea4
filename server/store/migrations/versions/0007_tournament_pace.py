"""A tournament's pace: tournament.pace_ms

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-06 09:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision: a tournament may be played at a pace (the least time from one
    decision of its matches to the next); every one stored so far is played at machine
    speed (0)."""
    with op.batch_alter_table("tournament", schema=None) as batch_op:
        batch_op.add_column(sa.Column("pace_ms", sa.Integer(), nullable=False,
                                      server_default="0"))


def downgrade() -> None:
    """Undo this revision."""
    with op.batch_alter_table("tournament", schema=None) as batch_op:
        batch_op.drop_column("pace_ms")
