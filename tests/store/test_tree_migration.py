"""A database made before conversations were trees (revision 0003_attachments) upgrades in
place, on SQLite and PostgreSQL, losing nothing: every row keeps every value it had, each
conversation becomes one branch (each message the child of the one before it, in the order
they were read, the last one the active leaf), reads back as it did, and goes on from its
end."""

from __future__ import annotations

import asyncio
from pathlib import Path

import sqlalchemy as sa

from agentstream.messages import UserMessage
from agentstream.runs import Branch
from agentstream.store import SqlConversationStore, current_revision, head_revision, upgrade
from agentstream.store.engine import create_engine

from .conftest import fresh_postgres
from .helpers import exchange
from .linear import ANN, BOB, C1_RUNS, every_row, write_as_before


async def upgraded(url: str) -> None:
    await upgrade(url, "0003_attachments")
    engine = create_engine(url)
    try:
        await write_as_before(engine)
        before = await every_row(engine)
        await upgrade(url)
        assert await current_revision(url) == head_revision()
        assert await every_row(engine) == before
        async with engine.connect() as conn:
            parents = dict(
                (
                    await conn.execute(sa.text("SELECT id, parent_id FROM agentstream_messages"))
                ).all()
            )
            run_parents = dict(
                (await conn.execute(sa.text("SELECT id, parent_id FROM agentstream_runs"))).all()
            )
            leaves = dict(
                (
                    await conn.execute(
                        sa.text("SELECT id, active_leaf_id FROM agentstream_conversations")
                    )
                ).all()
            )
    finally:
        await engine.dispose()
    assert parents == {"m0": None, **{f"m{n}": f"m{n - 1}" for n in range(1, 10)}, "b-m0": None}
    assert run_parents == {"r0": None, "r1": "m1", "r2": "m3", "r4": "m5", "r5": "m7", "b0": None}
    assert leaves == {"c1": "m9", "c2": "b-m0"}

    store = await SqlConversationStore.open(url, migrate=False)
    try:
        detail = await store.get_conversation(ANN, "c1")
        assert [(m.role, m.content, m.status) for m in detail.messages] == [
            ("user", "Hi", "complete"),
            ("assistant", "Hello!", "complete"),
            ("user", "Refund A7", "complete"),
            ("assistant", "", "complete"),
            ("assistant", "Refunded.", "complete"),
            ("user", "A joke", "complete"),
            ("assistant", "A good one", "complete"),
            ("user", "A story", "complete"),
            ("assistant", "Once", "interrupted"),
        ]
        every_message = [m for _, _, _, messages in C1_RUNS for m in messages]
        history = await store.history(ANN, "c1")
        assert [m.role for m in history] == [m.role for m in every_message]
        failed = await store.get_conversation(BOB, "c2")
        assert [(m.role, m.status) for m in failed.messages] == [
            ("user", "complete"),
            ("assistant", "failed"),
        ]
        # It goes on from its end, and branches like any other.
        await exchange(store, ANN, "Go on", "And then", conversation_id="c1")
        shown = [m.content for m in (await store.get_conversation(ANN, "c1")).messages]
        assert shown[-3:] == ["Once", "Go on", "And then"]
        joke = detail.messages[5]
        started = await store.start_run(
            ANN,
            run_id="r-again",
            conversation_id="c1",
            user_message=None,
            branch=Branch(after=joke.id, again=True),
        )
        assert started.asked == UserMessage(content="A joke")
        assert [m.role for m in started.history] == [m.role for m in every_message[:6]]
    finally:
        await store.close()


def test_sqlite_made_before_trees_upgrades_losing_nothing(tmp_path: Path) -> None:
    asyncio.run(upgraded(f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"))


def test_postgresql_made_before_trees_upgrades_losing_nothing() -> None:
    with fresh_postgres() as url:
        asyncio.run(upgraded(url))
