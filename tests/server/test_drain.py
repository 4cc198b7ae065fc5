"""A draining worker (``Runner.drain``, what ``SIGTERM`` starts): ``/readyz`` says 503 while
``/healthz`` stays 200, every protocol answers a new run with 503 and ``Retry-After`` in its
error shape (closing the connection), followers of runs it does not run are sent elsewhere,
and a run it cannot finish in time is stored as interrupted with its partial answer.

The signal itself, real processes, PostgreSQL and Redis: ``tests/store/test_drain_workers.py``.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import RedisBroker
from agentstream.server.settings import Settings, SettingsError
from agentstream.store import SqlConversationStore, create_engine
from tests.server.conftest import Serve
from tests.server.helpers import wait_until
from tests.server.test_limits import REQUESTS


def test_probes_before_and_while_draining(serve: Serve) -> None:
    server = serve(Agent(model=ScriptedProvider({"turns": [{"text": "hi"}]})))
    with server.client() as client:
        assert client.get("/healthz").json() == {"status": "alive"}
        ready = client.get("/readyz")
        assert (ready.status_code, ready.json()) == (200, {"status": "ready", "checks": {}})
        server.call(server.app.state.server.runner.drain(0))
        assert client.get("/healthz").status_code == 200
        draining = client.get("/readyz")
    assert draining.status_code == 503
    assert draining.json()["status"] == "draining"
    assert draining.headers["connection"] == "close"
    assert draining.headers["cache-control"] == "no-store"


def test_readiness_asks_the_database_and_redis(serve: Serve, tmp_path: Path) -> None:
    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'chat.db'}"))
    # Nothing listens on port 1: Redis cannot be reached, and the probe says which part.
    broker = RedisBroker("redis://127.0.0.1:1/0")
    server = serve(Agent(model="demo"), store=store, broker=broker)
    with server.client() as client:
        down = client.get("/readyz")
    assert down.status_code == 503
    assert down.json() == {
        "status": "unavailable",
        "detail": "Unreachable: redis",
        "checks": {"database": "ok", "redis": "unreachable"},
    }
    assert "127.0.0.1:1" not in down.text  # why is logged, never answered


@pytest.mark.parametrize(("path", "body"), REQUESTS)
def test_a_new_run_is_a_503_with_retry_after_in_every_protocol(
    serve: Serve, path: str, body: dict[str, object]
) -> None:
    provider = ScriptedProvider({"turns": [{"text": "hello"}]})
    server = serve(Agent(model=provider))
    server.call(server.app.state.server.runner.drain(0))
    with server.client() as client:
        refused = client.post(path, json=body)
    assert refused.status_code == 503
    assert refused.headers["content-type"] == "application/json"
    assert refused.headers["retry-after"] == "1"
    assert refused.headers["connection"] == "close"
    assert refused.json() == {"detail": "This server is restarting; try again in a moment"}
    assert provider.requests == []  # nothing reached the model


def test_a_follower_is_sent_to_another_worker_unless_the_run_is_here(serve: Serve) -> None:
    provider = ScriptedProvider({"turns": [{"text": ["tick "] * 40}], "delay": 0.05})
    server = serve(Agent(model=provider))
    runner = server.app.state.server.runner
    with server.client(timeout=30) as client:
        with client.stream("POST", "/api/chat/stream", json={"message": "go"}) as started:
            run_id = started.headers["x-run-id"]
            draining = server.call(_drain_in_background(runner))
            assert wait_until(lambda: runner.draining)
            # Its own run in progress is followed here, to its end.
            own = client.get(f"/api/runs/{run_id}/events")
            body = started.read().decode()
        server.call(_finished(draining))
        elsewhere = client.get("/api/runs/some-other-run/events")
    assert own.status_code == 200
    assert "event: run_completed" in own.text
    assert json.loads(body.strip().split("\n")[-1][6:])["type"] == "complete"
    assert elsewhere.status_code == 503
    assert elsewhere.headers["retry-after"] == "1"


async def _drain_in_background(runner: Any) -> asyncio.Task[None]:
    return asyncio.create_task(runner.drain(30))


async def _finished(task: asyncio.Task[None]) -> None:
    await task


def test_a_drained_worker_ends_the_streams_following_other_workers_runs(serve: Serve) -> None:
    """Two workers sharing Redis: a client follows a run of A at B; B drains. Its stream ends
    without the run's end, and the client follows the run on at A from its last event."""
    prefix = f"agentstream-test:{uuid.uuid4().hex}:"
    provider = ScriptedProvider({"turns": [{"text": ["tick "] * 60}], "delay": 0.05})
    a = serve(Agent(model=provider), broker=RedisBroker(prefix=prefix))
    b = serve(Agent(model=provider), broker=RedisBroker(prefix=prefix))
    body = {"message": "go", "detach": True}
    with a.client(timeout=30) as client, client.stream("POST", "/api/chat/stream", json=body) as r:
        run_id = r.headers["x-run-id"]  # hung up at once: the detached run goes on
    seen: list[str] = []
    with b.client(timeout=30) as client, client.stream("GET", f"/api/runs/{run_id}/events") as at_b:
        for line in at_b.iter_lines():
            if line.startswith(("id: ", "event: ")):
                seen.append(line)
            if len(seen) == 6:
                b.call(b.app.state.server.drain(0))
    assert at_b.status_code == 200
    assert "event: run_started" in seen
    assert "event: run_completed" not in seen  # ended before the run did
    last = [line for line in seen if line.startswith("id: ")][-1][4:]
    with a.client(timeout=30) as client:
        rest = client.get(f"/api/runs/{run_id}/events", headers={"Last-Event-ID": last})
    assert rest.status_code == 200
    assert int(rest.text.split("id: ", 1)[1].split("\n", 1)[0]) == int(last) + 1
    assert "event: run_completed" in rest.text


def test_the_drain_setting_is_checked() -> None:
    assert Settings.from_env({}).drain_seconds == 30
    assert Settings.from_env({"AGENTSTREAM_DRAIN_SECONDS": "2.5"}).drain_seconds == 2.5
    with pytest.raises(SettingsError, match="AGENTSTREAM_DRAIN_SECONDS must be 0"):
        Settings.from_env({"AGENTSTREAM_DRAIN_SECONDS": "-1"}).check()
    with pytest.raises(SettingsError, match="a positive number of seconds, not nan"):
        Settings.from_env({"AGENTSTREAM_DRAIN_SECONDS": "nan"}).check()
    with pytest.raises(SettingsError, match="invalid server setting"):
        Settings.from_env({"AGENTSTREAM_DRAIN_SECONDS": "half a minute"})
