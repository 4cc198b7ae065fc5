"""What branches cost: loading the active path of a conversation with 50 branches against a
linear conversation of the same path length, in the same run.

Two conversations in one store, each with a path of ``--exchanges`` exchanges (a question, a
tool round-trip, an answer): one linear, one where 50 earlier questions were edited, each
edit answered and continued for ``--branch-exchanges`` more exchanges, before switching back
to the original path. The two are then read alternately, ``--runs`` times each:

* ``history``: the active path as the model gets it (``SqlConversationStore.history``, the
  same walk ``start_run`` does before every run);
* ``conversation``: the active path as a person reads it, with each message's siblings
  (``get_conversation``, what ``GET /api/conversations/{id}`` serves);
* ``start+finish``: a whole run on the active path (its history loaded, its answer stored).

The tables are analyzed once built, as a deployment's are (PostgreSQL's autovacuum), so both
conversations are read with the plans a database in use would choose. Printed: p50/p99 in
ms per conversation and the ratio branched / linear of the p50s, on SQLite (a WAL file in a
temp dir) and PostgreSQL (a throwaway database on 127.0.0.1:5432, or
``AGENTSTREAM_BENCH_POSTGRES_URL``).

    .venv/bin/python bench/message_tree.py [--runs 200] [--exchanges 20] [--branch-exchanges 5]
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
from sqlalchemy import text

from agentstream.events import RunCompleted
from agentstream.messages import AssistantMessage, ToolCall, ToolResultPart, ToolResultsMessage
from agentstream.principal import Principal
from agentstream.runs import Branch
from agentstream.store import SqlConversationStore

PRINCIPAL = Principal(user_id="bench", tenant_id="bench")
BRANCHES = 50
Figures = dict[str, tuple[float, float, float, float]]


async def exchange(
    store: SqlConversationStore, cid: str | None, question: str, branch: Branch | None = None
) -> str:
    """One run (a tool round-trip, then the answer); the conversation's id."""
    rid = uuid.uuid4().hex
    started = await store.start_run(
        PRINCIPAL, run_id=rid, conversation_id=cid, user_message=question, branch=branch
    )
    cid = started.conversation_id
    call = ToolCall(id=f"c{rid}", name="status", arguments={"q": question})
    await store.append_messages(
        PRINCIPAL,
        run_id=rid,
        conversation_id=cid,
        messages=[
            AssistantMessage(text="Checking.", tool_calls=(call,)),
            ToolResultsMessage(
                results=(ToolResultPart(tool_call_id=call.id, name="status", content="ok"),)
            ),
        ],
    )
    answer = f"All systems nominal ({question}). " * 10
    await store.finish_run(
        PRINCIPAL,
        run_id=rid,
        conversation_id=cid,
        messages=[AssistantMessage(text=answer)],
        status="completed",
        completed=RunCompleted(run_id=rid, seq=10, message=answer),
        snapshot=False,
    )
    return cid


async def linear(store: SqlConversationStore, exchanges: int) -> str:
    cid = await exchange(store, None, "question 0")
    for n in range(1, exchanges):
        await exchange(store, cid, f"question {n}")
    return cid


async def branched(store: SqlConversationStore, exchanges: int, continued: int) -> str:
    """A conversation of ``exchanges`` on its active path, with :data:`BRANCHES` edits of its
    questions beside it (each answered and continued ``continued`` times)."""
    cid = await linear(store, exchanges)
    path = (await store.get_conversation(PRINCIPAL, cid)).messages
    leaf = path[-1].id
    for n in range(BRANCHES):
        at = 2 * (n % exchanges)  # the question edited: each in turn
        after = path[at - 1].id if at else None
        await exchange(store, cid, f"edit {n}", Branch(after=after))
        for more in range(continued):
            await exchange(store, cid, f"edit {n}, then {more}")
    await store.set_active(PRINCIPAL, cid, leaf)
    return cid


async def measure(store: SqlConversationStore, runs: int, exchanges: int, more: int) -> Figures:
    line = await linear(store, exchanges)
    tree = await branched(store, exchanges, more)
    # Statistics, as a deployment's database keeps them (autovacuum).
    async with store.engine.begin() as conn:
        await conn.execute(text("ANALYZE"))
    line_path = await store.history(PRINCIPAL, line)
    tree_path = await store.history(PRINCIPAL, tree)
    assert len(line_path) == len(tree_path), "the two paths must be the same length"
    tasks: dict[str, Callable[[str], Awaitable[object]]] = {
        "history": lambda cid: store.history(PRINCIPAL, cid),
        "conversation": lambda cid: store.get_conversation(PRINCIPAL, cid),
    }
    figures: Figures = {}
    for label, task in tasks.items():
        for cid in (line, tree):  # warm both
            await task(cid)
        samples: dict[str, list[float]] = {line: [], tree: []}
        for _ in range(runs):
            for cid in (line, tree):  # alternately, so both meet the same conditions
                began = time.perf_counter()
                await task(cid)
                samples[cid].append((time.perf_counter() - began) * 1000)
        figures[label] = (*summarize(samples[line]), *summarize(samples[tree]))
    # Whole runs grow both paths by one exchange each time, alike.
    samples = {line: [], tree: []}
    for n in range(runs):
        for cid in (line, tree):
            began = time.perf_counter()
            await exchange(store, cid, f"more {n}")
            samples[cid].append((time.perf_counter() - began) * 1000)
    figures["start+finish (a run)"] = (*summarize(samples[line]), *summarize(samples[tree]))
    return figures


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def summarize(samples: list[float]) -> tuple[float, float]:
    return statistics.median(samples), percentile(samples, 0.99)


async def on_sqlite(runs: int, exchanges: int, more: int) -> Figures | str:
    with tempfile.TemporaryDirectory() as tmp:
        store = await SqlConversationStore.open(f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}")
        try:
            return await measure(store, runs, exchanges, more)
        finally:
            await store.close()


async def on_postgres(runs: int, exchanges: int, more: int) -> Figures | str:
    try:
        async with bench_database() as url:
            store = await SqlConversationStore.open(url, migrate=False)
            try:
                return await measure(store, runs, exchanges, more)
            finally:
                await store.close()
    except Unreachable as exc:
        return f"skipped: {exc}"


def report(backend: str, figures: Figures | str) -> None:
    print(f"\n{backend}")
    if isinstance(figures, str):
        print(f"  {figures}")
        return
    print(f"  {'':<22} {'linear p50/p99':>20} {'50 branches p50/p99':>24} {'ratio':>7}")
    for label, (line50, line99, tree50, tree99) in figures.items():
        print(
            f"  {label:<22} {line50:8.2f} /{line99:7.2f} ms   {tree50:8.2f} /{tree99:7.2f} ms"
            f"   {tree50 / line50:5.2f}"
        )


async def main(runs: int, exchanges: int, more: int) -> None:
    print(
        f"active path: {exchanges} exchanges (question, tool round-trip, answer), linear vs "
        f"{BRANCHES} branches of {1 + more} exchanges beside it; {runs} samples each"
    )
    backends = [("SQLite (aiosqlite, WAL)", on_sqlite), ("PostgreSQL (asyncpg)", on_postgres)]
    for label, bench in backends:
        report(label, await bench(runs, exchanges, more))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--exchanges", type=int, default=20)
    parser.add_argument("--branch-exchanges", type=int, default=5)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.exchanges, arguments.branch_exchanges))
