"""A worker killed mid-run (SIGKILL, no chance to write anything more) whose runs nobody takes
over (the surviving workers here have takeover off; ``test_takeover_workers`` has them on):
its runs do not stay ``running`` in the store. Another worker marks them ``interrupted`` when
a follower or a stop request finds the dead worker's lease lapsed, or when it starts and finds
runs no live worker holds; followers get the protocol's error instead of waiting forever.
Without Redis nothing proves a run's worker is gone, and a starting worker leaves such runs
alone.

Workers are real uvicorn processes on SQLite and PostgreSQL, sharing a Redis namespace.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from sqlalchemy import select

from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import LocalBroker, RedisBroker, RunBroker
from agentstream.server.app import create_app
from agentstream.server.settings import Settings
from agentstream.store import SqlConversationStore, create_engine, upgrade
from agentstream.store.models import RunRow
from tests.server.helpers import LiveServer, wait_until

from .test_e2e_server import free_port

REDIS_URL = "redis://127.0.0.1:6379/0"
LEASE = 1.5
"""Seconds: short, so that a dead worker's lease lapses quickly."""

WORKER = """
import sys

import uvicorn

from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import RedisBroker
from agentstream.server.app import create_app
from agentstream.server.settings import Settings
from agentstream.store import SqlConversationStore, create_engine

database_url, redis_url, prefix, lease, port = sys.argv[1:]
agent = Agent(model=ScriptedProvider({"turns": [{"text": ["w "] * 100000}], "delay": 0.02}))
app = create_app(
    agent,
    settings=Settings(host="127.0.0.1"),
    store=SqlConversationStore(create_engine(database_url)),
    broker=RedisBroker(redis_url, prefix=prefix, lease=float(lease), takeover=False),
)
uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning")
"""


class Worker:
    """A worker process: the app with a slow scripted model, the store and Redis."""

    def __init__(self, database_url: str, prefix: str, log: Path) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
        self._log = log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER, database_url, REDIS_URL, prefix, str(LEASE)]
            + [self.url.rsplit(":", 1)[1]],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")},
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

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._log.close()


@pytest.fixture
def prefix() -> str:
    return f"agentstream-test:{uuid.uuid4().hex}:"


@pytest.fixture
def migrated(database_url: str) -> str:
    asyncio.run(upgrade(database_url))
    return database_url


@pytest.fixture
def workers(migrated: str) -> Iterator[list[Worker]]:
    """Start worker processes with ``workers.append(Worker(...))``; all stopped at the end."""
    started: list[Worker] = []
    yield started
    for worker in started:
        worker.stop()


class Peer:
    """A worker in this process (so the test can read its store), on the same database."""

    def __init__(self, database_url: str, broker: RunBroker) -> None:
        self.store = SqlConversationStore(create_engine(database_url))
        agent = Agent(model=ScriptedProvider({"turns": [{"text": ["ok"]}]}))
        app = create_app(
            agent, settings=Settings(host="127.0.0.1"), store=self.store, broker=broker
        )
        self.server = LiveServer(app).start()
        self.runner = app.state.server.runner

    def status(self, run_id: str) -> str | None:
        async def read() -> str | None:
            async with self.store.engine.connect() as connection:
                found: str | None = await connection.scalar(
                    select(RunRow.status).where(RunRow.id == run_id)
                )
                return found

        return self.server.call(read())

    def looked(self) -> None:
        """Wait until its start-up look for runs of dead workers has ended."""
        self.server.call(self.runner.marked_abandoned_runs(), timeout=30)

    def close(self) -> None:
        self.server.call(self.store.close())
        self.server.stop()


@pytest.fixture
def peers() -> Iterator[list[Peer]]:
    started: list[Peer] = []
    yield started
    for peer in started:
        peer.close()


def lease_lapsed(prefix: str, run_id: str) -> bool:
    return not redis.Redis.from_url(REDIS_URL).exists(f"{prefix}run:{run_id}:alive")


def test_a_follower_and_a_stop_request_mark_a_killed_workers_runs_interrupted(
    database_url: str, prefix: str, tmp_path: Path, workers: list[Worker], peers: list[Peer]
) -> None:
    # The peer starts (and looks for runs of dead workers) before the runs exist: only the
    # follower and the stop request below can mark them.
    peer = Peer(
        database_url,
        RedisBroker(REDIS_URL, prefix=prefix, lease=LEASE, block_ms=300, takeover=False),
    )
    peers.append(peer)
    peer.looked()
    workers.append(Worker(database_url, prefix, tmp_path / "worker.log"))
    followed, _ = workers[0].start_run()
    stopped, _ = workers[0].start_run()

    received = ""
    with (
        peer.server.client(timeout=30) as client,
        client.stream("GET", f"/api/runs/{followed}/stream") as response,
    ):
        assert response.status_code == 200
        for chunk in response.iter_text():
            if not received:
                workers[0].kill()
            received += chunk
    frames = [json.loads(line[6:]) for line in received.split("\n") if line.startswith("data: ")]
    assert frames[-1] == {
        "type": "error",
        "message": "The server running this answer stopped before it finished.",
    }
    assert wait_until(lambda: peer.status(followed) == "interrupted")
    assert peer.status(stopped) == "running"  # nobody has looked at it yet

    assert wait_until(lambda: lease_lapsed(prefix, stopped))
    last = [line for line in received.split("\n") if line.startswith("id: ")][-1][4:]
    with peer.server.client() as client:
        stop = client.post(f"/api/chat/runs/{stopped}/cancel")
        # The follower has every event the run will ever have (the error ends it): told so.
        again = client.get(f"/api/runs/{followed}/stream", headers={"Last-Event-ID": last})
    assert stop.status_code == 404  # nothing to stop: its worker is gone
    assert wait_until(lambda: peer.status(stopped) == "interrupted")
    assert again.status_code == 204


def test_a_starting_worker_marks_the_runs_no_live_worker_holds(
    database_url: str, prefix: str, tmp_path: Path, workers: list[Worker], peers: list[Peer]
) -> None:
    workers.append(Worker(database_url, prefix, tmp_path / "dies.log"))
    workers.append(Worker(database_url, prefix, tmp_path / "lives.log"))
    dead, conversation = workers[0].start_run()
    alive, _ = workers[1].start_run()
    workers[0].kill()

    # Without Redis, a worker cannot tell a run of a dead worker from one of another process
    # on the same database: it leaves both alone.
    alone = Peer(database_url, LocalBroker())
    peers.append(alone)
    alone.looked()
    assert (alone.status(dead), alone.status(alive)) == ("running", "running")

    # Right after the kill the dead worker's lease has not lapsed yet: the look waits for it.
    peer = Peer(database_url, RedisBroker(REDIS_URL, prefix=prefix, lease=LEASE, takeover=False))
    peers.append(peer)
    peer.looked()
    assert (peer.status(dead), peer.status(alive)) == ("interrupted", "running")
    with peer.server.client() as client:
        shown = client.get(f"/api/conversations/{conversation}").json()["messages"]
    assert [(m["role"], m["status"]) for m in shown] == [
        ("user", "complete"),
        ("assistant", "interrupted"),
    ]


def test_marking_keeps_how_a_finished_run_ended(migrated: str, peers: list[Peer]) -> None:
    """The mark only touches runs still ``running``: a run that ended meanwhile keeps its
    status."""
    peer = Peer(migrated, LocalBroker())
    peers.append(peer)
    with peer.server.client() as client:
        done = client.post("/api/chat/stream", json={"message": "hi"}).headers["x-run-id"]
    peer.server.call(peer.runner.settle())
    marked: Any = peer.server.call(peer.store.mark_interrupted([done, "unknown"], "gone"))
    assert (marked, peer.status(done)) == (0, "completed")
