"""A caller over a limit is told so before any stream starts: 429 with ``Retry-After`` and a
message naming the limit, as JSON, in every protocol; nothing is stored or run."""

from __future__ import annotations

from typing import Any

import pytest

from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs.limits import Limits, Quota
from agentstream.server.config import ServerConfig
from tests.server.conftest import Serve

MODEL = "scripted:script"
AGUI = {
    "threadId": "t1",
    "runId": "r1",
    "state": {},
    "tools": [],
    "context": [],
    "forwardedProps": {},
    "messages": [{"id": "m1", "role": "user", "content": "hi"}],
}
AISDK = {
    "id": "c1",
    "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
}
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("/api/chat/stream", {"message": "hi"}),
    ("/agent/stream", {"message": "hi"}),
    ("/v1/agent/chat", {"message": "hi", "context_type": "workflow"}),
    (
        "/api/chat/agent-chat/stream?brandRef=b1",
        {"brandRef": "b1", "model": MODEL, "content": "hi"},
    ),
    (
        "/api/chat/agent-chat/stream?brandRef=b1",
        {"brandRef": "b1", "model": MODEL, "content": "hi", "stream": False},
    ),
    ("/ag-ui", AGUI),
    ("/ai-sdk/chat", AISDK),
]


@pytest.mark.parametrize(("path", "body"), REQUESTS)
def test_over_a_limit_is_a_429_before_any_stream_in_every_protocol(
    serve: Serve, path: str, body: dict[str, Any]
) -> None:
    provider = ScriptedProvider({"turns": [{"text": "hello"}]})
    limits = Limits(user=Quota(requests_per_minute=1))
    server = serve(Agent(model=provider), server=ServerConfig(limits=limits))
    with server.client() as client:
        with client.stream("POST", path, json=body) as first:
            assert first.status_code == 200
            first.read()
        refused = client.post(path, json=body)
    assert refused.status_code == 429
    assert refused.headers["content-type"] == "application/json"
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    answer = refused.json()
    assert answer["limit"] == "requests_per_minute"
    assert answer["scope"] == "user"
    assert "1 requests per minute (requests_per_minute)" in answer["detail"]
    assert len(provider.requests) == 1  # the refused request never reached the model


def test_limits_from_the_environment_apply(serve: Serve) -> None:
    server = serve(Agent(model="demo"), limits=Limits(user=Quota(concurrent_runs=0)))
    with server.client() as client:
        refused = client.post("/api/chat/stream", json={"message": "hi"})
    assert refused.status_code == 429
    assert refused.json()["limit"] == "concurrent_runs"
    assert refused.headers["retry-after"] == "5"
