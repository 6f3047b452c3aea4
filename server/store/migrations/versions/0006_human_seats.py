"""Seats a person plays: seat.human

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-05 07:20:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision: of the seats stored so far, those the web page's button made
    for people (a token seat named ``human``) are people's."""
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.add_column(sa.Column("human", sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    op.execute(sa.text("UPDATE seat SET human = true WHERE name = 'human' AND house IS NULL "
                       "AND bot IS NULL AND token_hash IS NOT NULL"))


def downgrade() -> None:
    """Undo this revision."""
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.drop_column("human")
