"""Conversations, runs and messages.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from agentstream.store.models import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agentstream_conversations",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("tenant_id", sa.String(255), nullable=False),
        sa.Column("owner_id", sa.String(255), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("title_source", sa.String(16), nullable=False),
        sa.Column("model", sa.String(255), nullable=True),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("next_seq", sa.Integer(), nullable=False),
        sa.Column("next_ordinal", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agentstream_conversations")),
    )
    op.create_index(
        "ix_agentstream_conversations_owner_recent",
        "agentstream_conversations",
        ["tenant_id", "owner_id", "updated_at", "id"],
    )
    op.create_table(
        "agentstream_runs",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("conversation_id", sa.String(64), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("model", sa.String(255), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("usage", sa.JSON(), nullable=True),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["agentstream_conversations.id"],
            name=op.f("fk_agentstream_runs_conversation_id"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agentstream_runs")),
        sa.UniqueConstraint(
            "conversation_id", "ordinal", name=op.f("uq_agentstream_runs_conversation_id_ordinal")
        ),
    )
    op.create_index(
        op.f("ix_agentstream_runs_conversation_id"), "agentstream_runs", ["conversation_id"]
    )
    op.create_table(
        "agentstream_messages",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("conversation_id", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("reasoning", sa.Text(), nullable=True),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["agentstream_conversations.id"],
            name=op.f("fk_agentstream_messages_conversation_id"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["agentstream_runs.id"],
            name=op.f("fk_agentstream_messages_run_id"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agentstream_messages")),
        sa.UniqueConstraint(
            "conversation_id", "seq", name=op.f("uq_agentstream_messages_conversation_id_seq")
        ),
    )
    op.create_index(
        "ix_agentstream_messages_order",
        "agentstream_messages",
        ["conversation_id", "ordinal", "seq"],
    )
    op.create_index(op.f("ix_agentstream_messages_run_id"), "agentstream_messages", ["run_id"])


def downgrade() -> None:
    op.drop_table("agentstream_messages")
    op.drop_table("agentstream_runs")
    op.drop_table("agentstream_conversations")
