"""The usage ledger: each run's tokens and cost, by user, tenant, model and day.

Runs stored before it are entered from the usage their rows kept (completed runs only, as
then), without a cost: prices were not kept then, and today's may not be those of the day.

Revision ID: 0002_run_usage
Revises: 0001
Create Date: 2026-11-27
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

from agentstream.store.models import UTCDateTime

revision = "0002_run_usage"
down_revision = "0001"
branch_labels = None
depends_on = None

_TOKENS = (
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
)


def upgrade() -> None:
    usage = op.create_table(
        "agentstream_usage",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("tenant_id", sa.String(255), nullable=False),
        sa.Column("user_id", sa.String(255), nullable=False),
        sa.Column("conversation_id", sa.String(64), nullable=True),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=False),
        *(sa.Column(name, sa.Integer(), nullable=False) for name in _TOKENS),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("estimated", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_agentstream_usage")),
    )
    op.create_index("ix_agentstream_usage_day", "agentstream_usage", ["day"])
    op.create_index(
        "ix_agentstream_usage_owner_day", "agentstream_usage", ["tenant_id", "user_id", "day"]
    )
    _enter_earlier_runs(usage)


def _enter_earlier_runs(usage: sa.Table) -> None:
    runs = sa.table(
        "agentstream_runs",
        sa.column("id", sa.String),
        sa.column("conversation_id", sa.String),
        sa.column("status", sa.String),
        sa.column("model", sa.String),
        sa.column("usage", sa.JSON),
        sa.column("finished_at", UTCDateTime()),
    )
    conversations = sa.table(
        "agentstream_conversations",
        sa.column("id", sa.String),
        sa.column("tenant_id", sa.String),
        sa.column("owner_id", sa.String),
        sa.column("model", sa.String),
    )
    connection = op.get_bind()
    found = connection.execute(
        sa.select(
            runs.c.id,
            runs.c.conversation_id,
            runs.c.status,
            runs.c.model,
            runs.c.usage,
            runs.c.finished_at,
            conversations.c.tenant_id,
            conversations.c.owner_id,
            conversations.c.model.label("conversation_model"),
        )
        .select_from(runs.join(conversations, runs.c.conversation_id == conversations.c.id))
        .where(runs.c.usage.is_not(None), runs.c.finished_at.is_not(None))
    )
    rows: list[dict[str, Any]] = []
    for run in found:
        counts = run.usage if isinstance(run.usage, dict) else {}
        rows.append(
            {
                "run_id": run.id,
                "tenant_id": run.tenant_id,
                "user_id": run.owner_id,
                "conversation_id": run.conversation_id,
                "model": run.model or run.conversation_model or "",
                "status": run.status,
                "day": run.finished_at.strftime("%Y-%m-%d"),
                "finished_at": run.finished_at,
                **{name: _count(counts.get(name)) for name in _TOKENS},
                "cost_usd": None,
                "estimated": False,
            }
        )
    if rows:
        op.bulk_insert(usage, rows)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def downgrade() -> None:
    op.drop_table("agentstream_usage")
