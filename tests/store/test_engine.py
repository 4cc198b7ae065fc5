"""Database URLs and SQLite under concurrency."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from sqlalchemy import text

from agentstream.messages import AssistantMessage
from agentstream.principal import Principal
from agentstream.store import SqlConversationStore, resolve_database_url
from agentstream.store.engine import safe_url


def test_default_is_a_sqlite_file_in_the_data_dir() -> None:
    assert resolve_database_url(env={}) == "sqlite+aiosqlite:///data/agentstream.db"
    assert (
        resolve_database_url(env={"AGENTSTREAM_DATA_DIR": "/var/lib/as"})
        == "sqlite+aiosqlite:////var/lib/as/agentstream.db"
    )


@pytest.mark.parametrize(
    ("given", "resolved"),
    [
        ("sqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("postgresql://u:p@h/db", "postgresql+asyncpg://u:p@h/db"),
        ("postgres://u@h/db", "postgresql+asyncpg://u@h/db"),
        ("postgresql+asyncpg://u@h:5433/db", "postgresql+asyncpg://u@h:5433/db"),
    ],
)
def test_plain_urls_get_the_async_driver(given: str, resolved: str) -> None:
    assert resolve_database_url(env={"AGENTSTREAM_DATABASE_URL": given}) == resolved
    assert resolve_database_url(given, env={}) == resolved


def test_safe_url_masks_the_password() -> None:
    assert safe_url("postgresql+asyncpg://u:hunter2@h/db") == "postgresql+asyncpg://u:***@h/db"


async def test_a_failed_statement_does_not_quote_its_parameters(tmp_path: Path) -> None:
    from sqlalchemy.exc import DBAPIError

    from agentstream.store import create_engine

    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'params.db'}")
    try:
        async with engine.connect() as conn:
            with pytest.raises(DBAPIError) as failed:
                await conn.execute(text("INSERT INTO missing VALUES (:v)"), {"v": "sk-user-secret"})
        assert "sk-user-secret" not in str(failed.value)
        assert "hidden" in str(failed.value)
    finally:
        await engine.dispose()


async def test_sqlite_runs_in_wal_mode(tmp_path: Path) -> None:
    store = await SqlConversationStore.open(f"sqlite+aiosqlite:///{tmp_path / 'wal.db'}")
    try:
        async with store.engine.connect() as conn:
            assert (await conn.execute(text("PRAGMA journal_mode"))).scalar() == "wal"
            assert (await conn.execute(text("PRAGMA foreign_keys"))).scalar() == 1
            assert (await conn.execute(text("PRAGMA busy_timeout"))).scalar_one() >= 5000
    finally:
        await store.close()


async def test_fifty_concurrent_runs_on_one_sqlite_file(tmp_path: Path) -> None:
    """Two workers (separate engines and pools) share one file; 50 runs start and finish at
    once, half of them on one shared conversation. None may fail with "database is locked"."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'busy.db'}"
    workers = [await SqlConversationStore.open(url), await SqlConversationStore.open(url)]
    principal = Principal(user_id="load", tenant_id="t")
    try:
        shared = (
            await workers[0].start_run(
                principal, run_id="seed", conversation_id=None, user_message="seed"
            )
        ).conversation_id

        async def request(n: int) -> str:
            store = workers[n % 2]
            rid = f"run-{n}-{uuid.uuid4().hex[:6]}"
            started = await store.start_run(
                principal,
                run_id=rid,
                conversation_id=shared if n % 2 else None,
                user_message=f"message {n}",
            )
            await store.append_messages(
                principal,
                run_id=rid,
                conversation_id=started.conversation_id,
                messages=[AssistantMessage(text=f"thinking {n}")],
            )
            await store.finish_run(
                principal,
                run_id=rid,
                conversation_id=started.conversation_id,
                messages=[AssistantMessage(text=f" answer {n}")],
                status="completed",
            )
            return started.conversation_id

        ids = await asyncio.gather(*(request(n) for n in range(50)))
        assert len(set(ids)) == 26  # 25 new conversations and the shared one
        detail = await workers[0].get_conversation(principal, shared)
        contents = [m.content for m in detail.messages]
        assert contents[0] == "seed"  # that run never finished: no answer to show
        assert len(contents) == 1 + 25 * 2
        for position in range(1, len(contents), 2):
            n = contents[position].removeprefix("message ")
            assert contents[position + 1] == f"thinking {n}\n\n answer {n}"
        page = await workers[1].list_conversations(principal, limit=100)
        assert len(page.items) == 26
    finally:
        for store in workers:
            await store.close()
