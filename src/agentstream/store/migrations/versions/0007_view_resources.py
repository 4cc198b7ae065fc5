"""Interactive views' documents, cached per conversation (``agentstream_view_resources``).

Revision ID: 0007_view_resources
Revises: 0006_conversation_state
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from agentstream.store.models import UTCDateTime

revision = "0007_view_resources"
down_revision = "0006_conversation_state"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agentstream_view_resources",
        sa.Column("conversation_id", sa.String(64), nullable=False),
        sa.Column("source", sa.String(255), nullable=False),
        sa.Column("uri", sa.String(1024), nullable=False),
        sa.Column("html", sa.Text(), nullable=False),
        sa.Column("csp", sa.JSON(), nullable=False),
        sa.Column("prefers_border", sa.Boolean(), nullable=True),
        sa.Column("fetched_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["agentstream_conversations.id"],
            name=op.f("fk_agentstream_view_resources_conversation_id"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "conversation_id", "source", "uri", name=op.f("pk_agentstream_view_resources")
        ),
    )


def downgrade() -> None:
    op.drop_table("agentstream_view_resources")
