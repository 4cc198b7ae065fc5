"""A database made before the usage ledger (revision 0001, today's released schema) upgrades
in place, on SQLite and PostgreSQL: its completed runs are entered in the ledger from the
usage their rows kept, without a cost."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import text

from agentstream.store import SqlConversationStore, current_revision, head_revision, upgrade
from agentstream.store.engine import create_engine

from .conftest import fresh_postgres

FINISHED = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)


async def made_before_the_ledger(url: str) -> None:
    """The schema of revision 0001 with a conversation, a completed run with usage, a
    cancelled run without any and a run still going, written as that version wrote them."""
    await upgrade(url, "0001")
    engine = create_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO agentstream_conversations (id, tenant_id, owner_id, title, "
                    "title_source, model, metadata, created_at, updated_at, next_seq, "
                    "next_ordinal) VALUES ('c1', 'acme', 'ann', 'Hello', 'message', "
                    "'openai:gpt-4.1', '{}', :at, :at, 3, 3)"
                ),
                {"at": FINISHED},
            )
            for rid, ordinal, status, usage, finished in (
                (
                    "r1",
                    0,
                    "completed",
                    '{"input_tokens": 120, "output_tokens": 30, '
                    '"reasoning_tokens": 0, "cache_read_tokens": 100, "cache_write_tokens": 0}',
                    FINISHED,
                ),
                ("r2", 1, "cancelled", None, FINISHED),
                ("r3", 2, "running", None, None),
            ):
                await conn.execute(
                    text(
                        "INSERT INTO agentstream_runs (id, conversation_id, ordinal, status, "
                        "model, usage, started_at, finished_at) VALUES (:id, 'c1', :ordinal, "
                        ":status, 'openai:gpt-4.1', :usage, :at, :finished)"
                    ),
                    {
                        "id": rid,
                        "ordinal": ordinal,
                        "status": status,
                        "usage": usage,
                        "at": FINISHED,
                        "finished": finished,
                    },
                )
    finally:
        await engine.dispose()


async def upgraded(url: str) -> None:
    await made_before_the_ledger(url)
    assert await current_revision(url) == "0001"
    await upgrade(url)
    assert await current_revision(url) == head_revision()
    store = await SqlConversationStore.open(url, migrate=False)
    try:
        day = FINISHED.date()
        (line,) = await store.usage_report(
            first_day=day, last_day=day, group_by=("tenant", "user", "model", "day")
        )
        assert line.group == {
            "tenant": "acme",
            "user": "ann",
            "model": "openai:gpt-4.1",
            "day": "2026-11-20",
        }
        assert line.runs == 1
        assert (line.usage.input_tokens, line.usage.output_tokens) == (120, 30)
        assert line.usage.cache_read_tokens == 100
        assert line.unpriced_runs == 1  # no cost for what was spent before prices were kept
        assert line.cost_usd == 0
    finally:
        await store.close()


def test_sqlite_made_before_the_ledger_upgrades(tmp_path: Path) -> None:
    asyncio.run(upgraded(f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"))


def test_postgresql_made_before_the_ledger_upgrades() -> None:
    with fresh_postgres() as url:
        asyncio.run(upgraded(url))
