"""Summaries of the start of long conversations, written by the model.

A new table, empty: conversations stored before have no summaries, and a run that needs one
writes it. Downgrading drops the table; the conversations keep every message, and runs read
back as far as the model's window reaches, as before.

Revision ID: 0005_summaries
Revises: 0004_message_tree
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from agentstream.store.models import CleanText, UTCDateTime

revision = "0005_summaries"
down_revision = "0004_message_tree"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agentstream_summaries",
        sa.Column(
            "before_id",
            sa.String(64),
            sa.ForeignKey("agentstream_messages.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "conversation_id",
            sa.String(64),
            sa.ForeignKey("agentstream_conversations.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("text", CleanText(), nullable=False),
        sa.Column("exchanges", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
    )
    op.create_index(
        "ix_agentstream_summaries_conversation_id", "agentstream_summaries", ["conversation_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_agentstream_summaries_conversation_id", "agentstream_summaries")
    op.drop_table("agentstream_summaries")
