"""A worker killed in the middle of a run (SIGKILL: nothing more is written) does not cost the
run: another worker takes it over from its last finished tool round, under the same id and in
the same event log, and the run completes. Followers on the surviving workers see it
complete (never ``run_failed``); the store holds one complete answer; a tool that must not
run twice ran at most once, and an idempotent one cut short ran again.

Three real worker processes (uvicorn) on PostgreSQL and Redis; each run is killed at a
different point: while the model writes, while a tool runs (one that must not run twice, and
an idempotent one), between two rounds, and twice in one run.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from agentstream.runs import RedisBroker
from agentstream.store import create_engine
from agentstream.store.models import MessageRow, RunRow
from tests.node_clients import run_client
from tests.server.helpers import wait_until

from .test_dead_workers import Peer
from .test_e2e_server import free_port

REDIS_URL = "redis://127.0.0.1:6379/0"
LEASE = 2.0
"""Seconds: short, so that a dead worker's lease lapses quickly."""
WORKER = Path(__file__).with_name("takeover_worker.py")
ANSWER = (
    "Charging the card now. \n\nCharged; looking the order up. \n\n"
    + " ".join(f"word{n}" for n in range(60))
    + " done."
)


class Worker:
    def __init__(self, database_url: str, prefix: str, log: Path, ledger: Path, **env: str) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self._log = log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER), database_url, REDIS_URL, prefix, str(LEASE)]
            + [str(port), str(ledger)],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(map(str, _paths())), **env},
        )
        if not wait_until(self._ready, timeout=180):
            self.stop()
            raise RuntimeError(f"the worker did not start:\n{log.read_text()}")

    def _ready(self) -> bool:
        assert self.process.poll() is None, "the worker exited"
        try:
            return httpx.get(f"{self.url}/api/chat/models", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    def start_run(self) -> tuple[str, str]:
        """A detached chat-tray run, left running: (run id, conversation id)."""
        with (
            httpx.Client(base_url=self.url, timeout=10) as client,
            client.stream(
                "POST", "/api/chat/stream", json={"message": "go", "detach": True}
            ) as response,
        ):
            assert response.status_code == 200
            for line in response.iter_lines():
                if line.startswith("data: "):
                    start = json.loads(line[6:])
                    return response.headers["x-run-id"], start["conversation_id"]
        raise AssertionError("no frame")

    def kill(self) -> float:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        return time.monotonic()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._log.close()


def _paths() -> list[Path]:
    root = Path(__file__).parents[2]
    return [root / "src", root]


@dataclass
class Follower:
    """Follows a run on a worker in a thread: the frames it reads, and when each came."""

    url: str
    run_id: str
    frames: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    error: BaseException | None = None

    def __post_init__(self) -> None:
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        try:
            with (
                httpx.Client(base_url=self.url, timeout=60) as client,
                client.stream("GET", f"/api/runs/{self.run_id}/stream") as response,
            ):
                assert response.status_code == 200
                for line in response.iter_lines():
                    if line.startswith("data: "):
                        self.frames.append((time.monotonic(), json.loads(line[6:])))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc

    def saw(self, check: Callable[[dict[str, Any]], bool]) -> bool:
        return any(check(frame) for _, frame in list(self.frames))

    def join(self) -> list[dict[str, Any]]:
        self._thread.join(timeout=90)
        assert not self._thread.is_alive(), "the follower never saw the run end"
        assert self.error is None, self.error
        return [frame for _, frame in self.frames]


@pytest.fixture
def prefix() -> str:
    return f"agentstream-test:{uuid.uuid4().hex}:"


@pytest.fixture
def pool(postgres_url: str, prefix: str, tmp_path: Path) -> Iterator[list[Worker]]:
    """Three workers; the test starts a new one for each it kills."""
    ledger = tmp_path / "ledger.txt"
    ledger.touch()
    workers = [Worker(postgres_url, prefix, tmp_path / f"worker{n}.log", ledger) for n in range(3)]
    yield workers
    for worker in workers:
        worker.stop()


def _text_so_far(follower: Follower) -> str:
    return "".join(f["text"] for _, f in list(follower.frames) if f["type"] == "text_delta")


KILL_POINTS: dict[str, Callable[[Follower], bool]] = {
    # The last model turn is streaming (after both tools).
    "mid-text": lambda f: "word5 " in _text_so_far(f),
    # The tool that must not run twice has started and not returned.
    "mid-tool": lambda f: f.saw(lambda x: x["type"] == "tool_start" and x["tool"] == "charge"),
    # The idempotent tool has started and not returned: it is run again.
    "mid-idempotent-tool": lambda f: f.saw(
        lambda x: x["type"] == "tool_start" and x["tool"] == "lookup"
    ),
    # The first round has ended: its result is in, the next model turn has not begun.
    "between-rounds": lambda f: f.saw(
        lambda x: x["type"] == "tool_complete" and x["tool"] == "charge"
    ),
}


def _row(database_url: str, run_id: str) -> tuple[Any, list[Any]]:
    async def read() -> tuple[Any, list[Any]]:
        engine = create_engine(database_url)
        try:
            async with engine.connect() as connection:
                run = (await connection.execute(select(RunRow).where(RunRow.id == run_id))).one()
                messages = (
                    await connection.execute(
                        select(MessageRow.role, MessageRow.body, MessageRow.status)
                        .where(MessageRow.run_id == run_id)
                        .order_by(MessageRow.seq)
                    )
                ).all()
                return run, list(messages)
        finally:
            await engine.dispose()

    return asyncio.run(read())


def _ledger(tmp_path: Path, run_id: str) -> list[tuple[str, str]]:
    lines = (tmp_path / "ledger.txt").read_text().splitlines()
    return [
        (tool, what) for run, tool, _, what in (line.split() for line in lines) if run == run_id
    ]


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_a_killed_workers_run_completes_on_another(
    point: str, postgres_url: str, prefix: str, tmp_path: Path, pool: list[Worker]
) -> None:
    owner, *survivors = pool
    run_id, _ = owner.start_run()
    followers = [Follower(worker.url, run_id) for worker in survivors]
    assert wait_until(lambda: KILL_POINTS[point](followers[0]), timeout=60), point
    died = owner.kill()

    seen = [follower.join() for follower in followers]
    for frames in seen:
        kinds = [frame["type"] for frame in frames]
        assert "error" not in kinds, frames
        assert kinds[-1] == "complete", frames
    first = min(t for t, _ in followers[0].frames if t > died)
    if os.environ.get("SHOW_FRAMES"):
        print(*seen[0], sep="\n")
    print(f"\n{point}: first event from the successor {first - died:.2f} s after the kill")

    run, messages = _row(postgres_url, run_id)
    assert run.status == "completed"
    assert run.answer == ANSWER
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert all(m.status == "complete" for m in messages)

    ran = _ledger(tmp_path, run_id)
    starts = ran.count(("charge", "start"))
    if point == "mid-tool":
        # Never twice. Killed at its call, the tool may not have begun yet (the call reaches
        # the log before the tool starts, so it may have): it is not run again either way.
        assert starts <= 1
        # Cut short: not run again, and the model was told so.
        assert ("charge", "end") not in ran
        result = messages[2].body["results"][0]
        assert (result["name"], result["outcome"]) == ("charge", "interrupted")
        assert "not run again" in result["content"]
    else:
        assert starts == 1
    assert ran.count(("lookup", "end")) == 1
    # Cut short, the idempotent tool ran again; otherwise once.
    assert ran.count(("lookup", "start")) == (2 if point == "mid-idempotent-tool" else 1)


def test_a_run_its_draining_worker_hands_over_completes_on_another(
    postgres_url: str, prefix: str, tmp_path: Path, pool: list[Worker]
) -> None:
    """A deploy: the owner is told to stop (SIGTERM) with a drain time shorter than the run.
    It hands the run over as it exits, and a survivor finishes it at once (its lease is
    deleted, not left to lapse)."""
    ledger = tmp_path / "ledger.txt"
    owner = Worker(
        postgres_url, prefix, tmp_path / "draining.log", ledger, AGENTSTREAM_DRAIN_SECONDS="1"
    )
    try:
        run_id, _ = owner.start_run()
        followers = [Follower(worker.url, run_id) for worker in pool[:2]]
        assert wait_until(lambda: KILL_POINTS["mid-tool"](followers[0]), timeout=60)
    except BaseException:
        owner.stop()
        raise
    told = time.monotonic()
    owner.process.send_signal(signal.SIGTERM)
    # (uvicorn.run raises the signal again once it has shut down: the exit is the signal's.)
    assert owner.process.wait(timeout=30) in (0, -signal.SIGTERM)
    owner.stop()

    seen = [follower.join() for follower in followers]
    for frames in seen:
        kinds = [frame["type"] for frame in frames]
        assert "error" not in kinds, frames
        assert kinds[-1] == "complete", frames
    resumed = [t for t, f in followers[0].frames if f["type"] == "text_delta" and t > told + 1]
    print(f"\nfirst event from the successor {resumed[0] - told:.2f} s after SIGTERM")
    run, messages = _row(postgres_url, run_id)
    assert run.status == "completed" and run.answer == ANSWER
    assert all(m.status == "complete" for m in messages)
    ran = _ledger(tmp_path, run_id)
    assert ran.count(("charge", "start")) <= 1  # cut short by the hand-over, never run again


def test_a_run_survives_the_death_of_its_owner_and_then_of_its_successor(
    postgres_url: str, tmp_path: Path, pool: list[Worker]
) -> None:
    """Killed while its first tool runs, then again at a random point of its answer on the
    worker that took it over: the last worker finishes it, and its follower there sees it
    whole."""
    owner, *survivors = pool
    run_id, _ = owner.start_run()
    followers = {worker.url: Follower(worker.url, run_id) for worker in survivors}
    watching = next(iter(followers.values()))
    assert wait_until(lambda: KILL_POINTS["mid-tool"](watching), timeout=60)
    owner.kill()

    def successor() -> Worker | None:
        for index, worker in enumerate(survivors):
            if f"took over run {run_id}" in (tmp_path / f"worker{index + 1}.log").read_text():
                return worker
        return None

    assert wait_until(lambda: successor() is not None, timeout=30)
    second = successor()
    assert second is not None
    last = next(worker for worker in survivors if worker is not second)
    words = random.randrange(1, 50)
    print(f"\nthe successor is killed after word{words}")
    assert wait_until(lambda: f"word{words} " in _text_so_far(followers[last.url]), timeout=60)
    second.kill()

    frames = followers[last.url].join()
    assert [f["type"] for f in frames][-1] == "complete"
    assert "error" not in [f["type"] for f in frames]
    run, messages = _row(postgres_url, run_id)
    assert (run.status, run.answer) == ("completed", ANSWER)
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    ran = _ledger(tmp_path, run_id)
    assert ran.count(("charge", "start")) == 1


def test_a_run_nobody_can_continue_ends_as_interrupted(
    postgres_url: str, prefix: str, tmp_path: Path
) -> None:
    """The only worker left cannot read the store: it claims the run, fails to rebuild it,
    and lets the claim lapse for another to try; after a few tries the run ends for its
    follower as a dead worker's run did before takeovers (``run_failed``, interrupted)."""
    ledger = tmp_path / "ledger.txt"
    ledger.touch()
    owner = Worker(postgres_url, prefix, tmp_path / "owner.log", ledger)
    # Its database is out of reach (nothing listens where it looks).
    unreachable = postgres_url.replace("127.0.0.1:5432", f"127.0.0.1:{free_port()}")
    assert unreachable != postgres_url
    peer = Peer(unreachable, RedisBroker(REDIS_URL, prefix=prefix, lease=LEASE, block_ms=300))
    try:
        run_id, _ = owner.start_run()
        with (
            peer.server.client(timeout=90) as client,
            client.stream("GET", f"/api/runs/{run_id}/stream") as response,
        ):
            assert response.status_code == 200
            frames = []
            for line in response.iter_lines():
                if line.startswith("data: "):
                    frames.append(json.loads(line[6:]))
                    if len(frames) == 3:
                        owner.kill()
        assert frames[-1] == {
            "type": "error",
            "message": "The server running this answer stopped before it finished.",
        }
        assert ledger.read_text().count("charge") <= 2  # its start and end, once
    finally:
        owner.stop()
        peer.server.stop()


def test_ag_ui_s_own_client_follows_a_run_across_its_takeover(pool: list[Worker]) -> None:
    """``@ag-ui/client``'s HttpAgent, which throws on any event out of order, follows the run
    on a surviving worker while its owner is killed in the middle of the answer: the message
    cut short ends, ``run_resumed`` comes, the continuation is a new message, the run ends
    with ``RUN_FINISHED``."""
    owner, watched, followed = pool
    thread, agui_run = str(uuid.uuid4()), str(uuid.uuid4())
    body = {
        "threadId": thread,
        "runId": agui_run,
        "messages": [{"id": "m1", "role": "user", "content": "go"}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {"onDisconnect": "detach"},
    }
    with (
        httpx.Client(base_url=owner.url, timeout=10) as client,
        client.stream("POST", "/ag-ui", json=body) as response,
    ):
        assert response.status_code == 200
        run_id = response.headers["x-run-id"]
    watcher = Follower(watched.url, run_id)
    outcome: list[subprocess.CompletedProcess[str]] = []
    env = {
        **os.environ,
        "BASE_URL": followed.url,
        "FOLLOW_URL": f"{followed.url}/api/runs/{run_id}/stream",
        "THREAD_ID": thread,
        "RUN_ID": agui_run,
    }
    client_thread = threading.Thread(
        target=lambda: outcome.append(run_client("agui_client.mjs", "follow", env=env))
    )
    client_thread.start()
    assert wait_until(
        lambda: watcher.saw(lambda f: "word5 " in str(f.get("delta", ""))), timeout=60
    )
    owner.kill()
    client_thread.join(timeout=120)
    ran = outcome[0]
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    types = result["types"]
    assert types[-1] == "RUN_FINISHED" and "RUN_ERROR" not in types
    resumed = types.index("CUSTOM")
    assert result["events"][resumed]["name"] == "run_resumed"
    assert types[resumed - 1] == "TEXT_MESSAGE_END"
    assert types[resumed + 1] == "TEXT_MESSAGE_START"
    texts = [
        m["content"] for m in result["messages"] if m["role"] == "assistant" and m.get("content")
    ]
    assert texts[-1].endswith("word59 done.")


def test_the_ai_sdk_s_own_client_resumes_a_run_across_its_takeover(pool: list[Worker]) -> None:
    """The AI SDK's client reconnects to the chat's stream on a surviving worker
    (``reconnectToStream``) while its owner is killed in the middle of the answer: the text
    part cut short ends, a new one carries the continuation, and the message finishes."""
    owner, watched, followed = pool
    chat = str(uuid.uuid4())
    body = {
        "id": chat,
        "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "go"}]}],
    }
    with (
        httpx.Client(base_url=owner.url, timeout=10) as client,
        client.stream("POST", "/ai-sdk/chat", json=body) as response,
    ):
        assert response.status_code == 200
        run_id = response.headers["x-run-id"]
    watcher = Follower(watched.url, run_id)
    outcome: list[subprocess.CompletedProcess[str]] = []
    plan = json.dumps({"chatId": chat, "steps": [{"resume": True}, {"load": True}]})
    env = {**os.environ, "BASE_URL": followed.url}
    client_thread = threading.Thread(
        target=lambda: outcome.append(run_client("aisdk_client.mjs", plan, env=env))
    )
    client_thread.start()
    assert wait_until(
        lambda: watcher.saw(lambda f: "word5 " in str(f.get("delta", ""))), timeout=60
    )
    owner.kill()
    client_thread.join(timeout=120)
    ran = outcome[0]
    assert ran.returncode == 0, ran.stderr
    result, loaded = json.loads(ran.stdout)
    assert result["errors"] == []
    kinds = [chunk["type"] for chunk in result["chunks"]]
    resumed = kinds.index("data-resumed")
    assert kinds[resumed - 1] == "text-end" and kinds[resumed + 1] == "text-start"
    assert kinds[-1] == "finish"
    texts = [p["text"] for p in result["message"]["parts"] if p["type"] == "text"]
    assert texts[-1].endswith("word59 done.")
    # What a reload shows: the answer once, without the attempt that was cut short.
    assert loaded["errors"] == []
    (stored,) = [m for m in loaded["messages"] if m["role"] == "assistant"]
    text = "".join(p["text"] for p in stored["parts"] if p["type"] == "text")
    assert text.count("word5 ") == 1 and text.endswith("word59 done.")
