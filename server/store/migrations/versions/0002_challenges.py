"""Practice matches and challenges: match.rated, bot.auto_accept, the challenge table

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-04 17:15:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision: every ladder match stored so far was rated."""
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.add_column(sa.Column("rated", sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    op.execute(sa.text("UPDATE match SET rated = ladder"))
    with op.batch_alter_table("bot", schema=None) as batch_op:
        batch_op.add_column(sa.Column("auto_accept", sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    op.create_table("challenge",
    sa.Column("id", sa.String(), nullable=False),
    sa.Column("game", sa.String(), nullable=False),
    sa.Column("challenger", sa.String(), nullable=False),
    sa.Column("opponents_json", sa.String(), nullable=False),
    sa.Column("answers_json", sa.String(), nullable=False),
    sa.Column("status", sa.String(), nullable=False),
    sa.Column("message", sa.String(), nullable=False),
    sa.Column("match_id", sa.String(), nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(["challenger"], ["bot.name"], ),
    sa.PrimaryKeyConstraint("id")
    )
    with op.batch_alter_table("challenge", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_challenge_status"), ["status"], unique=False)
        batch_op.create_index(batch_op.f("ix_challenge_challenger"), ["challenger"],
                              unique=False)


def downgrade() -> None:
    """Undo this revision."""
    with op.batch_alter_table("challenge", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_challenge_challenger"))
        batch_op.drop_index(batch_op.f("ix_challenge_status"))
    op.drop_table("challenge")
    with op.batch_alter_table("bot", schema=None) as batch_op:
        batch_op.drop_column("auto_accept")
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.drop_column("rated")
