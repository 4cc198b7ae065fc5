"""Prepared statements: the run pipeline's writes on the driver's cursor behave as
SQLAlchemy's own execution would (values converted the same way, errors of the same types)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from agentstream.principal import Principal
from agentstream.store import SqlConversationStore
from agentstream.store.models import CONVERSATIONS, RUNS
from agentstream.store.prepared import Prepared
from agentstream.store.statements import claim_seq, create, finish, insert_run, run_outcome


async def test_values_are_converted_as_sqlalchemy_would(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid, run_id = str(uuid.uuid4()), uuid.uuid4().hex
    now = datetime(2026, 11, 24, 12, 30, 15, 123456, tzinfo=UTC)

    def write(conn: Connection) -> tuple[int, int | None]:
        create(conn, alice, cid, "hello", now, "m", {"page": "orders", "n": 2})
        insert_run(conn, cid, run_id, 0, "m", now, None)
        next_seq = claim_seq(conn, alice, cid, 2, now)
        ordinal = finish(conn, run_id, cid, run_outcome("failed", None, None, "boom", now))
        return next_seq, ordinal

    async with store.engine.begin() as conn:
        next_seq, ordinal = await conn.run_sync(write)
    assert (next_seq, ordinal) == (3, 0)
    async with store.engine.connect() as conn:
        row = (await conn.execute(select(CONVERSATIONS).where(CONVERSATIONS.c.id == cid))).one()
        run = (await conn.execute(select(RUNS).where(RUNS.c.id == run_id))).one()
    assert row.metadata == {"page": "orders", "n": 2}
    assert row.created_at == now and row.created_at.tzinfo is not None
    assert (run.status, run.error, run.finished_at) == ("failed", "boom", now)


async def test_a_missing_row_is_none(store: SqlConversationStore, alice: Principal) -> None:
    def write(conn: Connection) -> int | None:
        return finish(
            conn, "no-run", "no-conversation", run_outcome("failed", None, None, "x", now)
        )

    now = datetime.now(UTC)
    async with store.engine.begin() as conn:
        assert await conn.run_sync(write) is None


async def test_driver_errors_are_sqlalchemy_errors(
    store: SqlConversationStore, alice: Principal
) -> None:
    cid, run_id, now = str(uuid.uuid4()), uuid.uuid4().hex, datetime.now(UTC)

    def twice(conn: Connection) -> None:
        create(conn, alice, cid, "hello", now, None, None)
        insert_run(conn, cid, run_id, 0, None, now, None)
        insert_run(conn, cid, run_id, 1, None, now, None)  # the same run id again

    with pytest.raises(IntegrityError) as caught:
        async with store.engine.begin() as conn:
            await conn.run_sync(twice)
    assert run_id not in str(caught.value)  # parameters are hidden, as the engine's are
    async with store.engine.connect() as conn:  # the transaction was rolled back
        assert (await conn.execute(select(RUNS.c.id).where(RUNS.c.id == run_id))).first() is None


async def test_what_the_shortcut_cannot_run_goes_through_sqlalchemy(
    store: SqlConversationStore,
) -> None:
    # A Python-side default is filled in by SQLAlchemy's execution context, which the
    # shortcut skips: such a statement runs the ordinary way, default included.
    table = Table(
        f"t_{uuid.uuid4().hex[:8]}",
        MetaData(),
        Column("id", String(8), primary_key=True),
        Column("n", Integer, default=7),
    )
    statement = Prepared(insert(table))

    def write(conn: Connection) -> list[tuple[str, int]]:
        table.create(conn)
        statement.execute(conn, {"id": "a"})
        statement.executemany(conn, [{"id": "b"}, {"id": "c"}])
        rows = [(row.id, row.n) for row in conn.execute(select(table).order_by(table.c.id))]
        table.drop(conn)
        return rows

    async with store.engine.begin() as conn:
        assert await conn.run_sync(write) == [("a", 7), ("b", 7), ("c", 7)]
