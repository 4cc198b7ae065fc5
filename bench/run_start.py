"""What starting a run costs the server, in process: the part of a burst's wait that is ours.

When N chats start together, the last one's first event waits for the start of every request
ahead of it, so the server's work per request before the first event, times N, is most of
the burst's time to first event. ``bench/stream_overhead.py`` measures that over real sockets,
where other work on the machine shows; this calls the ASGI apps directly on one uvloop, with
no sockets and no client process, so the figures are steadier and a change to the start of a
run shows in them.

Each round opens N short streams together (two paced deltas each, ``--message``) through the
same apps as ``stream_overhead.py``: bare Starlette, agentstream without a store, and
agentstream on a fresh SQLite file. Printed per app and round: server CPU per run (the whole
process, store thread included, start to end of every stream) and time to first event
p50/p99 in ms (from the moment the round starts).

The last row, ``driver``, is a floor for the store's part rather than an app: the rows a new
chat's start commits before its first event (conversation, run, user message), written
through the stdlib ``sqlite3`` driver alone into the same schema, N per round in transactions
of 50, with no framework around them. Its CPU is per start. Compare within one run::

    .venv/bin/python bench/run_start.py [--apps bare,nostore,sqlite,driver] [--streams 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
import time
import uuid
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import uvloop

sys.path.insert(0, str(Path(__file__).parent))
from stream_overhead import agentstream_app, bare_app, percentile, sqlite_database  # noqa: E402

PATH = "/api/chat/stream"


async def one_stream(app: Any, body: bytes, started: float) -> float:
    """One request through ``app``; seconds from ``started`` to its first body bytes."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": PATH,
        "raw_path": PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    read = False
    ended = asyncio.Event()
    first = 0.0

    async def receive() -> dict[str, Any]:
        nonlocal read
        if not read:
            read = True
            return {"type": "http.request", "body": body, "more_body": False}
        await ended.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal first
        if message["type"] == "http.response.body" and message.get("body") and not first:
            first = time.perf_counter()

    await app(scope, receive, send)
    ended.set()
    return first - started


async def measure(kind: str, streams: int, rounds: int, message: str) -> None:
    from agentstream.server.process import tune_gc

    if kind == "driver":
        await measure_driver(streams, rounds, message)
        return
    async with AsyncExitStack() as stack:
        if kind == "bare":
            app = bare_app()
        else:
            directory = stack.enter_context(tempfile.TemporaryDirectory())
            database = await sqlite_database(directory) if kind == "sqlite" else None
            app = agentstream_app(database)
            await stack.enter_async_context(app.router.lifespan_context(app))
        tune_gc()  # as ``agentstream serve`` does (and stream_overhead.py for every server)
        body = json.dumps({"message": message}).encode()
        for _ in range(2):  # warm: imports, caches, the store's connection
            await asyncio.gather(*(one_stream(app, body, time.perf_counter()) for _ in range(20)))
        for _ in range(rounds):
            cpu, started = time.process_time(), time.perf_counter()
            waits = await asyncio.gather(*(one_stream(app, body, started) for _ in range(streams)))
            per_run = (time.process_time() - cpu) / streams * 1e6
            ms = [w * 1e3 for w in waits]
            print(
                f"  {kind:<8} {streams:>5} {per_run:>10.0f} "
                f"{percentile(ms, 0.5):>9.1f} {percentile(ms, 0.99):>9.1f}",
                flush=True,
            )


_INSERTS = (
    "INSERT INTO agentstream_conversations (id, tenant_id, owner_id, title, title_source, model,"
    " metadata, created_at, updated_at, next_seq, next_ordinal)"
    " VALUES (?, '', ?, ?, 'message', 'bench', '{}', ?, ?, 1, 1)",
    "INSERT INTO agentstream_runs (id, conversation_id, ordinal, status, model, started_at)"
    " VALUES (?, ?, 0, 'running', 'bench', ?)",
    "INSERT INTO agentstream_messages (id, conversation_id, run_id, ordinal, seq, role, text,"
    " reasoning, body, status, created_at)"
    " VALUES (?, ?, ?, 0, 0, 'user', ?, NULL, ?, 'complete', ?)",
)


try:
    from agentstream.ids import new_id
except ImportError:  # a version from before time-ordered ids, measured as it ran

    def new_id() -> str:
        return str(uuid.uuid4())


async def measure_driver(starts: int, rounds: int, message: str) -> None:
    """The floor: a new chat's three rows through the stdlib driver alone (see above)."""
    with tempfile.TemporaryDirectory() as directory:
        url = await sqlite_database(directory)
        conn = sqlite3.connect(url.split("///", 1)[1], isolation_level=None)
        conn.execute("PRAGMA synchronous=NORMAL")  # as the store's connections are tuned
        conn.execute("PRAGMA foreign_keys=ON")
        conversation, run, user = _INSERTS
        body = json.dumps({"role": "user", "content": message})

        def write(count: int) -> None:
            for first in range(0, count, 50):
                conn.execute("BEGIN IMMEDIATE")
                for _ in range(min(50, count - first)):
                    now = datetime.now(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")
                    cid, run_id = new_id(), new_id()
                    conn.execute(conversation, (cid, "anonymous", message, now, now))
                    conn.execute(run, (run_id, cid, now))
                    conn.execute(user, (new_id(), cid, run_id, message, body, now))
                conn.execute("COMMIT")

        try:
            write(40)  # warm
            for _ in range(rounds):
                cpu = time.process_time()
                write(starts)
                per_start = (time.process_time() - cpu) / starts * 1e6
                none = "-"
                print(f"  driver   {starts:>5} {per_start:>10.0f} {none:>9} {none:>9}", flush=True)
        finally:
            conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--apps", default="bare,nostore,sqlite,driver")
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--message", default="pace=0.05 n=2")
    args = parser.parse_args()
    print(f"{args.streams} streams started together, '{args.message}'; CPU in µs, times in ms")
    print(f"  {'app':<8} {'N':>5} {'CPU/run':>10} {'ttfe p50':>9} {'ttfe p99':>9}")
    for kind in args.apps.split(","):
        # One process for every app: each starts from its own fresh app and database.
        uvloop.run(measure(kind, args.streams, args.rounds, args.message))


if __name__ == "__main__":
    main()
