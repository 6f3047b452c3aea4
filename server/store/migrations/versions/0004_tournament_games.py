"""Tournament games and challenge expiry: match.tournament_id and match.tournament_game,
challenge.expires_at

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-04 19:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision: a match knows the tournament game it plays, so any server (or a
    restarted one) records it; a challenge knows when it expires (none stored so far does)."""
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tournament_id", sa.String(), nullable=True))
        batch_op.add_column(sa.Column("tournament_game", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_match_tournament_id"), ["tournament_id"],
                              unique=False)
    with op.batch_alter_table("challenge", schema=None) as batch_op:
        batch_op.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    """Undo this revision."""
    with op.batch_alter_table("challenge", schema=None) as batch_op:
        batch_op.drop_column("expires_at")
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_match_tournament_id"))
        batch_op.drop_column("tournament_game")
        batch_op.drop_column("tournament_id")
