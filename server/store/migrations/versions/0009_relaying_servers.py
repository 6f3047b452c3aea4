"""Servers that relay seats through a broker: ladder_turn.relays

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-06 14:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision: a server taking turns at a game's tables may relay the seats of
    bots connected to other servers (``bullring serve --broker``); none stored so far does."""
    with op.batch_alter_table("ladder_turn", schema=None) as batch_op:
        batch_op.add_column(sa.Column("relays", sa.Boolean(), nullable=False,
                                      server_default=sa.false()))


def downgrade() -> None:
    """Undo this revision."""
    with op.batch_alter_table("ladder_turn", schema=None) as batch_op:
        batch_op.drop_column("relays")
