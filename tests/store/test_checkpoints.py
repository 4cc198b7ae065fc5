"""SQLite's WAL is checkpointed by a thread of the store's own, not inside commits."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
import uuid
from pathlib import Path

import pytest
import sqlalchemy

from agentstream.principal import Principal
from agentstream.store import SqlConversationStore
from agentstream.store.checkpoints import Checkpointer
from agentstream.store.engine import WAL_AUTOCHECKPOINT_PAGES
from tests.server.helpers import WAIT


def _in_the_database_file(path: Path, conversation_id: str) -> bool:
    """Whether the row is in the main file itself (``immutable`` reads skip the WAL)."""
    conn = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        query = "SELECT 1 FROM agentstream_conversations WHERE id = ?"
        return conn.execute(query, (conversation_id,)).fetchone() is not None
    except sqlite3.DatabaseError:
        # Not even the tables have reached the file, or the checkpoint is writing it as this
        # reads it (an immutable read does not wait for writers): not there yet.
        return False
    finally:
        conn.close()


async def test_committed_rows_reach_the_database_file_without_a_commit_checkpointing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    async with await SqlConversationStore.open(f"sqlite+aiosqlite:///{path}") as store:
        async with store.engine.connect() as conn:
            pages = await conn.exec_driver_sql("PRAGMA wal_autocheckpoint")
            assert pages.scalar() == WAL_AUTOCHECKPOINT_PAGES  # commits leave it to the thread
        started = await store.start_run(
            Principal(user_id="alice"),
            run_id=uuid.uuid4().hex,
            conversation_id=None,
            user_message="hello",
        )
        # A few pages in the log, far below the commits' own threshold: only the
        # checkpoint thread copies them into the file.
        deadline = time.monotonic() + WAIT  # a hang guard: the thread checkpoints every 0.2 s
        while not _in_the_database_file(path, started.conversation_id):
            assert time.monotonic() < deadline, "the row never reached the database file"
            await asyncio.sleep(0.01)


def test_a_failing_checkpoint_is_logged_and_the_next_commit_tries_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'missing' / 'store.db'}")
    checkpoints = Checkpointer(engine, interval=0.01)
    try:
        with caplog.at_level(logging.WARNING, logger="agentstream.store"):
            checkpoints.committed()
            for _ in range(200):
                if caplog.records:
                    break
                time.sleep(0.01)
        assert "WAL checkpoint failed" in caplog.text
        (tmp_path / "missing").mkdir()
        caplog.clear()
        checkpoints.committed()
        for _ in range(200):
            if checkpoints.checkpoints:
                break
            time.sleep(0.01)
        assert checkpoints.checkpoints == 1
        assert not caplog.records
    finally:
        checkpoints.close()
        engine.dispose()


def _checkpoint_threads() -> int:
    return sum(thread.name == "agentstream-store-checkpoints" for thread in threading.enumerate())


async def test_the_thread_starts_with_the_first_commit_and_ends_with_the_store(
    tmp_path: Path,
) -> None:
    before = _checkpoint_threads()
    store = await SqlConversationStore.open(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
    alice = Principal(user_id="alice")
    await store.list_conversations(alice)
    assert _checkpoint_threads() == before
    await store.start_run(alice, run_id=uuid.uuid4().hex, conversation_id=None, user_message="hi")
    assert _checkpoint_threads() == before + 1
    await store.close()
    assert _checkpoint_threads() == before
