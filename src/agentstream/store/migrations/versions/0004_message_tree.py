"""Conversations as trees: each message's parent, each run's starting point and each
conversation's active leaf.

Conversations stored before are straight lines, ordered by ``(ordinal, seq)``: each message
becomes the child of the one before it, each run starts from the message before its first,
and the last message is the active leaf. Nothing is removed or rewritten, so every
conversation reads back as it did. The backfill is three correlated ``UPDATE``s that use the
``(conversation_id, ordinal, seq)`` index, the same SQL on SQLite and PostgreSQL.
Downgrading drops the columns: every message is kept, but a conversation with branches reads
back as all of them in ``(ordinal, seq)`` order.

Revision ID: 0004_message_tree
Revises: 0003_attachments
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_message_tree"
down_revision = "0003_attachments"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("agentstream_messages", sa.Column("parent_id", sa.String(64), nullable=True))
    op.add_column("agentstream_runs", sa.Column("parent_id", sa.String(64), nullable=True))
    op.add_column(
        "agentstream_conversations", sa.Column("active_leaf_id", sa.String(64), nullable=True)
    )
    _backfill()
    op.create_index(
        "ix_agentstream_messages_parent", "agentstream_messages", ["conversation_id", "parent_id"]
    )


def _backfill() -> None:
    messages = sa.table(
        "agentstream_messages",
        sa.column("id", sa.String),
        sa.column("conversation_id", sa.String),
        sa.column("run_id", sa.String),
        sa.column("ordinal", sa.Integer),
        sa.column("seq", sa.Integer),
        sa.column("parent_id", sa.String),
    )
    runs = sa.table(
        "agentstream_runs",
        sa.column("id", sa.String),
        sa.column("conversation_id", sa.String),
        sa.column("ordinal", sa.Integer),
        sa.column("parent_id", sa.String),
    )
    conversations = sa.table(
        "agentstream_conversations", sa.column("id", sa.String), sa.column("active_leaf_id")
    )
    earlier = messages.alias("earlier")

    def last_before(conversation: sa.ColumnElement[str], ordinal: object, seq: object) -> object:
        """The id of the conversation's last message before ``(ordinal, seq)``."""
        return (
            sa.select(earlier.c.id)
            .where(
                earlier.c.conversation_id == conversation,
                sa.or_(
                    earlier.c.ordinal < ordinal,
                    sa.and_(earlier.c.ordinal == ordinal, earlier.c.seq < seq),
                ),
            )
            .order_by(earlier.c.ordinal.desc(), earlier.c.seq.desc())
            .limit(1)
            .scalar_subquery()
        )

    connection = op.get_bind()
    connection.execute(
        sa.update(messages).values(
            parent_id=last_before(messages.c.conversation_id, messages.c.ordinal, messages.c.seq)
        )
    )
    # A run starts after every message of the runs before it (-1: before its own first).
    connection.execute(
        sa.update(runs).values(parent_id=last_before(runs.c.conversation_id, runs.c.ordinal, -1))
    )
    last = (
        sa.select(earlier.c.id)
        .where(earlier.c.conversation_id == conversations.c.id)
        .order_by(earlier.c.ordinal.desc(), earlier.c.seq.desc())
        .limit(1)
        .scalar_subquery()
    )
    connection.execute(sa.update(conversations).values(active_leaf_id=last))


def downgrade() -> None:
    op.drop_index("ix_agentstream_messages_parent", "agentstream_messages")
    with op.batch_alter_table("agentstream_conversations") as batch:
        batch.drop_column("active_leaf_id")
    with op.batch_alter_table("agentstream_runs") as batch:
        batch.drop_column("parent_id")
    with op.batch_alter_table("agentstream_messages") as batch:
        batch.drop_column("parent_id")
