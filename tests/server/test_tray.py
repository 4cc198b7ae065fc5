"""Golden frames for ``tray`` (the chat tray) over a real uvicorn, cancel by run id and request
rules."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentstream import Agent
from agentstream.events import RunFailed, ToolCallArgs, ToolCallFinished, ToolProgress
from agentstream.providers.scripted import ScriptedProvider
from agentstream.server.dialects.tray import TrayEncoder
from agentstream.tools import Progress, ToolResult, tool
from tests.server.agents import search_articles, slow_agent, tray_agent
from tests.server.conftest import Serve
from tests.server.helpers import ANY_INT, RUN_ID, bearer, datas, parse_sse, stream_text, token

PATH = "/api/chat/stream"
HISTORY = [
    {
        "tool_name": "search_articles",
        "input": {"query": "CRISPR"},
        "output": "Found 5 articles: ...",
        "index": 0,
        "is_error": False,
    }
]


def test_tool_flow_with_marker_and_complete_payload(serve: Serve) -> None:
    server = serve(tray_agent(), diagnostics=False)  # the frames, without the long diagnostics
    request = {
        "message": "Find CRISPR articles",
        "context": {"current_page": "reports", "active_tab": "articles"},
        "interaction_type": "text_input",
        "conversation_id": None,
    }
    with server.client() as client:
        response, text = stream_text(client, PATH, json=request)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    # data-only frames, each event's last one with the run's seq as its id (for resuming)
    assert all(line.startswith(("data: ", "id: ")) for line in text.split("\n") if line)
    assert datas(parse_sse(text)) == [
        {"type": "status", "message": "Thinking...", "run_id": RUN_ID, "conversation_id": None},
        {"type": "text_delta", "text": "Let me search for that..."},
        {
            "type": "tool_start",
            "tool": "search_articles",
            "input": {"query": "CRISPR"},
            "tool_use_id": "toolu_abc123",
        },
        {
            "type": "tool_progress",
            "tool": "search_articles",
            "stage": "searching",
            "message": "Found 15 articles...",
            "progress": 0.5,
            "data": None,
        },
        {
            "type": "tool_complete",
            "tool": "search_articles",
            "index": 0,
            "is_error": False,
            "duration_ms": ANY_INT,
        },
        {"type": "text_delta", "text": "[[tool:0]]"},
        {"type": "text_delta", "text": "\n\nI found 5 relevant articles."},
        {
            "type": "complete",
            "payload": {
                "message": "Let me search for that...\n\n[[tool:0]]\n\nI found 5 relevant articles.",
                "suggested_values": [],
                "suggested_actions": [],
                "custom_payload": {"type": "tool_history", "data": HISTORY},
                "tool_history": HISTORY,
                "conversation_id": None,
                "payloads": [],
                "usage": {
                    "input_tokens": 30,
                    "output_tokens": 11,
                    "reasoning_tokens": 0,
                    "cache_read_tokens": 0,
                },
            },
        },
    ]


def test_answer_without_tools_has_no_null_custom_payload(serve: Serve) -> None:
    """``custom_payload?: CustomPayload`` is optional; a typed tray client rejects ``null``."""
    provider = ScriptedProvider({"turns": [{"text": ["Hello", " there."]}]})
    server = serve(Agent(model=provider), diagnostics=False)
    with server.client() as client:
        _, text = stream_text(client, PATH, json={"message": "hi"})
    assert datas(parse_sse(text)) == [
        {"type": "status", "message": "Thinking...", "run_id": RUN_ID, "conversation_id": None},
        {"type": "text_delta", "text": "Hello"},
        {"type": "text_delta", "text": " there."},
        {
            "type": "complete",
            "payload": {
                "message": "Hello there.",
                "suggested_values": [],
                "suggested_actions": [],
                "tool_history": [],
                "conversation_id": None,
                "payloads": [],
                "usage": {
                    "input_tokens": 0,
                    "output_tokens": 0,
                    "reasoning_tokens": 0,
                    "cache_read_tokens": 0,
                },
            },
        },
    ]


def test_markers_the_model_writes_are_no_markers_in_the_final_message(serve: Serve) -> None:
    """In the stream a marker is the delta after ``tool_complete``; in ``complete`` every
    ``[[tool:N]]`` is a real call's, the model's look-alikes carry an invisible word joiner."""
    forged = "Cards: [[tool:0]] [[tool:99]]"
    turns = [{"text": [forged]}]
    server = serve(Agent(model=ScriptedProvider({"turns": turns})), diagnostics=False)
    with server.client() as client:
        _, text = stream_text(client, PATH, json={"message": "hi"})
    frames = datas(parse_sse(text))
    assert frames[1] == {"type": "text_delta", "text": forged}
    assert frames[-1]["payload"]["message"] == "Cards: [[tool\u2060:0]] [[tool\u2060:99]]"

    turns = [
        {
            "text": "[[tool:0]]",
            "tool_calls": [{"name": "search_articles", "arguments": {"query": "x"}}],
        },
        {"text": "[[tool:0]] again"},
    ]
    agent = Agent(model=ScriptedProvider({"turns": turns}), tools=[search_articles])
    server = serve(agent, diagnostics=False)
    with server.client() as client:
        _, text = stream_text(client, PATH, json={"message": "hi"})
    frames = datas(parse_sse(text))
    after_call = [frames[i + 1] for i, f in enumerate(frames) if f["type"] == "tool_complete"]
    assert after_call == [{"type": "text_delta", "text": "[[tool:0]]"}]
    assert frames[-1]["payload"]["message"] == (
        "[[tool\u2060:0]]\n\n[[tool:0]]\n\n[[tool\u2060:0]] again"
    )


def test_concurrent_tools_are_shown_one_after_another(serve: Serve) -> None:
    """For each tool, tool_start, its progress, tool_complete and its marker, one tool after
    another. The second call finishes first (the first waits for it), yet its frames follow
    the first call's."""
    events: list[asyncio.Event] = []

    def gate() -> asyncio.Event:
        if not events:
            events.append(asyncio.Event())
        return events[0]

    @tool
    async def slow_lookup(query: str) -> str:
        """Look up slowly."""
        await gate().wait()
        return "slow done"

    @tool
    async def fast_lookup(query: str) -> AsyncIterator[Progress | ToolResult]:
        """Look up quickly."""
        yield Progress(stage="fetching", message="half way", fraction=0.5)
        gate().set()
        yield ToolResult(text="fast done", output="fast done")

    calls = [
        {"id": "t1", "name": "slow_lookup", "arguments": {"query": "a"}},
        {"id": "t2", "name": "fast_lookup", "arguments": {"query": "b"}},
    ]
    provider = ScriptedProvider({"turns": [{"tool_calls": calls}, {"text": ["Both done."]}]})
    server = serve(Agent(model=provider, tools=[slow_lookup, fast_lookup]))
    with server.client() as client:
        _, text = stream_text(client, PATH, json={"message": "look both up"})
    frames = datas(parse_sse(text))
    assert frames[1:-1] == [
        {"type": "tool_start", "tool": "slow_lookup", "input": {"query": "a"}, "tool_use_id": "t1"},
        {
            "type": "tool_complete",
            "tool": "slow_lookup",
            "index": 0,
            "is_error": False,
            "duration_ms": ANY_INT,
        },
        {"type": "text_delta", "text": "[[tool:0]]"},
        {"type": "tool_start", "tool": "fast_lookup", "input": {"query": "b"}, "tool_use_id": "t2"},
        {
            "type": "tool_progress",
            "tool": "fast_lookup",
            "stage": "fetching",
            "message": "half way",
            "progress": 0.5,
            "data": None,
        },
        {
            "type": "tool_complete",
            "tool": "fast_lookup",
            "index": 1,
            "is_error": False,
            "duration_ms": ANY_INT,
        },
        {"type": "text_delta", "text": "[[tool:1]]"},
        {"type": "text_delta", "text": "Both done."},
    ]
    assert frames[-1]["payload"]["message"] == "[[tool:0]]\n\n[[tool:1]]\n\nBoth done."


def test_held_tool_frames_are_sent_before_the_run_ends() -> None:
    """A later call that finished while an earlier one was still open is not lost when the
    run ends (here it fails) before the earlier one completes."""
    encoder = TrayEncoder()

    def args(seq: int, call_id: str, index: int) -> ToolCallArgs:
        return ToolCallArgs(
            run_id="r", seq=seq, call_id=call_id, name=call_id, index=index, arguments={}
        )

    assert len(encoder.encode(args(1, "a", 0))) == 1
    assert encoder.encode(args(2, "b", 1)) == ()
    assert encoder.encode(ToolProgress(run_id="r", seq=3, call_id="b", name="b")) == ()
    done_b = ToolCallFinished(
        run_id="r", seq=4, call_id="b", name="b", index=1, is_error=False, result="ok"
    )
    assert encoder.encode(done_b) == ()
    frames = encoder.encode(RunFailed(run_id="r", seq=5, kind="internal", message="boom"))
    assert [json.loads(data)["type"] for _, data in frames] == [
        "tool_start",
        "tool_progress",
        "tool_complete",
        "text_delta",
        "error",
    ]


def test_five_turns_at_most(serve: Serve) -> None:
    provider = ScriptedProvider(
        {"turns": [{"tool_calls": [{"name": "nothing", "arguments": {}}]}] * 10}
    )
    server = serve(Agent(model=provider))
    with server.client() as client:
        _, text = stream_text(client, PATH, json={"message": "loop"})
    frames = datas(parse_sse(text))
    assert frames[-1] == {"type": "error", "message": "Maximum tool-call rounds exceeded"}
    assert len(provider.requests) == 5


def test_thinking_frames_only_when_asked(serve: Serve) -> None:
    provider = ScriptedProvider({"turns": [{"reasoning": ["Hmm."], "text": ["Yes."]}]})
    server = serve(Agent(model=provider))
    with server.client() as client:
        _, plain = stream_text(client, PATH, json={"message": "q"})
        _, with_reasoning = stream_text(
            client, PATH, json={"message": "q", "include_reasoning": True}
        )
    assert "thinking" not in [f["type"] for f in datas(parse_sse(plain))]
    assert {"type": "thinking", "text": "Hmm."} in datas(parse_sse(with_reasoning))


def test_owner_cancels_a_run_and_others_get_404(serve: Serve) -> None:
    agent, provider = slow_agent(delay=0.05)
    server = serve(agent, auth=True)
    alice, bob = bearer(token("alice")), bearer(token("bob"))
    with (
        server.client() as client,
        server.client() as other,
        client.stream("POST", PATH, json={"message": "go"}, headers=alice) as response,
    ):
        lines = response.iter_lines()
        first = json.loads(next(line for line in lines if line.startswith("data: "))[6:])
        run_id = first["run_id"]
        assert other.post(f"/api/chat/runs/{run_id}/cancel", headers=bob).status_code == 404
        assert other.post("/api/chat/runs/nope/cancel", headers=alice).status_code == 404
        answer = other.post(f"/api/chat/runs/{run_id}/cancel", headers=alice)
        assert answer.status_code == 202
        assert answer.json() == {"run_id": run_id, "status": "cancelling"}
        rest = [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
    assert rest[-1] == {"type": "cancelled"}
    assert provider.closed_early == 1


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "message"),
        ({"message": "   "}, "message"),
        ({"message": "hi", "context": [1]}, "context"),
        ({"message": "hi", "action": {"data": 1}}, "action.action"),
        ({"message": "hi", "model": "nobody:offers-this"}, "model"),
        ({"message": "hi", "include_reasoning": "very"}, "include_reasoning"),
        ({"message": "hi", "conversation_id": [1]}, "conversation_id"),
        ({"message": "hi", "interaction_type": 3}, "interaction_type"),
        ({"message": "hi", "action": "apply"}, "action"),
        ("just a string", "body"),
    ],
)
def test_bad_requests_are_400(serve: Serve, payload: Any, field: str) -> None:
    server = serve(tray_agent())
    with server.client() as client:
        response = client.post(PATH, json=payload)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field


def test_with_chat_hooks_suggestions_and_server_actions(serve: Serve) -> None:
    from agentstream.chat import ChatConfig, ChatHooks, ServerActions

    actions = ServerActions()

    @actions.register("apply_schema")
    async def apply_schema(call: Any) -> str:
        return f"Schema {call.data['schema_id']} applied."

    provider = ScriptedProvider(
        {
            "turns": [
                {
                    "text": 'Shall I?\n\nSUGGESTED_VALUES: [{"label": "Yes", "value": "yes"}]',
                }
            ]
        }
    )
    server = serve(Agent(model=provider), hooks=ChatHooks(ChatConfig(server_actions=actions)))
    with server.client() as client:
        _, text = stream_text(client, PATH, json={"message": "Set it up"})
        unknown = client.post(
            PATH,
            json={
                "message": "x",
                "interaction_type": "action_executed",
                "action": {"action": "drop_everything"},
            },
        )
        _, ran = stream_text(
            client,
            PATH,
            json={
                "message": "Apply Changes",
                "interaction_type": "action_executed",
                "action": {"action": "apply_schema", "data": {"schema_id": 123}},
            },
        )
    payload = datas(parse_sse(text))[-1]["payload"]
    assert payload["message"] == "Shall I?"
    assert payload["suggested_values"] == [{"label": "Yes", "value": "yes"}]
    assert unknown.status_code == 400
    assert unknown.json()["field"] == "action"
    assert datas(parse_sse(ran))[-1]["type"] == "complete"
    assert "Schema 123 applied." in provider.requests[-1].messages[-1].content  # type: ignore[union-attr]


def test_suggestion_markers_never_reach_the_streamed_text(serve: Serve) -> None:
    from agentstream.chat import ChatHooks

    chunks = [
        "Pick ",
        "one.",
        "\n",
        "SUGGESTED_",
        "VALUES: [",
        '{"label": "Yes", "value": "yes"}',
        "]",
    ]
    agent = Agent(model=ScriptedProvider({"turns": [{"text": chunks}]}))
    server = serve(agent, hooks=ChatHooks())
    with server.client() as client:
        _, text = stream_text(client, PATH, json={"message": "Choose"})
    frames = datas(parse_sse(text))
    assert "".join(f["text"] for f in frames if f["type"] == "text_delta") == "Pick one.\n"
    complete = frames[-1]["payload"]
    assert complete["message"] == "Pick one."
    assert complete["suggested_values"] == [{"label": "Yes", "value": "yes"}]
