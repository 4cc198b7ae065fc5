"""Many users starting at once, with the store on: what the store makes them wait.

``N`` conversations start together (each: ``start_run``, one tool round-trip with
``append_messages``, ``finish_run``), on SQLite (a WAL file in a temp dir) and PostgreSQL (a
throwaway database on 127.0.0.1:5432, or ``AGENTSTREAM_BENCH_POSTGRES_URL``). Prints, in ms,
the wait for ``start_run`` (what delays a run's first event) p50/p99, the whole burst's wall
time, the commits per second, and the CPU per conversation in µs (this process, every
thread: on SQLite the writer thread's database work is in it; PostgreSQL's own work is not).

A database in use is not empty, and how its indexes take new rows depends on what is already
there: ``--existing K`` first fills it with K conversations of the same shape (not measured).

    .venv/bin/python bench/store_burst.py [--streams 200,1000] [--existing 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
from sqlalchemy.engine import make_url

from agentstream.events import RunCompleted
from agentstream.messages import AssistantMessage, ToolCall, ToolResultPart, ToolResultsMessage
from agentstream.principal import Principal
from agentstream.store import SqlConversationStore, upgrade

try:
    from agentstream.ids import uuid7

    def new_run_id() -> str:
        """A run id as the server makes it."""
        return uuid7().hex
except ImportError:  # a version from before time-ordered ids, measured as it ran

    def new_run_id() -> str:
        return uuid.uuid4().hex


FILL_BATCH = 500
"""Conversations started together while filling the database."""

PG_ADMIN = os.environ.get(
    "AGENTSTREAM_BENCH_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
)


async def conversation(store: SqlConversationStore, n: int, starts: list[float]) -> None:
    principal = Principal(user_id=f"user-{n}", tenant_id="bench")
    run_id = new_run_id()
    began = time.perf_counter()
    started = await store.start_run(
        principal, run_id=run_id, conversation_id=None, user_message="hi"
    )
    starts.append((time.perf_counter() - began) * 1000)
    call = ToolCall(id="c1", name="lookup", arguments={"q": "x"})
    await store.append_messages(
        principal,
        run_id=run_id,
        conversation_id=started.conversation_id,
        messages=[
            AssistantMessage(text="Looking.", tool_calls=(call,)),
            ToolResultsMessage(
                results=(ToolResultPart(tool_call_id="c1", name="lookup", content="ok"),)
            ),
        ],
    )
    await store.finish_run(
        principal,
        run_id=run_id,
        conversation_id=started.conversation_id,
        messages=[AssistantMessage(text="Done.")],
        status="completed",
        completed=RunCompleted(run_id=run_id, seq=9, message="Looking.\n\nDone."),
    )


async def fill(store: SqlConversationStore, count: int) -> None:
    """``count`` conversations of other users, as a database in use already holds."""
    for first in range(0, count, FILL_BATCH):
        batch = range(first, min(count, first + FILL_BATCH))
        await asyncio.gather(*(conversation(store, -1 - n, []) for n in batch))


async def burst(url: str, streams: int, existing: int) -> tuple[float, float, float, float]:
    store = await SqlConversationStore.open(url, migrate=True)
    try:
        await fill(store, existing)
        starts: list[float] = []
        cpu, began = time.process_time(), time.perf_counter()
        await asyncio.gather(*(conversation(store, n, starts) for n in range(streams)))
        wall = (time.perf_counter() - began) * 1000
        cpu_us = (time.process_time() - cpu) / streams * 1e6
    finally:
        await store.close()
    starts.sort()
    p99 = starts[min(len(starts) - 1, int(len(starts) * 0.99))]
    return statistics.median(starts), p99, wall, cpu_us


async def postgres_database() -> tuple[str, str]:
    name = f"agentstream_bench_{uuid.uuid4().hex[:10]}"
    admin = make_url(PG_ADMIN)
    conn = await asyncpg.connect(admin.set(drivername="postgresql").render_as_string(False))
    await conn.execute(f'CREATE DATABASE "{name}"')
    await conn.close()
    url = admin.set(database=name).render_as_string(hide_password=False)
    await upgrade(url)
    return name, url


async def drop(name: str) -> None:
    conn = await asyncpg.connect(
        make_url(PG_ADMIN).set(drivername="postgresql").render_as_string(False)
    )
    await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await conn.close()


def row(store: str, count: int, figures: tuple[float, float, float, float]) -> None:
    p50, p99, wall, cpu = figures
    rate = 3 * count / wall * 1000
    print(
        f"{store:12} {count:6d} {p50:10.1f} {p99:10.1f} {wall:9.0f} {rate:10.0f} {cpu:8.0f}",
        flush=True,
    )


async def main(counts: list[int], existing: int) -> None:
    print(
        "N conversations start together; each commits start, a tool round-trip and finish"
        f" ({existing} conversations in the database before)"
    )
    print(
        f"{'store':12} {'N':>6} {'start p50':>10} {'start p99':>10} {'wall':>9} {'commits/s':>10}"
        f" {'CPU/conv':>8}"
    )
    for count in counts:
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
            row("sqlite", count, await burst(url, count, existing))
        name, url = await postgres_database()
        try:
            row("postgresql", count, await burst(url, count, existing))
        finally:
            await drop(name)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", default="200,1000")
    parser.add_argument("--existing", type=int, default=0)
    args = parser.parse_args()
    asyncio.run(main([int(n) for n in args.streams.split(",")], args.existing))
