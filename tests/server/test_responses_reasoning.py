"""A reasoning model on OpenAI's Responses API (the official SDK against the fake upstream),
served over uvicorn: its reasoning summary reaches the playground's ``thinking`` events and
the tray's ``thinking`` frames the web UI draws as its reasoning trace."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentstream import Agent
from tests.providers.fakes import openai_responses as fake
from tests.providers.fakes.server import FakeUpstream
from tests.server.conftest import Serve
from tests.server.helpers import datas, named, parse_sse, stream_text

SUMMARY = ("Checking the customer tables.", "None matches, so ask.")


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    server = FakeUpstream().start()
    yield server
    server.stop()


def reasoning_agent(upstream: FakeUpstream) -> Agent:
    upstream.queue(fake.Events().reasoning(*SUMMARY).message("Which table?").completed())
    return Agent(model=fake.provider(upstream), model_options={"reasoning": "low"})


def test_playground_thinking(serve: Serve, upstream: FakeUpstream) -> None:
    agent = reasoning_agent(upstream)
    server = serve(agent)
    body = {"brandRef": "b1", "model": agent.model_id, "content": "Show customers"}
    with server.client() as client:
        response, text = stream_text(
            client, "/api/chat/agent-chat/stream?brandRef=b1", json=body,
            headers={"Accept": "text/event-stream"},
        )  # fmt: skip
    assert response.status_code == 200, text
    thinking = "".join(d["text"] for name, d in named(parse_sse(text)) if name == "thinking")
    assert thinking == "\n\n".join(SUMMARY)
    sent = fake.request_body(upstream.posts[0])
    assert sent["reasoning"]["summary"] == "auto"


def test_tray_reasoning_trace(serve: Serve, upstream: FakeUpstream) -> None:
    server = serve(reasoning_agent(upstream))
    body = {"message": "Show customers", "context": {}, "include_reasoning": True}
    with server.client() as client:
        response, text = stream_text(client, "/api/chat/stream", json=body)
    assert response.status_code == 200, text
    frames = datas(parse_sse(text))
    thinking = "".join(f["text"] for f in frames if f.get("type") == "thinking")
    assert thinking == "\n\n".join(SUMMARY)
    assert any(f.get("type") == "text_delta" and "Which table?" in f["text"] for f in frames)
