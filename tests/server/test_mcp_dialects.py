"""An agent using tools from two MCP servers at once (a stdio subprocess and a streamable-HTTP
server on loopback), served by the real app over uvicorn, in every dialect. The
caller's bearer token reaches the HTTP server."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider
from agentstream.tools.mcp import MCPTools
from tests.server.conftest import Serve
from tests.server.helpers import (
    LiveServer,
    bearer,
    datas,
    named,
    parse_sse,
    stream_text,
    token,
)
from tests.tools import mcp_servers
from tests.tools.test_mcp import SERVER


@pytest.fixture
def notes_server() -> Iterator[LiveServer]:
    mcp_servers.seen_authorization.clear()
    server = LiveServer(mcp_servers.notes_app()).start()  # type: ignore[arg-type]
    yield server
    server.stop()


def two_server_agent(notes_url: str) -> tuple[Agent, list[MCPTools]]:
    sources = [
        MCPTools.stdio(sys.executable, [SERVER], label="weather"),
        MCPTools.http(notes_url, forward_token=True, prefix="notes_"),
    ]
    model = ScriptedProvider(
        {
            "turns": [
                {
                    "tool_calls": [
                        {"id": "t1", "name": "get_weather", "arguments": {"city": "Paris"}},
                        {
                            "id": "t2",
                            "name": "notes_lookup_note",
                            "arguments": {"topic": "deploys"},
                        },
                    ]
                },
                {"text": "Sunny, and we ship on Fridays."},
            ]
        }
    )
    return Agent(model=model, tools=sources), sources


ANSWER_FIELDS = ("text", "chunk", "content", "delta")  # each dialect's text-delta field

DIALECTS: dict[str, tuple[str, dict[str, Any]]] = {
    "tray": ("/api/chat/stream", {"message": "Weather and deploy notes?", "context": {}}),
    "agent": ("/agent/stream", {"message": "Weather and deploy notes?"}),
    "playground": (
        "/api/chat/agent-chat/stream?brandRef=b1",
        {"brandRef": "b1", "content": "Weather and deploy notes?"},
    ),
    "ichor": (
        "/v1/agent/chat",
        {"message": "Weather and deploy notes?", "context_type": "tables"},
    ),
}


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_tools_from_two_mcp_servers(serve: Serve, notes_server: LiveServer, dialect: str) -> None:
    agent, sources = two_server_agent(f"{notes_server.url}/mcp")
    server = serve(agent, auth=True)
    path, body = DIALECTS[dialect]
    if dialect == "playground":
        body = {**body, "model": agent.model_id}
    jwt = token("alice")
    try:
        with server.client() as client:
            response, text = stream_text(
                client, path, json=body, headers={**bearer(jwt), "Accept": "text/event-stream"}
            )
    finally:
        for source in sources:
            server.call(source.aclose(), timeout=15)

    assert response.status_code == 200, text
    frames = datas(parse_sse(text))
    wire = str(frames)
    assert "get_weather" in wire and "notes_lookup_note" in wire
    pieces = [f.get(k) for f in frames if isinstance(f, dict) for k in ANSWER_FIELDS]
    assert "Sunny, and we ship on Fridays." in "".join(p for p in pieces if isinstance(p, str))
    assert "error" not in [f.get("type") for f in frames if isinstance(f, dict)]
    if dialect == "tray":
        done = [f["tool"] for f in frames if f.get("type") == "tool_complete"]
        assert done == ["get_weather", "notes_lookup_note"], frames
    elif dialect == "ichor":
        results = [d for name, d in named(parse_sse(text)) if name == "tool_call_result"]
        assert sorted((r["name"], r["is_error"]) for r in results) == [  # as each finished
            ("get_weather", False),
            ("notes_lookup_note", False),
        ], frames
    assert mcp_servers.seen_authorization
    assert set(mcp_servers.seen_authorization) == {f"Bearer {jwt}"}
