"""What the shared state costs (:mod:`agentstream.state`).

Two parts:

* **a tool call**: the loop copies the state for the call, diffs the call's copy against
  what it found, applies the patch to the run's state and checks the result (an object of at
  most 64 KiB of JSON). Timed for states of about 0, 1, 16 and 60 KiB (one key changed), in
  µs per call. Text deltas, the per-event hot path, do not touch the state.
* **the store**: a run's start (``start_run``: the user message committed) in a conversation
  without state, with a stored state (one more indexed read in the same transaction), and
  with a page's state sent (that read, and a write when it differs), and a tool's change
  (``change_state``), p50 and p95 in ms, on a fresh SQLite file and a fresh PostgreSQL
  database::

    .venv/bin/python bench/shared_state.py [--runs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agentstream.principal import Principal
from agentstream.state import apply_patch, check_state, copy_json, diff
from agentstream.store import SqlConversationStore

sys.path.insert(0, str(Path(__file__).parent))
from bench_postgres import Unreachable, bench_database  # noqa: E402


def state_of(kib: int) -> dict[str, Any]:
    """Filters, a selection and rows of a table: about ``kib`` KiB of JSON."""
    row = {"title": "An article on base editing", "year": 2020}
    rows = [{"id": f"A{n:04d}", **row} for n in range(kib * 15)]
    return {"filters": {"year_from": 2010, "journal": "Nature"}, "selected": [], "rows": rows}


def tool_call(state: dict[str, Any]) -> dict[str, Any]:
    """What the loop does for one call that changes one key."""
    found = state  # the run's state is a value: a call's starting point needs no copy
    mine = copy_json(found)
    mine["filters"]["year_from"] = 2020  # the tool's change
    patch = diff(found, mine)
    return check_state(apply_patch(state, patch))


def time_calls() -> None:
    print("tool call (copy, diff, apply, check), one key changed")
    for kib in (0, 1, 16, 60):
        state = state_of(kib) if kib else {"filters": {"year_from": 2010}}
        repeats = 2000 if kib < 16 else 200
        started = time.perf_counter()
        for _ in range(repeats):
            tool_call(state)
        each = (time.perf_counter() - started) / repeats * 1e6
        size = len(json.dumps(state, separators=(",", ":")))
        print(f"  ~{size / 1024:5.1f} KiB state: {each:8.1f} µs per call")


async def timed(
    runs: int, prepare: Callable[[int], Awaitable[str]], step: Callable[[str, int], Awaitable[None]]
) -> tuple[float, float]:
    """p50 and p95 of ``step`` in ms, each on a conversation ``prepare`` made (untimed), so
    every start reads the same short history."""
    times = []
    for n in range(runs):
        conversation = await prepare(n)
        started = time.perf_counter()
        await step(conversation, n)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


async def time_store(url: str, label: str, runs: int) -> None:
    store = await SqlConversationStore.open(url, migrate=False)
    who = Principal(user_id=f"bench-{uuid.uuid4().hex[:8]}", tenant_id="bench")
    page = state_of(1)
    try:

        async def new_conversation(state: dict[str, Any] | None) -> str:
            started = await store.start_run(
                who, run_id=uuid.uuid4().hex, conversation_id=None, user_message="Hi", state=state
            )
            return started.conversation_id

        async def plain(n: int) -> str:
            return await new_conversation(None)

        async def stateful(n: int) -> str:
            return await new_conversation(page)

        def start(state: Callable[[int], dict[str, Any] | None]) -> Any:
            async def step(conversation: str, n: int) -> None:
                await store.start_run(
                    who,
                    run_id=uuid.uuid4().hex,
                    conversation_id=conversation,
                    user_message="And then?",
                    state=state(n),
                )

            return step

        async def change(conversation: str, n: int) -> None:
            patch = [{"op": "replace", "path": "/filters/year_from", "value": 2000 + n % 20}]
            await store.change_state(who, conversation, patch)

        rows = {
            "start, no state": await timed(runs, plain, start(lambda n: None)),
            "start, stored state (1 KiB)": await timed(runs, stateful, start(lambda n: None)),
            "start, page's state sent, same": await timed(runs, stateful, start(lambda n: page)),
            "start, page's state sent, changed": await timed(
                runs, stateful, start(lambda n: {**page, "selected": [f"A{n:04d}"]})
            ),
            "a tool's change (change_state)": await timed(runs, stateful, change),
        }
        print(f"store, {label} (p50 / p95 ms over {runs})")
        for name, (p50, p95) in rows.items():
            print(f"  {name:36s} {p50:6.2f} / {p95:6.2f}")
    finally:
        await store.close()


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite+aiosqlite:///{Path(directory) / 'bench.db'}"
        await (await SqlConversationStore.open(url)).close()  # migrated
        await time_store(url, "SQLite", runs)
    try:
        async with bench_database() as url:
            await time_store(url, "PostgreSQL", runs)
    except Unreachable as exc:
        print(f"store, PostgreSQL: skipped ({exc})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    time_calls()
    asyncio.run(main(args.runs))
