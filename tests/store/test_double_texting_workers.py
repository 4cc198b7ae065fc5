"""Two messages for one conversation that reach two worker processes at the same moment never
run two answers at once, under each policy: two ``agentstream serve`` processes sharing Redis
and a PostgreSQL database. Each answer holds a mark both processes see for a second
(``tests.server.turn_agents``) and reports whether another answer held it."""

from __future__ import annotations

import json
import os
import threading
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
                response.json()["run_id"]
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


def test_two_workers_take_turns_under_every_policy(tmp_path: Path, postgres_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSTREAM_")}
    env.update(
        AGENTSTREAM_REDIS_URL="redis://127.0.0.1:6379/0",
        AGENTSTREAM_DATABASE_URL=postgres_url,
        DOUBLE_TEXTING_DIR=str(tmp_path),
    )
    with ExitStack() as stack:
        bases = [
            stack.enter_context(serve_process("tests.server.turn_agents:agent", cwd=ROOT, env=env))
            for _ in range(2)
        ]
        with httpx.Client(base_url=bases[0], timeout=WAIT) as client:
            with client.stream("POST", TRAY, json={"message": "hello"}) as response:
                response.read()
            cid = response.text.split('"conversation_id":"')[1].split('"')[0]
            go = {"message": "go", "conversation_id": cid}
            answers = 0
            for _ in range(ROUNDS):
                (a, run_a, frames_a), (b, run_b, frames_b) = at_once(
                    bases, {**go, "double_texting": "reject"}
                )
                assert sorted((a, b)) == [200, 409]
                (_, answering, frames), (_, named, _) = sorted(
                    [(a, run_a, frames_a), (b, run_b, frames_b)], key=lambda r: r[0]
                )
                assert end_of(frames) == "complete"
                assert named == answering
                answers += 1
            for _ in range(ROUNDS):
                results = at_once(bases, {**go, "double_texting": "queue"})
                assert [(status, end_of(frames)) for status, _, frames in results] == [
                    (200, "complete"),
                    (200, "complete"),
                ]
                answers += 2
            for _ in range(ROUNDS):
                results = at_once(bases, {**go, "double_texting": "interrupt"})
                assert [status for status, _, _ in results] == [200, 200]
                assert sorted(end_of(frames) for _, _, frames in results) == [
                    "cancelled",
                    "complete",
                ]
                answers += 2
            stored = client.get(f"/api/conversations/{cid}").json()["messages"]
    replies = [m for m in stored if m["role"] == "assistant"][1:]
    assert len(replies) == answers
    outputs = [call["output"] for m in replies for call in m["tool_history"]]
    assert "overlap" not in outputs
    assert outputs.count("alone") == answers - ROUNDS  # every answer that was not stopped
    statuses = [m["status"] for m in replies]
    assert statuses.count("interrupted") == ROUNDS
