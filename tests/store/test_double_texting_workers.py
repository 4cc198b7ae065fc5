"""Two messages for one conversation that reach two worker processes at the same moment never
run two answers at once, under each policy: two ``agentstream serve`` processes sharing Redis
and a PostgreSQL database, or only a database (PostgreSQL, or a SQLite file). Each answer
holds a mark both processes see for a second (``tests.server.turn_agents``) and reports
whether another answer held it.

Two processes rather than ``serve --workers 2``: on one port the kernel may hand both
connections of a race to one worker, and the race across workers is the point."""

from __future__ import annotations

import json
import os
import threading
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from tests.server.helpers import WAIT, serve_process

ROOT = Path(__file__).resolve().parents[2]
TRAY = "/api/chat/stream"
ROUNDS = 3


def at_once(bases: list[str], body: dict[str, Any]) -> list[tuple[int, str, list[Any]]]:
    """``body`` posted to each of ``bases`` at the same moment (connections opened first):
    each answer's status, its run id (for a 409, the one it names) and its frames."""
    clients = [httpx.Client(base_url=base, timeout=WAIT) for base in bases]
    for client in clients:
        client.get("/api/chat/models")  # connected before the race
    ready = threading.Barrier(len(bases))
    results: list[Any] = [None] * len(bases)

    def send(n: int) -> None:
        ready.wait()
        with clients[n].stream("POST", TRAY, json=body) as response:
            response.read()
            frames = [
                json.loads(line[6:])
                for line in response.text.splitlines()
                if line.startswith("data: ")
            ]
            # A 409 names the answer in progress; a stream is its own.
            run_id = (
                response.json().get("run_id")
                if response.status_code == 409
                else response.headers["x-run-id"]
            )
            results[n] = (response.status_code, run_id, frames)

    threads = [threading.Thread(target=send, args=(n,)) for n in range(len(bases))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT * 2)
    for client in clients:
        client.close()
    assert all(result is not None for result in results)
    return results


def end_of(frames: list[Any]) -> str:
    return str(frames[-1]["type"])


def take_turns(
    tmp_path: Path, database_url: str, *, redis: bool, policies: tuple[str, ...]
) -> None:
    """Two server processes on ``database_url`` (and Redis), a conversation, and ``ROUNDS``
    races of two messages under each of ``policies``; then no answer overlapped another."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSTREAM_")}
    env.update(AGENTSTREAM_DATABASE_URL=database_url, DOUBLE_TEXTING_DIR=str(tmp_path))
    if redis:
        env["AGENTSTREAM_REDIS_URL"] = "redis://127.0.0.1:6379/0"
        env["AGENTSTREAM_REDIS_PREFIX"] = f"agentstream-test:{uuid.uuid4().hex}:"
    with ExitStack() as stack:
        bases = [
            stack.enter_context(serve_process("tests.server.turn_agents:agent", cwd=ROOT, env=env))
            for _ in range(2)
        ]
        with httpx.Client(base_url=bases[0], timeout=WAIT) as client:
            with client.stream("POST", TRAY, json={"message": "hello"}) as response:
                response.read()
            cid = response.text.split('"conversation_id":"')[1].split('"')[0]
            answers = stopped = 0
            for policy in policies:
                for _ in range(ROUNDS):
                    body = {"message": "go", "conversation_id": cid, "double_texting": policy}
                    results = sorted(at_once(bases, body), key=lambda result: result[0])
                    ends = sorted(end_of(frames) for _, _, frames in results if frames)
                    if policy == "reject":
                        (_, answering, _), (refused, named, _) = results
                        assert refused == 409 and ends == ["complete"]
                        # Without Redis, a holder in the other process that has not stored
                        # its run yet cannot be named.
                        assert named == answering or (not redis and named is None)
                        answers += 1
                    elif policy == "queue":
                        assert ends == ["complete", "complete"]
                        answers += 2
                    else:
                        assert ends == ["cancelled", "complete"]
                        answers += 2
                        stopped += 1
            stored = client.get(f"/api/conversations/{cid}").json()["messages"]
    replies = [m for m in stored if m["role"] == "assistant"][1:]
    assert len(replies) == answers
    outputs = [call["output"] for m in replies for call in m["tool_history"]]
    assert "overlap" not in outputs
    assert outputs.count("alone") == answers - stopped  # every answer that was not stopped
    assert [m["status"] for m in replies].count("interrupted") == stopped


def test_two_workers_with_redis_take_turns_under_every_policy(
    tmp_path: Path, postgres_url: str
) -> None:
    take_turns(tmp_path, postgres_url, redis=True, policies=("reject", "queue", "interrupt"))


def test_two_servers_on_one_postgresql_database_take_turns_without_redis(
    tmp_path: Path, postgres_url: str
) -> None:
    """Without Redis a stop cannot reach another process, so nothing can interrupt there."""
    take_turns(tmp_path, postgres_url, redis=False, policies=("reject", "queue"))


def test_two_servers_on_one_sqlite_file_take_turns_without_redis(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    take_turns(tmp_path, url, redis=False, policies=("reject", "queue"))
