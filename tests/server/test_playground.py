"""Golden frames for ``playground`` (the data playground's example stream) and its request rules."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentstream import Agent
from agentstream.messages import AssistantMessage, UserMessage
from agentstream.providers.registry import ModelRegistry
from agentstream.providers.scripted import ScriptedProvider
from agentstream.tools import ToolContext, tool
from tests.server.agents import playground_agent
from tests.server.conftest import Serve
from tests.server.helpers import (
    RUN_ID,
    bearer,
    named,
    parse_ndjson,
    parse_sse,
    stream_text,
    token,
    wait_until,
)

PATH = "/api/chat/agent-chat/stream"
MODEL = "scripted:script"
MESSAGE = "Working on it\n\nI couldn't find a customer table..."


def body(**extra: Any) -> dict[str, Any]:
    return {"brandRef": "brand_123", "model": MODEL, "content": "Show 10 customers", **extra}


def post(
    serve: Serve, agent: Agent | None = None, *, query: str = "brand_123", **kwargs: Any
) -> tuple[Any, str]:
    server = serve(agent or playground_agent())
    with server.client() as client:
        return stream_text(client, f"{PATH}?brandRef={query}", **kwargs)


EXAMPLE = [
    ("status", {"executionId": RUN_ID, "state": "started"}),
    ("message", {"delta": "Working on it"}),
    ("tool_call", {"toolName": "sqlPatternTool", "input": '{"input":"show 10 customer"}'}),
    ("tool_result", {"toolName": "sqlPatternTool", "output": "[]"}),
    ("thinking", {"text": "No customer table detected, asking for clarification."}),
    # The example elides the second turn's delta and the metadata fallback; both are sent.
    ("message", {"delta": "\n\nI couldn't find a customer table..."}),
    (
        "metadata",
        {"tokensUsed": 1050, "promptTokens": 800, "completionTokens": 250, "model": MODEL},
    ),
    (
        "final",
        {
            "type": "text",
            "content": {"message": MESSAGE},
            "tokenBreakdown": {"promptTokens": 800, "completionTokens": 250, "totalTokens": 1050},
        },
    ),
    ("status", {"executionId": RUN_ID, "state": "completed"}),
]


def test_example_stream_as_ndjson(serve: Serve) -> None:
    response, text = post(serve, json=body(), headers={"Accept": "application/x-ndjson"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-ndjson"
    frames = named(parse_ndjson(text))
    assert frames == EXAMPLE
    assert frames[0][1]["executionId"] == frames[-1][1]["executionId"]
    # One line per event, exactly "<eventName>{json}".
    assert text.splitlines()[0].startswith('status{"executionId":"')


def test_example_stream_as_sse(serve: Serve) -> None:
    response, text = post(serve, json=body(), headers={"Accept": "text/event-stream"})
    assert response.headers["content-type"] == "text/event-stream"
    assert named(parse_sse(text)) == EXAMPLE


def test_markdown_deltas_when_requested(serve: Serve) -> None:
    _, text = post(serve, json=body(format="markdown"))
    frames = named(parse_sse(text))
    assert frames[1] == ("message", {"delta": {"format": "markdown", "text": "Working on it"}})
    final = next(data for name, data in frames if name == "final")
    assert final["format"] == "markdown"
    assert final["content"] == {"message": MESSAGE}


def test_stream_false_answers_one_document(serve: Serve) -> None:
    response, text = post(serve, json=body(stream=False))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {
        "executionId": RUN_ID,
        "state": "completed",
        "type": "text",
        "content": {"message": MESSAGE},
        "tokenBreakdown": {"promptTokens": 800, "completionTokens": 250, "totalTokens": 1050},
        "metadata": {
            "tokensUsed": 1050,
            "promptTokens": 800,
            "completionTokens": 250,
            "model": MODEL,
        },
        "thinking": "No customer table detected, asking for clarification.",
        "toolCalls": [
            {
                "toolName": "sqlPatternTool",
                "input": '{"input":"show 10 customer"}',
                "output": "[]",
                "isError": False,
            }
        ],
    }


def test_history_temperature_rag_and_reasoning_reach_the_run(serve: Serve) -> None:
    seen: list[Any] = []

    @tool
    def lookup(ctx: ToolContext) -> str:
        """Look something up."""
        seen.append(dict(ctx.options))
        return "ok"

    provider = ScriptedProvider(
        {"turns": [{"tool_calls": [{"name": "lookup", "arguments": {}}]}, {"text": "done"}]}
    )
    agent = Agent(model=provider, tools=[lookup])
    history = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    response, _ = post(
        serve,
        agent,
        json=body(history=history, temperature=0.2, ragEnabled=False, reasoningMode="high"),
    )
    assert response.status_code == 200
    first = provider.requests[0]
    assert list(first.messages) == [
        UserMessage(content="Hi"),
        AssistantMessage(text="Hello!"),
        UserMessage(content="Show 10 customers"),
    ]
    assert first.temperature == 0.2
    assert first.options["reasoning"] == "high"
    assert seen == [{"rag_enabled": False, "brand_ref": "brand_123"}]


def test_run_failure_is_error_then_status_failed(serve: Serve) -> None:
    provider = ScriptedProvider(
        {
            "turns": [
                {
                    "text": ["a"],
                    "error": {"kind": "rate_limited", "message": "Slow down.", "after": 1},
                }
            ]
        }
    )
    _, text = post(serve, Agent(model=provider), json=body())
    frames = named(parse_sse(text))
    assert frames[-2:] == [
        ("error", {"message": "Slow down."}),
        ("status", {"executionId": RUN_ID, "state": "failed"}),
    ]


@pytest.mark.parametrize(
    ("query", "payload", "field"),
    [
        ("brand_999", body(), "brandRef"),
        ("brand_123", body(model="openai:gpt-5-unknown"), "model"),
        ("brand_123", body(temperature=2.5), "temperature"),
        ("brand_123", body(temperature=-0.1), "temperature"),
        ("brand_123", body(content=None), "content"),
        ("brand_123", {"brandRef": "brand_123", "content": "x"}, "model"),
        ("brand_123", body(history=[{"role": "system", "content": "x"}]), "history.0.role"),
        ("brand_123", body(history="nope"), "history"),
        ("brand_123", body(metadata={"conversationId": 5}), "metadata.conversationId"),
        ("brand_123", body(reasoningMode="galaxy-brain"), "reasoningMode"),
        ("brand_123", body(stream="sometimes"), "stream"),
        ("brand_123", body(ragEnabled="maybe"), "ragEnabled"),
    ],
)
def test_bad_requests_are_400(serve: Serve, query: str, payload: Any, field: str) -> None:
    response, text = post(serve, query=query, json=payload)
    assert response.status_code == 400, text
    assert response.json()["field"] == field


def test_missing_brand_ref_query_is_400(serve: Serve) -> None:
    server = serve(playground_agent())
    with server.client() as client:
        response = client.post(PATH, json=body())
    assert response.status_code == 400
    assert response.json()["field"] == "brandRef"


def test_tenant_must_match_the_token(serve: Serve) -> None:
    server = serve(playground_agent(), auth=True, tenant_claim="brands")
    good = token("alice", brands=["brand_123", "brand_7"])
    other = token("alice", brands=["brand_7"])
    with server.client() as client:
        ok, _ = stream_text(client, f"{PATH}?brandRef=brand_123", json=body(), headers=bearer(good))
        forbidden = client.post(f"{PATH}?brandRef=brand_123", json=body(), headers=bearer(other))
        cookie = client.post(
            f"{PATH}?brandRef=brand_123",
            json=body(stream=False),
            headers={"Cookie": f"agentstream_session={good}"},
        )
    assert ok.status_code == 200
    assert forbidden.status_code == 403
    assert "brand_123" in forbidden.json()["detail"]
    assert cookie.status_code == 200
    assert cookie.json()["state"] == "completed"


def test_list_models_and_choosing_another_one(serve: Serve, tmp_path: Path) -> None:
    script = tmp_path / "other.yaml"
    script.write_text("turns:\n  - text: [From the other model.]\n")
    registry = ModelRegistry([f"scripted:{script}=Other model"], discover=False)
    server = serve(playground_agent(), models=registry)
    with server.client() as client:
        response = client.get("/api/chat/models")
        chosen = client.post(
            f"{PATH}?brandRef=brand_123", json=body(model=f"scripted:{script}", stream=False)
        )
        by_name = client.post(
            f"{PATH}?brandRef=brand_123", json=body(model=str(script), stream=False)
        )
    assert response.status_code == 200
    assert response.json()["models"] == [
        {"id": MODEL, "name": "Scripted: script", "provider": "scripted", "default": True},
        {
            "id": f"scripted:{script}",
            "name": "Other model",
            "provider": "scripted",
            "default": False,
        },
    ]
    assert chosen.json()["content"] == {"message": "From the other model."}
    assert by_name.json()["content"] == {"message": "From the other model."}


def test_stream_false_pairs_parallel_calls_of_one_tool_by_call_id(serve: Serve) -> None:
    """Two calls of the same tool in one turn: each keeps its own input and output, whatever
    order they finish in (the slower one was called first)."""

    @tool
    async def lookup(ctx: ToolContext, query: str, wait: float = 0) -> str:
        """Look something up."""
        await asyncio.sleep(wait)
        return f"found {query}"

    script = {
        "turns": [
            {
                "tool_calls": [
                    {"id": "a", "name": "lookup", "arguments": {"query": "one", "wait": 0.2}},
                    {"id": "b", "name": "lookup", "arguments": {"query": "two"}},
                ]
            },
            {"text": ["Both found."]},
        ]
    }
    agent = Agent(model=ScriptedProvider(script, model="script"), tools=[lookup])
    response, _ = post(serve, agent, json=body(stream=False))
    answer = response.json()
    assert answer["state"] == "completed"
    assert answer["content"] == {"message": "Both found."}
    assert [(c["input"], c["output"]) for c in answer["toolCalls"]] == [
        ('{"query":"one","wait":0.2}', "found one"),
        ('{"query":"two"}', "found two"),
    ]


def test_stream_false_stops_the_run_of_a_client_that_hangs_up(serve: Serve) -> None:
    provider = ScriptedProvider(
        {"turns": [{"text": ["tick "] * 400}], "delay": 0.05}, model="script"
    )
    server = serve(Agent(model=provider))  # 20 s if nobody stops it
    with httpx.Client(base_url=server.url, timeout=0.5) as client, pytest.raises(httpx.ReadTimeout):
        client.post(f"{PATH}?brandRef=brand_123", json=body(stream=False))
    # The client gave up (closing its connection): the run is stopped, its provider stream closed.
    assert wait_until(lambda: provider.closed_early == 1)
    assert wait_until(lambda: server.app.state.server.runner.running == 0)


def test_a_history_that_differs_from_the_stored_conversation_branches_it(
    serve: Serve, tmp_path: Path
) -> None:
    from agentstream.store import SqlConversationStore, create_engine, upgrade

    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'p.db'}"))
    provider = ScriptedProvider({"turns": [{"text": "Noted."}]})
    server = serve(Agent(model=provider), store=store)
    server.call(upgrade(store.engine), timeout=60)
    history: list[dict[str, str]] = []

    def ask(client: httpx.Client, content: str, sent: list[dict[str, str]]) -> None:
        request = body(content=content, history=sent, metadata={"conversationId": "pg-1"})
        response, _ = stream_text(client, f"{PATH}?brandRef=brand_123", json=request)
        assert response.status_code == 200

    with server.client() as client:
        for content in ("Hi", "Show 10 custmers", "Never mind"):
            ask(client, content, history)
            history += [
                {"role": "user", "content": content},
                {"role": "assistant", "content": "Noted."},
            ]
        # The second question edited: the client sends the history before it.
        ask(client, "Show 10 customers", history[:2])
        # Another answer to it: the history stops before the question, which is sent again.
        ask(client, "Show 10 customers", history[:2])
        # Then the conversation goes on from the new answer.
        edited = [*history[:2], {"role": "user", "content": "Show 10 customers"}]
        ask(client, "Thanks", [*edited, {"role": "assistant", "content": "Noted."}])
        items = client.get("/api/conversations").json()["items"]
        detail = client.get(f"/api/conversations/{items[0]['id']}").json()
    shown = detail["messages"]
    assert [m["content"] for m in shown] == [
        "Hi",
        "Noted.",
        "Show 10 customers",
        "Noted.",
        "Thanks",
        "Noted.",
    ]
    assert len(shown[2]["siblings"]) == 2  # the question with the typo is kept beside it
    assert len(shown[3]["siblings"]) == 2  # and the first answer to the edited one
    server.call(store.close())
