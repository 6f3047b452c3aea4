"""A bot's challenges by index: the challenge_bot table, challenge.updated_at's index

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-05 12:00:00.000000
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

HOUSE_PREFIX = "house:"
"""How a challenge names a house bot opponent (not a registered bot of its own)."""


def upgrade() -> None:
    """Apply this revision: each stored challenge's challenger and registered opponents
    are written to challenge_bot."""
    op.create_table("challenge_bot",
    sa.Column("challenge_id", sa.String(), nullable=False),
    sa.Column("bot", sa.String(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(["challenge_id"], ["challenge.id"], ),
    sa.PrimaryKeyConstraint("challenge_id", "bot")
    )
    with op.batch_alter_table("challenge_bot", schema=None) as batch_op:
        batch_op.create_index("ix_challenge_bot_bot_created_at", ["bot", "created_at"],
                              unique=False)
    with op.batch_alter_table("challenge", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_challenge_updated_at"), ["updated_at"],
                              unique=False)
    connection = op.get_bind()
    rows = connection.execute(sa.text(
        "SELECT id, challenger, opponents_json, created_at FROM challenge")).all()
    named = []
    for challenge_id, challenger, opponents_json, created_at in rows:
        bots = dict.fromkeys([challenger, *(o for o in json.loads(opponents_json)
                                            if not o.startswith(HOUSE_PREFIX))])
        named += [{"challenge_id": challenge_id, "bot": bot, "created_at": created_at}
                  for bot in bots]
    if named:
        connection.execute(sa.text(
            "INSERT INTO challenge_bot (challenge_id, bot, created_at) "
            "VALUES (:challenge_id, :bot, :created_at)"), named)


def downgrade() -> None:
    """Undo this revision."""
    with op.batch_alter_table("challenge", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_challenge_updated_at"))
    with op.batch_alter_table("challenge_bot", schema=None) as batch_op:
        batch_op.drop_index("ix_challenge_bot_bot_created_at")
    op.drop_table("challenge_bot")
