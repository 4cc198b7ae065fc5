"""Shared state: each conversation's JSON object that its page and its agent read and write
(``agentstream_conversation_state``, one row for a conversation that has one).

Nothing is backfilled: conversations stored before have no state, as before. Downgrading
drops the table, and with it every conversation's state.

Revision ID: 0006_conversation_state
Revises: 0005_summaries
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from agentstream.store.models import UTCDateTime

revision = "0006_conversation_state"
down_revision = "0005_summaries"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agentstream_conversation_state",
        sa.Column("conversation_id", sa.String(64), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["agentstream_conversations.id"],
            name=op.f("fk_agentstream_conversation_state_conversation_id"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("conversation_id", name=op.f("pk_agentstream_conversation_state")),
    )


def downgrade() -> None:
    op.drop_table("agentstream_conversation_state")
