"""Migrations from code: both databases reach the head revision, idempotently."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect
from sqlalchemy.engine import Connection

from agentstream.store import (
    SqlConversationStore,
    StoreNotMigrated,
    current_revision,
    head_revision,
    upgrade,
)
from agentstream.store.engine import create_engine
from agentstream.store.migrate import VERSION_TABLE
from agentstream.store.models import Base


async def test_database_is_at_head(store: SqlConversationStore) -> None:
    assert head_revision() is not None
    assert await current_revision(store.engine) == head_revision()
    await upgrade(store.engine)  # nothing to do, no error
    async with store.engine.connect() as conn:
        tables = await conn.run_sync(lambda sync: set(inspect(sync).get_table_names()))
    assert {
        "agentstream_conversations",
        "agentstream_runs",
        "agentstream_messages",
        "agentstream_alembic_version",
    } <= tables


async def test_sqlite_is_upgraded_on_open_even_by_two_processes_at_once(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'fresh.db'}"
    stores = await asyncio.gather(SqlConversationStore.open(url), SqlConversationStore.open(url))
    try:
        assert await current_revision(stores[0].engine) == head_revision()
    finally:
        for store in stores:
            await store.close()


async def test_open_without_migrate_refuses_an_empty_database(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'untouched.db'}"
    with pytest.raises(StoreNotMigrated, match="agentstream db upgrade"):
        await SqlConversationStore.open(url, migrate=False)
    engine = create_engine(url)
    try:
        assert await current_revision(engine) is None  # left alone
        await upgrade(engine)
    finally:
        await engine.dispose()
    store = await SqlConversationStore.open(url, migrate=False)
    await store.close()


async def test_migrations_match_the_models(store: SqlConversationStore) -> None:
    """Autogenerate finds nothing to do: the shipped migrations build exactly the models."""

    def differences(sync: Connection) -> list[Any]:
        context = MigrationContext.configure(
            sync, opts={"version_table": VERSION_TABLE, "compare_type": True}
        )
        found: list[Any] = compare_metadata(context, Base.metadata)
        return found

    async with store.engine.connect() as conn:
        assert await conn.run_sync(differences) == []
