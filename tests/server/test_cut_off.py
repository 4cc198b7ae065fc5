"""An answer cut off at the model's output limit (or by its content filter) says so in every
protocol, the way each can, and the store keeps it: it must never look complete."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider
from agentstream.store import SqlConversationStore, create_engine, upgrade
from tests.server.conftest import Serve
from tests.server.helpers import LiveServer, Sse, parse_sse

CUT = "The first half of a long answer, and th"
SCRIPT: dict[str, Any] = {
    "rules": [
        {"match": "filter", "turns": [{"text": "I cannot", "stop_reason": "refusal"}]},
        {"match": "whole", "turns": [{"text": "All of it."}]},
        {
            "turns": [
                {
                    "text": ["The first half of a long", " answer, and th"],
                    "stop_reason": "max_tokens",
                }
            ]
        },
    ]
}


@pytest.fixture
def live(serve: Serve, tmp_path: Path) -> Iterator[LiveServer]:
    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'cut.db'}"))
    server = serve(Agent(model=ScriptedProvider(SCRIPT)), store=store)
    server.call(upgrade(store.engine), timeout=60)
    yield server
    server.call(store.close())


def _post(client: httpx.Client, path: str, body: Any) -> list[Sse]:
    with client.stream("POST", path, json=body) as response:
        assert response.status_code == 200, response.read()
        text = response.read().decode()
    return parse_sse(text.replace("data: [DONE]\n\n", ""))


def _stored(client: httpx.Client) -> dict[str, Any]:
    newest = client.get("/api/conversations").json()["items"][0]
    answer: dict[str, Any] = client.get(f"/api/conversations/{newest['id']}").json()["messages"][-1]
    return answer


def test_the_chat_tray_says_so_in_its_complete_payload_and_the_store_keeps_it(
    live: LiveServer,
) -> None:
    with live.client() as client:
        frames = [m.data for m in _post(client, "/api/chat/stream", {"message": "tell me"})]
        assert frames[-1]["type"] == "complete"
        assert frames[-1]["payload"]["message"] == CUT
        assert frames[-1]["payload"]["stop_reason"] == "max_tokens"
        stored = _stored(client)
        assert (stored["content"], stored["stop_reason"]) == (CUT, "max_tokens")
        # A whole answer has no such field (the tray's payload is additive), and says
        # why it stopped in the store.
        frames = [m.data for m in _post(client, "/api/chat/stream", {"message": "the whole"})]
        assert "stop_reason" not in frames[-1]["payload"]
        assert _stored(client)["stop_reason"] == "end_turn"


def test_the_ops_agent_warns_before_done(live: LiveServer) -> None:
    with live.client() as client:
        frames = [m.data for m in _post(client, "/agent/stream", {"message": "tell me"})]
    warning, done = frames[-2:]
    assert warning == {
        "type": "warning",
        "code": "max_tokens",
        "message": "The answer was cut off: the model reached its output limit.",
    }
    assert done == {"type": "done"}


def test_the_ai_sdk_finishes_with_length_or_content_filter(live: LiveServer) -> None:
    def finish(message: str) -> dict[str, Any]:
        user = {"id": "u", "role": "user", "parts": [{"type": "text", "text": message}]}
        with live.client() as client:
            frames = _post(client, "/ai-sdk/chat", {"id": message, "messages": [user]})
        last: dict[str, Any] = frames[-1].data
        return last

    assert finish("tell me")["finishReason"] == "length"
    assert finish("the filter")["finishReason"] == "content-filter"
    assert finish("the whole")["finishReason"] == "stop"


def test_the_data_playground_final_says_so_streamed_or_not(live: LiveServer) -> None:
    body = {"brandRef": "b", "model": "scripted:script", "content": "tell me"}
    path = "/api/chat/agent-chat/stream?brandRef=b"
    with live.client() as client:
        (final,) = [m.data for m in _post(client, path, body) if m.event == "final"]
        document = client.post(path, json={**body, "stream": False}).json()
    assert final["content"] == {"message": CUT}
    assert final["stopReason"] == "max_tokens"
    assert (document["state"], document["stopReason"]) == ("completed", "max_tokens")


def test_ag_ui_says_so_in_the_run_result(live: LiveServer) -> None:
    body = {
        "threadId": "t",
        "runId": "r",
        "state": {},
        "messages": [{"id": "u", "role": "user", "content": "tell me"}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }
    with live.client() as client:
        finished = _post(client, "/ag-ui", body)[-1].data
    assert finished["type"] == "RUN_FINISHED"
    assert finished["result"] == {"message": CUT, "stopReason": "max_tokens"}


def test_the_workflow_assistant_says_so_in_message_complete(live: LiveServer) -> None:
    body = {"message": "tell me", "context_type": "workflow"}
    with live.client() as client:
        last = _post(client, "/v1/agent/chat", body)[-1]
    assert (last.event, last.data) == ("message_complete", {"stop_reason": "max_tokens"})
