"""Runs the server owns: resume in the protocol that started the run, from any worker; detached
runs that finish without their client; followers; disconnect policies."""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import RedisBroker
from agentstream.server.dialects import BUILT_IN, tray
from tests.server.conftest import Serve
from tests.server.helpers import WAIT, LiveServer, other_tasks, wait_until

REDIS_URL = "redis://127.0.0.1:6379/0"

DIALECTS: dict[str, tuple[str, dict[str, Any]]] = {
    "ichor": ("/v1/agent/chat", {"message": "go", "context_type": "workflow"}),
    "playground": (
        "/api/chat/agent-chat/stream?brandRef=brand_1",
        {"brandRef": "brand_1", "content": "go", "model": "scripted:script"},
    ),
    "tray": ("/api/chat/stream", {"message": "go"}),
    "agent": ("/agent/stream", {"message": "go"}),
    "agui": (
        "/ag-ui",
        {"threadId": "t", "runId": "r", "messages": [{"id": "m", "role": "user", "content": "go"}]},
    ),
    "ai-sdk": (
        "/ai-sdk/chat",
        {"id": "chat-1", "messages": [{"role": "user", "parts": [{"type": "text", "text": "go"}]}]},
    ),
}


def lookup(query: str) -> dict[str, Any]:
    """Look something up."""
    return {"found": query}


def paced_agent(chunks: int = 30, delay: float = 0.03) -> tuple[Agent, ScriptedProvider]:
    """Text, a tool call, then paced text: every encoder has state to rebuild on resume."""
    provider = ScriptedProvider(
        {
            "turns": [
                {
                    "text": ["Looking ", "it up."],
                    "tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"query": "x"}}],
                },
                {"text": ["tick "] * chunks},
            ],
            "delay": delay,
        }
    )
    return Agent(model=provider, tools=[lookup]), provider


@pytest.fixture
def prefix() -> str:
    return f"agentstream-test:{uuid.uuid4().hex}:"


def two_workers(serve: Serve, prefix: str, **settings: Any) -> tuple[LiveServer, LiveServer]:
    """Two servers sharing one Redis namespace, as two workers of one deployment."""
    a = serve(paced_agent()[0], broker=RedisBroker(REDIS_URL, prefix=prefix), **settings)
    b = serve(paced_agent()[0], broker=RedisBroker(REDIS_URL, prefix=prefix), **settings)
    return a, b


def read_then_drop(client: httpx.Client, path: str, body: dict[str, Any], ids: int) -> Any:
    """POST, read whole frames until ``ids`` of them carried an ``id:``, then hang up.
    Returns (run id, the text of the whole frames received, the last id seen)."""
    received = ""
    with client.stream("POST", path, json=body) as response:
        assert response.status_code == 200, response.read()
        run_id = response.headers["x-run-id"]
        for chunk in response.iter_text():
            received += chunk
            whole = received[: received.rfind("\n\n") + 2]
            seen = [line for line in whole.split("\n") if line.startswith("id: ")]
            if len(seen) >= ids:
                return run_id, whole, seen[-1][4:]
    raise AssertionError("the run ended before the client meant to hang up")


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_drop_mid_answer_and_resume_on_the_other_worker(
    serve: Serve, prefix: str, dialect: str
) -> None:
    """The frames received before the drop, joined with those of the resumed stream, are
    exactly the run's whole stream in its protocol: no duplicate, no gap."""
    a, b = two_workers(serve, prefix, on_disconnect="detach")
    path, body = DIALECTS[dialect]
    with a.client() as client_a, b.client() as client_b:
        run_id, before, last_id = read_then_drop(client_a, path, body, ids=6)
        # The AI SDK's own resume names the chat, not the run: the whole stream, from its start.
        chat_resumed = (
            client_b.get("/ai-sdk/chat/chat-1/stream").text if dialect == "ai-sdk" else ""
        )
        resumed = client_b.get(f"/api/runs/{run_id}/stream", headers={"Last-Event-ID": last_id})
        assert resumed.status_code == 200
        assert resumed.headers["x-run-id"] == run_id
        whole = client_b.get(f"/api/runs/{run_id}/stream")
        by_query = client_a.get(f"/api/runs/{run_id}/stream", params={"after": last_id})
        events = client_b.get(f"/api/runs/{run_id}/events").text
    assert before + resumed.text == whole.text
    assert by_query.text == resumed.text
    if dialect == "ai-sdk":  # and the SDK's own resume (by chat id) is the whole stream
        assert chat_resumed == whole.text
    assert whole.headers["content-type"] == resumed.headers["content-type"]
    assert before and resumed.text  # dropped mid-answer: both parts hold frames
    # Detached: the run went on without its client and completed.
    assert "event: run_completed" in events


def test_playground_ndjson_resumes_on_the_other_worker(serve: Serve, prefix: str) -> None:
    """NDJSON lines carry no id: a client resumes with ``?after=`` (positions from the run's
    events). From every position, the resumed lines are exactly the rest of the whole stream,
    and the lines received before the drop are its start."""
    a, b = two_workers(serve, prefix, on_disconnect="detach")
    path, body = DIALECTS["playground"]
    with a.client() as client_a, b.client() as client_b:
        received: list[str] = []
        with client_a.stream(
            "POST", path, json=body, headers={"Accept": "application/x-ndjson"}
        ) as response:
            assert response.headers["content-type"] == "application/x-ndjson"
            run_id = response.headers["x-run-id"]
            for line in response.iter_lines():
                received += [line] if line else []
                if len(received) == 6:
                    break  # hang up mid-answer
        events = client_b.get(f"/api/runs/{run_id}/events").text  # follows it to its end
        positions = [int(line[4:]) for line in events.split("\n") if line.startswith("id: ")]
        whole = client_b.get(f"/api/runs/{run_id}/stream")
        rests = {seq: client_b.get(f"/api/runs/{run_id}/stream?after={seq}") for seq in positions}
    lines = [line for line in whole.text.split("\n") if line]
    assert whole.headers["content-type"] == "application/x-ndjson"
    assert lines[: len(received)] == received and len(lines) > len(received)
    assert rests.pop(positions[-1]).status_code == 204
    for rest in rests.values():
        resumed = [line for line in rest.text.split("\n") if line]
        assert resumed and lines[len(lines) - len(resumed) :] == resumed


def test_a_run_the_client_has_read_is_204_and_unknown_or_foreign_is_404(serve: Serve) -> None:
    server = serve(paced_agent(chunks=2, delay=0)[0], auth=True)
    from tests.server.helpers import bearer, token

    alice, mallory = bearer(token("alice")), bearer(token("mallory"))
    with server.client() as client:
        response = client.post("/api/chat/stream", json={"message": "go"}, headers=alice)
        run_id = response.headers["x-run-id"]
        last = [line for line in response.text.split("\n") if line.startswith("id: ")][-1][4:]
        done = client.get(f"/api/runs/{run_id}/stream", headers={**alice, "Last-Event-ID": last})
        whole = client.get(f"/api/runs/{run_id}/stream", headers=alice)
        foreign = client.get(f"/api/runs/{run_id}/stream", headers=mallory)
        unknown = client.get("/api/runs/nope/stream", headers=alice)
        bad = client.get(f"/api/runs/{run_id}/stream", headers={**alice, "Last-Event-ID": "x"})
    assert (done.status_code, done.content) == (204, b"")
    assert whole.text == response.text  # a fresh encoder over the log: the same frames
    assert foreign.status_code == 404 and foreign.json()["detail"] == "Run not found"
    assert unknown.status_code == 404
    assert (bad.status_code, bad.json()["field"]) == (400, "Last-Event-ID")


def test_two_followers_on_two_workers_see_the_whole_run(serve: Serve, prefix: str) -> None:
    a, b = two_workers(serve, prefix)
    results: dict[str, str] = {}
    run: list[str] = []
    started = threading.Event()

    def original() -> None:
        with (
            a.client() as client,
            client.stream("POST", "/api/chat/stream", json={"message": "go"}) as response,
        ):
            run.append(response.headers["x-run-id"])
            started.set()
            results["original"] = response.read().decode()

    def follow(name: str, server: LiveServer) -> None:
        with server.client() as client:
            results[name] = client.get(f"/api/runs/{run[0]}/stream").text

    thread = threading.Thread(target=original)
    thread.start()
    assert started.wait(WAIT)
    followers = [threading.Thread(target=follow, args=(n, s)) for n, s in (("a", a), ("b", b))]
    for follower in followers:
        follower.start()
    for follower in (*followers, thread):
        follower.join(20)
    assert results["a"] == results["b"] == results["original"]
    assert '"type":"complete"' in results["original"]


def test_each_protocol_cancels_on_disconnect_unless_told_to_detach(serve: Serve) -> None:
    """Default: a client that hangs up stops its run (AG-UI's client cannot reconnect, and
    the AI SDK's resumes, so their runs go on by default). The chat tray's ``detach`` flag
    (what the web UI sends) keeps it going; so does ``AGENTSTREAM_ON_DISCONNECT=detach``."""
    assert {d.name: d.on_disconnect for d in BUILT_IN if d.on_disconnect != "cancel"} == {
        "agui": "detach",
        "ai-sdk": "detach",
    }

    def drop(server: LiveServer, body: dict[str, Any]) -> str:
        with server.client() as client:
            run_id, _, _ = read_then_drop(client, "/api/chat/stream", body, ids=4)
            assert wait_until(lambda: server.app.state.server.runner.running == 0)
            events = client.get(f"/api/runs/{run_id}/events").text
        return events.rsplit("event: ", 1)[1].split("\n", 1)[0]

    default = serve(paced_agent()[0])
    assert drop(default, {"message": "go"}) == "run_cancelled"
    assert drop(default, {"message": "go", "detach": True}) == "run_completed"
    forced = serve(paced_agent()[0], on_disconnect="cancel")
    assert drop(forced, {"message": "go", "detach": True}) == "run_cancelled"
    detached = serve(paced_agent()[0], on_disconnect="detach")
    assert drop(detached, {"message": "go"}) == "run_completed"


def test_a_bad_disconnect_setting_is_refused() -> None:
    from agentstream.server.settings import Settings, SettingsError

    with pytest.raises(SettingsError, match="AGENTSTREAM_ON_DISCONNECT must be cancel or detach"):
        Settings.from_env({"AGENTSTREAM_ON_DISCONNECT": "linger"}).check()
    assert Settings.from_env({"AGENTSTREAM_ON_DISCONNECT": "Detach"}).on_disconnect == "detach"


@pytest.fixture
def sql_store(tmp_path: Path) -> Any:
    from agentstream.store import SqlConversationStore, create_engine

    return SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'runs.db'}"))


def test_a_detached_run_survives_its_client_and_is_stored_complete(
    serve: Serve, sql_store: Any
) -> None:
    from agentstream.store import upgrade

    server = serve(paced_agent()[0], store=sql_store)
    server.call(upgrade(sql_store.engine), timeout=60)
    with server.client() as client:
        run_id, before, _ = read_then_drop(
            client, "/api/chat/stream", {"message": "go", "detach": True}, ids=4
        )
        conversation_id = json.loads(before.split("data: ", 1)[1].split("\n", 1)[0])[
            "conversation_id"
        ]
        assert wait_until(lambda: server.app.state.server.runner.running == 0)
        server.call(server.app.state.server.runner.settle(), timeout=10)
        stored = client.get(f"/api/conversations/{conversation_id}").json()
        assert server.call(other_tasks()) == []
    answer = stored["messages"][-1]
    assert answer["role"] == "assistant" and answer["status"] == "complete"
    assert answer["content"].count("tick") == 30  # every chunk, though the client left early
    server.call(sql_store.close())


def test_stop_a_detached_run_from_another_worker_stores_it_stopped(
    serve: Serve, prefix: str, sql_store: Any
) -> None:
    from agentstream.store import upgrade

    a = serve(paced_agent()[0], broker=RedisBroker(REDIS_URL, prefix=prefix), store=sql_store)
    b = serve(paced_agent()[0], broker=RedisBroker(REDIS_URL, prefix=prefix))
    a.call(upgrade(sql_store.engine), timeout=60)
    with a.client() as client_a, b.client() as client_b:
        run_id, before, last_id = read_then_drop(
            client_a, "/api/chat/stream", {"message": "go", "detach": True}, ids=6
        )
        assert client_b.post(f"/api/chat/runs/{run_id}/cancel").status_code == 202
        rest = client_b.get(f"/api/runs/{run_id}/stream", headers={"Last-Event-ID": last_id})
        conversation_id = json.loads(before.split("data: ", 1)[1].split("\n", 1)[0])[
            "conversation_id"
        ]
        assert wait_until(lambda: a.app.state.server.runner.running == 0)
        a.call(a.app.state.server.runner.settle(), timeout=10)
        stored = client_a.get(f"/api/conversations/{conversation_id}").json()
    assert rest.text.rstrip().endswith('data: {"type":"cancelled"}')
    answer = stored["messages"][-1]
    assert answer["role"] == "assistant" and answer["status"] == "interrupted"
    assert 0 < answer["content"].count("tick") < 30
    a.call(sql_store.close())


def test_a_deployment_serves_the_dialects_it_is_given(serve: Serve) -> None:
    from agentstream.server.app import create_app
    from agentstream.server.settings import Settings

    server = serve(paced_agent(chunks=1, delay=0)[0], dialects=[tray.DIALECT])
    with server.client() as client:
        served = client.post("/api/chat/stream", json={"message": "go"})
        not_served = client.post("/v1/agent/chat", json={"message": "go"})
        again = client.get(f"/api/runs/{served.headers['x-run-id']}/stream")
    assert served.status_code == 200 and not_served.status_code in (404, 405)
    assert again.text == served.text
    with pytest.raises(ValueError, match="two dialects are named 'tray'"):
        create_app(paced_agent()[0], settings=Settings(), dialects=[tray.DIALECT, tray.DIALECT])


WORKER = """
import asyncio, sys
from agentstream import Agent
from agentstream.principal import Principal
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import RedisBroker, Runner, RunRequest

async def main():
    script = {"turns": [{"text": ["w "] * 10000, "delay": 0.01}]}
    runner = Runner(Agent(model=ScriptedProvider(script)),
                    broker=RedisBroker(sys.argv[1], prefix=sys.argv[2], lease=1.5))
    await runner.start()
    request = RunRequest(message="go", principal=Principal(user_id="local"),
                         reader={"dialect": "tray", "options": {}})
    session = await runner.begin(request)
    print(session.run_id, flush=True)
    await session.wait()

asyncio.run(main())
"""


def test_a_follower_of_a_killed_worker_gets_the_protocols_error(serve: Serve, prefix: str) -> None:
    """SIGKILL the worker running a run: a follower on another worker, reading the run in the
    chat tray's protocol, gets the tray's ``error`` frame once the worker's lease lapses,
    instead of waiting forever."""
    import os
    import signal
    import subprocess
    import sys

    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, REDIS_URL, prefix],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")},
    )
    follower = serve(paced_agent()[0], broker=RedisBroker(REDIS_URL, prefix=prefix, block_ms=300))
    try:
        assert worker.stdout is not None
        run_id = worker.stdout.readline().decode().strip()
        received = ""
        with (
            httpx.Client(base_url=follower.url, timeout=30) as client,
            client.stream("GET", f"/api/runs/{run_id}/stream") as response,
        ):
            assert response.status_code == 200
            for chunk in response.iter_text():
                if not received:
                    os.kill(worker.pid, signal.SIGKILL)
                received += chunk
    finally:
        if worker.poll() is None:
            worker.kill()
        worker.wait(timeout=10)
    frames = [json.loads(line[6:]) for line in received.split("\n") if line.startswith("data: ")]
    assert frames[0]["type"] == "status"
    assert frames[-1] == {
        "type": "error",
        "message": "The server running this answer stopped before it finished.",
    }


def _settled_tasks(server: LiveServer) -> list[str]:
    """The server's tasks once its broker has subscribed to stop requests: while it connects,
    redis-py runs a task of its own for the command in flight, which a snapshot taken then
    would count as the server's."""
    found: list[str] = []

    def settled() -> bool:
        found[:] = sorted(server.call(other_tasks()))
        return not any(name.startswith("AbstractConnection.") for name in found)

    assert wait_until(settled)
    return found


def test_nothing_outlives_a_run(serve: Serve, prefix: str) -> None:
    """After runs that were followed, resumed, dropped and stopped: no task of theirs, no
    provider stream and no Redis subscription is left on either worker."""
    import redis

    agent_a, provider_a = paced_agent()
    a = serve(agent_a, broker=RedisBroker(REDIS_URL, prefix=prefix))
    b = serve(paced_agent()[0], broker=RedisBroker(REDIS_URL, prefix=prefix))
    before = {name: _settled_tasks(server) for name, server in (("a", a), ("b", b))}
    with a.client() as client_a, b.client() as client_b:
        run_id, _, last = read_then_drop(client_a, "/api/chat/stream", {"message": "go"}, ids=4)
        detached, _, _ = read_then_drop(
            client_a, "/api/chat/stream", {"message": "go", "detach": True}, ids=4
        )
        client_b.get(f"/api/runs/{detached}/stream", headers={"Last-Event-ID": last})
        stopped, _, _ = read_then_drop(
            client_a, "/api/chat/stream", {"message": "go", "detach": True}, ids=4
        )
        client_b.post(f"/api/chat/runs/{stopped}/cancel")
        client_b.get(f"/api/runs/{stopped}/stream")
    runner = a.app.state.server.runner
    assert wait_until(lambda: runner.running == 0)
    a.call(runner.settle(), timeout=10)
    for name, server in (("a", a), ("b", b)):
        assert sorted(server.call(other_tasks())) == before[name]
    # The detached run streamed both its turns; the dropped and the stopped one were cut
    # short in their first or second turn (whichever the stop landed in). No stream is left.
    assert provider_a.streaming == 0
    assert 4 <= len(provider_a.requests) <= 6 and provider_a.closed_early <= 2
    subscribers = redis.Redis.from_url(REDIS_URL).pubsub_numsub(f"{prefix}cancel")
    assert subscribers == [(f"{prefix}cancel".encode(), 2)]  # one per worker, as at start


def test_an_ai_sdk_chat_is_stopped_from_the_other_worker(serve: Serve, prefix: str) -> None:
    a, b = two_workers(serve, prefix)
    path, body = DIALECTS["ai-sdk"]
    with (
        a.client() as client_a,
        b.client() as client_b,
        client_a.stream("POST", path, json=body) as response,
    ):
        lines = response.iter_lines()
        assert any('"text-delta"' in line for line in lines)
        stop = client_b.post("/ai-sdk/chat/chat-1/stop")
        rest = [line[6:] for line in lines if line.startswith("data: ")]
    assert stop.status_code == 202
    assert rest[-2:] == ['{"type":"abort","reason":"user_cancelled"}', "[DONE]"]


@pytest.mark.parametrize("workers", ["one", "two"])
def test_a_client_with_every_event_so_far_is_answered_at_once(
    serve: Serve, prefix: str, workers: str
) -> None:
    """A client that already has every event of a run in progress (a reconnect during a
    long tool call) gets its response and heartbeats at once, not at the run's next event;
    then it follows the run to its end."""
    import asyncio

    from agentstream.principal import Principal

    entered, release = threading.Event(), threading.Event()

    async def slow_lookup(query: str) -> dict[str, Any]:
        """Look something up, slowly."""
        entered.set()
        await asyncio.to_thread(release.wait, 30)
        return {"found": query}

    provider = ScriptedProvider(
        {
            "turns": [
                {"tool_calls": [{"id": "c1", "name": "slow_lookup", "arguments": {"query": "x"}}]},
                {"text": ["Found ", "it."]},
            ]
        }
    )
    brokers: list[Any] = (
        [None, None]
        if workers == "one"
        else [RedisBroker(REDIS_URL, prefix=prefix), RedisBroker(REDIS_URL, prefix=prefix)]
    )
    agent = Agent(model=provider, tools=[slow_lookup])
    runs_on = serve(agent, broker=brokers[0], heartbeat_seconds=0.2)
    reader = runs_on if workers == "one" else serve(agent, broker=brokers[1], heartbeat_seconds=0.2)
    try:
        with runs_on.client() as client:
            run_id, _, _ = read_then_drop(
                client, "/api/chat/stream", {"message": "go", "detach": True}, ids=1
            )
        assert entered.wait(WAIT)
        broker = runs_on.app.state.server.runner.broker
        end = runs_on.call(broker.end_of(run_id, Principal(user_id="local")))
        assert not end.done
        with reader.client(timeout=10) as client:
            for path in ("events", "stream"):
                with client.stream(
                    "GET", f"/api/runs/{run_id}/{path}", headers={"Last-Event-ID": str(end.last)}
                ) as response:
                    assert response.status_code == 200  # while the tool still runs
                    first = next(response.iter_text())
                    assert first.startswith(": ping")
            release.set()
            events = client.get(f"/api/runs/{run_id}/events", params={"after": end.last})
            rest = client.get(f"/api/runs/{run_id}/stream", params={"after": end.last})
            whole = client.get(f"/api/runs/{run_id}/stream")
            last = [line for line in events.text.split("\n") if line.startswith("id: ")][-1][4:]
            done = client.get(f"/api/runs/{run_id}/events", headers={"Last-Event-ID": last})
            unknown = client.get("/api/runs/nope/events")
    finally:
        release.set()
    assert "event: tool_call_finished" in events.text and "event: run_completed" in events.text
    assert whole.text.endswith(rest.text) and '"type":"complete"' in rest.text
    assert (done.status_code, unknown.status_code) == (204, 404)


def test_no_upstream_request_outlives_a_run(serve: Serve, prefix: str) -> None:
    """A vendor's stream (OpenAI's wire, over TCP) is closed however its run ends: dropped by
    its client, stopped from another worker, or completed while followed from there; and a
    follower that hangs up leaves nothing behind on its worker."""
    import redis

    from tests.providers.fakes import openai as fake
    from tests.providers.fakes.server import FakeUpstream

    upstream = FakeUpstream().start()
    try:
        upstream.queue(
            fake.text("Hello ", "there", hang=True),
            fake.text("Hello ", "again", hang=True),
            fake.text("Hello ", "done"),
        )
        a = serve(
            Agent(model=fake.provider(upstream)), broker=RedisBroker(REDIS_URL, prefix=prefix)
        )
        b = serve(paced_agent()[0], broker=RedisBroker(REDIS_URL, prefix=prefix))
        before = {name: _settled_tasks(server) for name, server in (("a", a), ("b", b))}
        with a.client() as client_a, b.client() as client_b:
            read_then_drop(client_a, "/api/chat/stream", {"message": "go"}, ids=2)
            assert wait_until(lambda: upstream.open == 0)  # its client left: cancelled
            stopped, _, _ = read_then_drop(
                client_a, "/api/chat/stream", {"message": "go", "detach": True}, ids=2
            )
            # Detached: the run goes on without its client, its vendor stream still open.
            assert (upstream.open, upstream.disconnects) == (1, 1)
            with client_b.stream("GET", f"/api/runs/{stopped}/stream") as follower:
                next(follower.iter_text())  # a follower on the other worker hangs up
            assert client_b.post(f"/api/chat/runs/{stopped}/cancel").status_code == 202
            stopped_rest = client_b.get(f"/api/runs/{stopped}/stream").text
            completed, _, _ = read_then_drop(
                client_a, "/api/chat/stream", {"message": "go", "detach": True}, ids=1
            )
            followed = client_b.get(f"/api/runs/{completed}/stream").text
        runner = a.app.state.server.runner
        assert wait_until(lambda: runner.running == 0)
        a.call(runner.settle(), timeout=10)
        assert wait_until(lambda: upstream.open == 0)
        assert (len(upstream.posts), upstream.disconnects) == (3, 2)
    finally:
        upstream.stop()
    assert stopped_rest.rstrip().endswith('data: {"type":"cancelled"}')
    assert followed.rstrip().endswith("}") and '"type":"complete"' in followed
    for name, server in (("a", a), ("b", b)):
        assert sorted(server.call(other_tasks())) == before[name]
    subscribers = redis.Redis.from_url(REDIS_URL).pubsub_numsub(f"{prefix}cancel")
    assert subscribers == [(f"{prefix}cancel".encode(), 2)]
