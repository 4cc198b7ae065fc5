"""Attachments: who uploaded what (``agentstream_attachments``), and the content of those
kept in the database rather than on disk (``agentstream_blobs``).

Revision ID: 0003_attachments
Revises: 0002_run_usage
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from agentstream.store.models import UTCDateTime

revision = "0003_attachments"
down_revision = "0002_run_usage"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agentstream_attachments",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("tenant_id", sa.String(255), nullable=False),
        sa.Column("owner_id", sa.String(255), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("media_type", sa.String(100), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("referenced_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agentstream_attachments")),
    )
    op.create_index("ix_agentstream_attachments_sha256", "agentstream_attachments", ["sha256"])
    op.create_index(
        "ix_agentstream_attachments_unreferenced",
        "agentstream_attachments",
        ["referenced_at", "created_at"],
    )
    op.create_table(
        "agentstream_blobs",
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("part", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("sha256", "part", name=op.f("pk_agentstream_blobs")),
    )


def downgrade() -> None:
    op.drop_table("agentstream_blobs")
    op.drop_table("agentstream_attachments")
