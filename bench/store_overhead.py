"""What the conversation store adds to a run: before the first event and after the last.

``start_run`` (commit the user message, load history) happens before a run streams anything;
``finish_run`` (commit the answer, build the ops agent's conversation object) after its last token.
This times both on SQLite (a WAL file in a temp dir) and PostgreSQL (a throwaway database on
127.0.0.1:5432, or ``AGENTSTREAM_BENCH_POSTGRES_URL``), for a new conversation and for one
that already has 20 exchanges with a tool round-trip each, and prints p50/p99 in ms.

    .venv/bin/python bench/store_overhead.py [--runs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench_postgres import Unreachable, bench_database

from agentstream.events import RunCompleted
from agentstream.messages import (
    AssistantMessage,
    ToolCall,
    ToolResultPart,
    ToolResultsMessage,
)
from agentstream.principal import Principal
from agentstream.store import SqlConversationStore

PRINCIPAL = Principal(user_id="bench", tenant_id="bench")
PRIOR_EXCHANGES = 20


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def one_run(
    store: SqlConversationStore, conversation_id: str | None, tools: bool
) -> tuple[str, float, float]:
    """A whole run; returns the conversation id and the start/finish times in ms."""
    rid = uuid.uuid4().hex
    began = time.perf_counter()
    started = await store.start_run(
        PRINCIPAL, run_id=rid, conversation_id=conversation_id, user_message="What is up?"
    )
    start_ms = (time.perf_counter() - began) * 1000
    cid = started.conversation_id
    if tools:
        await store.append_messages(
            PRINCIPAL,
            run_id=rid,
            conversation_id=cid,
            messages=[
                AssistantMessage(
                    text="Checking.",
                    tool_calls=(ToolCall(id=f"c{rid}", name="status", arguments={"x": 1}),),
                ),
                ToolResultsMessage(
                    results=(ToolResultPart(tool_call_id=f"c{rid}", name="status", content="ok"),)
                ),
            ],
        )
    answer = "All systems nominal. " * 20
    began = time.perf_counter()
    await store.finish_run(
        PRINCIPAL,
        run_id=rid,
        conversation_id=cid,
        messages=[AssistantMessage(text=answer)],
        status="completed",
        completed=RunCompleted(run_id=rid, seq=10, message=answer),
    )
    finish_ms = (time.perf_counter() - began) * 1000
    return cid, start_ms, finish_ms


async def measure(store: SqlConversationStore, runs: int) -> dict[str, tuple[float, float]]:
    for _ in range(10):  # warm the pool and caches
        await one_run(store, None, tools=False)
    figures: dict[str, tuple[float, float]] = {}
    new_start: list[float] = []
    new_finish: list[float] = []
    for _ in range(runs):
        _, start_ms, finish_ms = await one_run(store, None, tools=False)
        new_start.append(start_ms)
        new_finish.append(finish_ms)
    figures["new conversation: start_run"] = summarize(new_start)
    figures["new conversation: finish_run"] = summarize(new_finish)

    cid, _, _ = await one_run(store, None, tools=True)
    for _ in range(PRIOR_EXCHANGES - 1):
        await one_run(store, cid, tools=True)
    long_start: list[float] = []
    long_finish: list[float] = []
    for _ in range(runs):
        # Each sample continues a fresh copy of the same depth so the history does not grow.
        await store.delete_conversation(PRINCIPAL, cid)
        cid, _, _ = await one_run(store, None, tools=True)
        for _ in range(PRIOR_EXCHANGES - 1):
            await one_run(store, cid, tools=True)
        _, start_ms, finish_ms = await one_run(store, cid, tools=True)
        long_start.append(start_ms)
        long_finish.append(finish_ms)
    figures[f"{PRIOR_EXCHANGES} prior exchanges: start_run"] = summarize(long_start)
    figures[f"{PRIOR_EXCHANGES} prior exchanges: finish_run"] = summarize(long_finish)
    return figures


def summarize(samples: list[float]) -> tuple[float, float]:
    return statistics.median(samples), percentile(samples, 0.99)


async def on_sqlite(runs: int) -> dict[str, tuple[float, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        store = await SqlConversationStore.open(f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}")
        try:
            return await measure(store, runs)
        finally:
            await store.close()


async def on_postgres(runs: int) -> dict[str, tuple[float, float]] | str:
    try:
        async with bench_database() as url:
            store = await SqlConversationStore.open(url, migrate=False)
            try:
                return await measure(store, runs)
            finally:
                await store.close()
    except Unreachable as exc:
        return f"skipped: {exc}"


def report(backend: str, figures: dict[str, tuple[float, float]] | str) -> None:
    print(f"\n{backend}")
    if isinstance(figures, str):
        print(f"  {figures}")
        return
    for label, (p50, p99) in figures.items():
        print(f"  {label:<36} p50 {p50:7.2f} ms   p99 {p99:7.2f} ms")


async def main(runs: int) -> None:
    print(f"store overhead per run ({runs} runs each; one run at a time)")
    backends: list[tuple[str, Callable[[int], Awaitable[dict[str, tuple[float, float]] | str]]]]
    backends = [("SQLite (aiosqlite, WAL)", on_sqlite), ("PostgreSQL (asyncpg)", on_postgres)]
    for label, bench in backends:
        report(label, await bench(runs))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    asyncio.run(main(parser.parse_args().runs))
