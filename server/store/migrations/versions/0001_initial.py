"""Initial schema: matches, seats, bots, ratings, admin token

Revision ID: 0001
Revises: (none)
Create Date: 2026-12-02 17:38:41.043990
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table("admin_token",
    sa.Column("id", sa.Integer(), nullable=False),
    sa.Column("token_hash", sa.String(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint("id")
    )
    op.create_table("bot",
    sa.Column("name", sa.String(), nullable=False),
    sa.Column("owner", sa.String(), nullable=False),
    sa.Column("version", sa.Integer(), nullable=False),
    sa.Column("token_hash", sa.String(), nullable=True),
    sa.Column("house", sa.String(), nullable=True),
    sa.Column("enabled", sa.Boolean(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("current_match", sa.String(), nullable=True),
    sa.Column("last_seated_at", sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint("name")
    )
    with op.batch_alter_table("bot", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_bot_current_match"), ["current_match"], unique=False)
        batch_op.create_index(batch_op.f("ix_bot_token_hash"), ["token_hash"], unique=True)

    op.create_table("match",
    sa.Column("id", sa.String(), nullable=False),
    sa.Column("game", sa.String(), nullable=False),
    sa.Column("settings_json", sa.String(), nullable=False),
    sa.Column("seed", sa.Integer(), nullable=False),
    sa.Column("seat_count", sa.Integer(), nullable=False),
    sa.Column("status", sa.String(), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("replay_json", sa.String(), nullable=True),
    sa.Column("ladder", sa.Boolean(), nullable=False),
    sa.Column("instance", sa.String(), nullable=True),
    sa.PrimaryKeyConstraint("id")
    )
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_match_created_at"), ["created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_match_instance"), ["instance"], unique=False)
        batch_op.create_index(batch_op.f("ix_match_status"), ["status"], unique=False)

    op.create_table("rating",
    sa.Column("bot", sa.String(), nullable=False),
    sa.Column("game", sa.String(), nullable=False),
    sa.Column("mu", sa.Float(), nullable=False),
    sa.Column("sigma", sa.Float(), nullable=False),
    sa.Column("games", sa.Integer(), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(["bot"], ["bot.name"], ),
    sa.PrimaryKeyConstraint("bot", "game")
    )
    op.create_table("rating_change",
    sa.Column("match_id", sa.String(), nullable=False),
    sa.Column("bot", sa.String(), nullable=False),
    sa.Column("game", sa.String(), nullable=False),
    sa.Column("version", sa.Integer(), nullable=False),
    sa.Column("rank", sa.Integer(), nullable=False),
    sa.Column("mu_before", sa.Float(), nullable=False),
    sa.Column("sigma_before", sa.Float(), nullable=False),
    sa.Column("mu_after", sa.Float(), nullable=False),
    sa.Column("sigma_after", sa.Float(), nullable=False),
    sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(["bot"], ["bot.name"], ),
    sa.ForeignKeyConstraint(["match_id"], ["match.id"], ),
    sa.PrimaryKeyConstraint("match_id", "bot")
    )
    with op.batch_alter_table("rating_change", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_rating_change_recorded_at"), ["recorded_at"],
                              unique=False)

    op.create_table("seat",
    sa.Column("match_id", sa.String(), nullable=False),
    sa.Column("seat", sa.Integer(), nullable=False),
    sa.Column("name", sa.String(), nullable=False),
    sa.Column("house", sa.String(), nullable=True),
    sa.Column("token_hash", sa.String(), nullable=True),
    sa.Column("bot", sa.String(), nullable=True),
    sa.Column("bot_version", sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(["match_id"], ["match.id"], ),
    sa.PrimaryKeyConstraint("match_id", "seat")
    )
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_seat_bot"), ["bot"], unique=False)
        batch_op.create_index(batch_op.f("ix_seat_token_hash"), ["token_hash"], unique=True)



def downgrade() -> None:
    """Undo this revision."""
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_seat_token_hash"))
        batch_op.drop_index(batch_op.f("ix_seat_bot"))

    op.drop_table("seat")
    with op.batch_alter_table("rating_change", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rating_change_recorded_at"))

    op.drop_table("rating_change")
    op.drop_table("rating")
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_match_status"))
        batch_op.drop_index(batch_op.f("ix_match_instance"))
        batch_op.drop_index(batch_op.f("ix_match_created_at"))

    op.drop_table("match")
    with op.batch_alter_table("bot", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_bot_token_hash"))
        batch_op.drop_index(batch_op.f("ix_bot_current_match"))

    op.drop_table("bot")
    op.drop_table("admin_token")
