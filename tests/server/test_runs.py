"""Runs shared between workers: replaying canonical events, and stopping a run from any worker."""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

import pytest

from agentstream.events import event_from_json
from agentstream.runs import RedisBroker
from tests.server.agents import slow_agent, tray_agent
from tests.server.conftest import Serve
from tests.server.helpers import WAIT, bearer, parse_sse, token

TRAY = "/api/chat/stream"
REDIS_URL = "redis://127.0.0.1:6379/0"


def tray_run(
    client: Any, message: str = "Find CRISPR articles", **kwargs: Any
) -> list[dict[str, Any]]:
    response = client.post(TRAY, json={"message": message}, **kwargs)
    assert response.status_code == 200, response.text
    return [m.data for m in parse_sse(response.text)]


def canonical(text: str) -> list[tuple[str, str, dict[str, Any]]]:
    """``(event, id, data)`` of each SSE frame."""
    frames = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in fields:
            frames.append((fields["event"], fields["id"], json.loads(fields["data"])))
    return frames


def test_replay_a_finished_run_from_any_point(serve: Serve) -> None:
    server = serve(tray_agent())
    with server.client() as client:
        frames = tray_run(client)
        run_id = frames[0]["run_id"]
        everything = client.get(f"/api/runs/{run_id}/events")
        assert everything.status_code == 200
        assert everything.headers["content-type"].startswith("text/event-stream")
        replayed = canonical(everything.text)
        kinds = [kind for kind, _, _ in replayed]
        assert kinds[0] == "run_started" and kinds[-1] == "run_completed"
        assert "tool_call_finished" in kinds
        assert [int(seq) for _, seq, _ in replayed if seq] == list(range(len(replayed)))
        for kind, _, data in replayed:  # each frame is a whole canonical event
            assert event_from_json(json.dumps(data)).type == kind
        after_query = canonical(client.get(f"/api/runs/{run_id}/events", params={"after": 3}).text)
        after_header = canonical(
            client.get(f"/api/runs/{run_id}/events", headers={"Last-Event-ID": "3"}).text
        )
        assert after_query == after_header == replayed[4:]


def test_a_finished_run_the_client_has_read_answers_204(serve: Serve) -> None:
    """A browser ``EventSource`` reconnects after every stream; 204 is what stops it."""
    server = serve(tray_agent())
    with server.client() as client:
        run_id = tray_run(client)[0]["run_id"]
        replayed = canonical(client.get(f"/api/runs/{run_id}/events").text)
        last = int(replayed[-1][1])
        read = client.get(f"/api/runs/{run_id}/events", headers={"Last-Event-ID": str(last)})
        assert read.status_code == 204 and read.content == b""
        assert client.get(f"/api/runs/{run_id}/events", params={"after": last}).status_code == 204
        tail = client.get(f"/api/runs/{run_id}/events", params={"after": last - 1})
        assert tail.status_code == 200
        assert canonical(tail.text) == replayed[-1:]


def test_only_the_owner_can_replay_a_run(serve: Serve) -> None:
    server = serve(tray_agent(), auth=True)
    with server.client() as client:
        frames = tray_run(client, headers=bearer(token("alice")))
        run_id = frames[0]["run_id"]
        assert (
            client.get(f"/api/runs/{run_id}/events", headers=bearer(token("alice"))).status_code
            == 200
        )
        stranger = client.get(f"/api/runs/{run_id}/events", headers=bearer(token("mallory")))
        assert stranger.status_code == 404
        assert stranger.json()["detail"] == "Run not found"
        assert client.get(f"/api/runs/{run_id}/events").status_code == 401
        assert (
            client.get("/api/runs/nope/events", headers=bearer(token("alice"))).status_code == 404
        )


@pytest.fixture
def redis_prefix() -> str:
    return f"agentstream-test:{uuid.uuid4().hex}:"


def test_stop_a_run_from_another_worker_through_redis(serve: Serve, redis_prefix: str) -> None:
    """Two workers share Redis; the stop request lands on the one not running the run."""
    worker_a = serve(slow_agent(delay=0.2)[0], broker=RedisBroker(REDIS_URL, prefix=redis_prefix))
    worker_b = serve(slow_agent()[0], broker=RedisBroker(REDIS_URL, prefix=redis_prefix))
    frames: list[dict[str, Any]] = []
    with worker_a.client() as a, worker_b.client() as b:
        with a.stream("POST", TRAY, json={"message": "count slowly"}) as response:
            for line in response.iter_lines():
                if not line.startswith("data: "):
                    continue
                frames.append(json.loads(line[6:]))
                if frames[-1]["type"] == "text_delta" and len(frames) == 2:
                    cancel = b.post(f"/api/chat/runs/{frames[0]['run_id']}/cancel")
                    assert cancel.status_code == 202
        assert frames[-1] == {"type": "cancelled"}
        # The run's whole canonical stream is readable from the other worker too.
        replayed = canonical(b.get(f"/api/runs/{frames[0]['run_id']}/events").text)
        assert replayed[-1][0] == "run_cancelled"
        assert replayed[-1][2]["reason"] == "user_cancelled"


def test_follow_a_live_run_from_another_worker(serve: Serve, redis_prefix: str) -> None:
    worker_a = serve(
        slow_agent(delay=0.05, chunks=20)[0], broker=RedisBroker(REDIS_URL, prefix=redis_prefix)
    )
    worker_b = serve(slow_agent()[0], broker=RedisBroker(REDIS_URL, prefix=redis_prefix))
    run_id: list[str] = []
    seen = threading.Event()
    streamed: list[dict[str, Any]] = []

    def stream_on_a() -> None:
        with worker_a.client() as a, a.stream("POST", TRAY, json={"message": "count"}) as response:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    streamed.append(json.loads(line[6:]))
                    if not run_id:
                        run_id.append(streamed[0]["run_id"])
                        seen.set()

    thread = threading.Thread(target=stream_on_a)
    thread.start()
    assert seen.wait(WAIT)
    with worker_b.client() as b:
        followed = canonical(b.get(f"/api/runs/{run_id[0]}/events").text)
    thread.join(10)
    texts = "".join(data["text"] for kind, _, data in followed if kind == "text_delta")
    assert texts == "".join(f["text"] for f in streamed if f["type"] == "text_delta")
    assert followed[-1][0] == "run_completed"


def test_a_quiet_run_s_follow_gets_heartbeats(serve: Serve) -> None:
    """A proxy closes a follow that says nothing while a long tool runs; heartbeats keep it."""
    server = serve(slow_agent(delay=0.6, chunks=3)[0], heartbeat_seconds=0.2)
    with server.client() as client:
        run_id: list[str] = []
        started = threading.Event()

        def start() -> None:
            with client.stream("POST", TRAY, json={"message": "slowly"}) as response:
                for line in response.iter_lines():
                    if line.startswith("data: ") and not run_id:
                        run_id.append(json.loads(line[6:])["run_id"])
                        started.set()

        thread = threading.Thread(target=start)
        thread.start()
        assert started.wait(WAIT)
        with server.client() as follower:
            body = follower.get(f"/api/runs/{run_id[0]}/events").text
        thread.join(10)
    assert body.count(": ping\n\n") >= 2  # at least one per quiet 0.6 s between chunks
    followed = canonical(body)
    assert followed[-1][0] == "run_completed"
    assert [kind for kind, _, _ in followed].count("text_delta") == 3


def test_a_position_past_any_event_is_400_not_a_redis_error(
    serve: Serve, redis_prefix: str
) -> None:
    server = serve(tray_agent(), broker=RedisBroker(REDIS_URL, prefix=redis_prefix))
    with server.client() as client:
        run_id = tray_run(client)[0]["run_id"]
        path = f"/api/runs/{run_id}/events"
        huge_query = client.get(path, params={"after": 10**30})
        huge_header = client.get(path, headers={"Last-Event-ID": "9" * 30})
        garbage_header = client.get(path, headers={"Last-Event-ID": "abc"})
        resumed = client.get(path, headers={"Last-Event-ID": "3"})
    assert (huge_query.status_code, huge_query.json()["field"]) == (400, "after")
    for response in (huge_header, garbage_header):
        assert (response.status_code, response.json()["field"]) == (400, "Last-Event-ID")
    assert resumed.status_code == 200
    assert canonical(resumed.text)[0][1] == "4"
