"""A database made before attachments (revision 0002_run_usage) upgrades in place, on SQLite
and PostgreSQL: its conversations read back as they were, and uploads can be kept and named
in messages at once, content in the database included."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentstream.store import SqlConversationStore, current_revision, head_revision, upgrade
from agentstream.store.attachments import SqlAttachments
from agentstream.store.blobs import SqlBlobs
from agentstream.store.engine import create_engine

from .attachments import upload
from .conftest import fresh_postgres
from .helpers import run_id
from .linear import ANN, write_as_before


async def upgraded(url: str, staging_dir: Path) -> None:
    await upgrade(url, "0002_run_usage")
    engine = create_engine(url)
    try:
        await write_as_before(engine)
    finally:
        await engine.dispose()
    ann, cid = ANN, "c1"
    assert await current_revision(url) == "0002_run_usage"
    await upgrade(url)
    assert await current_revision(url) == head_revision()
    store = await SqlConversationStore.open(url, migrate=False)
    try:
        detail = await store.get_conversation(ann, cid)
        assert [m.content for m in detail.messages][:2] == ["Hi", "Hello!"]
        attachments = SqlAttachments(store.engine, SqlBlobs(store.engine))
        saved = await upload(attachments, ann, b"a,b\n1,2\n", name="t.csv", staging_dir=staging_dir)
        later = await store.start_run(
            ann, run_id=run_id(), conversation_id=cid, user_message="See", attachments=[saved]
        )
        assert later.conversation_id == cid
        assert await attachments.content(saved) == b"a,b\n1,2\n"
    finally:
        await store.close()


def test_sqlite_made_before_attachments_upgrades(tmp_path: Path) -> None:
    asyncio.run(upgraded(f"sqlite+aiosqlite:///{tmp_path / 'old.db'}", tmp_path))


def test_postgresql_made_before_attachments_upgrades(tmp_path: Path) -> None:
    with fresh_postgres() as url:
        asyncio.run(upgraded(url, tmp_path))
