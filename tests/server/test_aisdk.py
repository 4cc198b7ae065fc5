"""``ai-sdk``: the Vercel AI SDK's own client (``DefaultChatTransport``, ``readUIMessageStream``,
from ``tests/js``) against a real server, and the request errors it can meet."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentstream import Agent
from agentstream.events import Payload
from agentstream.messages import AssistantMessage, UserMessage
from agentstream.providers.scripted import ScriptedProvider
from agentstream.tools import Progress, ToolResult, tool
from tests import node_clients
from tests.server.conftest import Serve
from tests.server.helpers import LiveServer, bearer, stream_text, token

PATH = "/ai-sdk/chat"


@tool
async def weather(city: str) -> AsyncIterator[Progress | ToolResult]:
    """The weather in a city."""
    yield Progress(stage="asking", message="Asking the met office...", fraction=0.5)
    await asyncio.sleep(0)
    forecast = {"city": city, "sky": "sunny"}
    yield ToolResult(
        text="Sunny.", output=forecast, payload=Payload(kind="forecast", data=forecast)
    )


@tool
def radar(city: str) -> str:
    """Rain radar."""
    raise ConnectionError("radar offline")


SCRIPT = {
    "rules": [
        {
            "match": "think",
            "turns": [
                {
                    "reasoning": ["Let me ", "think."],
                    "text": ["Hello ", "there."],
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                }
            ],
        },
        {
            "match": "weather",
            "turns": [
                {
                    "text": ["Checking."],
                    "tool_calls": [
                        {"id": "c1", "name": "weather", "fragments": ['{"city":', ' "Oslo"}']},
                        {"id": "c2", "name": "radar", "arguments": {"city": "Oslo"}},
                    ],
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                },
                {"text": ["Sunny ", "in Oslo."], "usage": {"input_tokens": 20, "output_tokens": 3}},
            ],
        },
        {"match": "count", "turns": [{"text": ["tick "] * 40, "delay": 0.03}]},
        {
            "match": "broken",
            "turns": [
                {"tool_calls": [{"id": "b1", "name": "weather", "fragments": ['{"city":']}]},
                {"text": ["Sorry."]},
            ],
        },
        {"turns": [{"text": ["Noted."]}]},
    ]
}


def chat_agent() -> tuple[Agent, ScriptedProvider]:
    provider = ScriptedProvider(SCRIPT)
    return Agent(model=provider, tools=[weather, radar]), provider


@pytest.fixture
def store(tmp_path: Path) -> Any:
    from agentstream.store import SqlConversationStore, create_engine

    return SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'chat.db'}"))


@pytest.fixture
def server(serve: Serve, store: Any) -> tuple[LiveServer, ScriptedProvider]:
    from agentstream.store import upgrade

    agent, provider = chat_agent()
    live = serve(agent, store=store)
    live.call(upgrade(store.engine), timeout=60)
    return live, provider


def run_client(
    live: LiveServer, chat_id: str, *steps: dict[str, Any], only_last: bool = False
) -> list[dict[str, Any]]:
    plan = json.dumps({"chatId": chat_id, "steps": list(steps), "onlyLast": only_last})
    result = node_clients.run_client(
        "aisdk_client.mjs", plan, env={"BASE_URL": live.url, "PATH": "/usr/bin:/bin"}
    )
    assert result.returncode == 0, result.stderr
    results: list[dict[str, Any]] = json.loads(result.stdout)
    return results


def kinds(result: dict[str, Any]) -> list[str]:
    return [chunk["type"] for chunk in result["chunks"]]


def parts(result: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = result["message"]["parts"]
    return found


def stored(live: LiveServer) -> dict[str, Any]:
    """The one conversation of the test's store, as the REST API shows it."""
    with live.client() as client:
        items = client.get("/api/conversations").json()["items"]
        assert len(items) == 1
        detail: dict[str, Any] = client.get(f"/api/conversations/{items[0]['id']}").json()
    return detail


def test_text_and_reasoning(server: tuple[LiveServer, ScriptedProvider]) -> None:
    live, _ = server
    [result] = run_client(live, "chat-1", {"send": "Please think"})
    assert result["errors"] == []
    assert kinds(result) == [
        "start",
        "start-step",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
        "text-delta",
        "text-end",
        "message-metadata",
        "finish-step",
        "finish",
    ]
    message = result["message"]
    assert message["role"] == "assistant"
    assert message["id"] == result["chunks"][0]["messageId"]
    assert parts(result) == [
        {"type": "step-start"},
        {"type": "reasoning", "id": "reasoning-0", "text": "Let me think.", "state": "done"},
        {"type": "text", "text": "Hello there.", "state": "done"},
    ]
    usage = {
        "inputTokens": 10,
        "outputTokens": 5,
        "totalTokens": 15,
        "reasoningTokens": 0,
        "cachedInputTokens": 0,
    }
    assert message["metadata"] == {"usage": usage}
    assert result["chunks"][-1] == {
        "type": "finish",
        "finishReason": "stop",
        "messageMetadata": {"usage": usage},
    }


def test_tools_progress_payloads_and_a_failing_tool(
    server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, _ = server
    [result] = run_client(live, "chat-tools", {"send": "What's the weather?"})
    assert result["errors"] == []
    chunks = result["chunks"]
    assert [
        c["inputTextDelta"]
        for c in chunks
        if c.get("toolCallId") == "c1" and c["type"] == "tool-input-delta"
    ] == [
        '{"city":',
        ' "Oslo"}',
    ]
    assert kinds(result).count("start-step") == kinds(result).count("finish-step") == 2
    shown = parts(result)
    assert [p["type"] for p in shown] == [
        "step-start",
        "text",
        "tool-weather",
        "tool-radar",
        "data-tool-progress",
        "data-forecast",
        "step-start",
        "text",
    ]
    tool_weather, tool_radar = shown[2], shown[3]
    assert tool_weather["toolCallId"] == "c1"
    assert tool_weather["state"] == "output-available"
    assert tool_weather["input"] == {"city": "Oslo"}
    assert tool_weather["output"] == {"city": "Oslo", "sky": "sunny"}
    assert tool_radar["state"] == "output-error"
    assert tool_radar["input"] == {"city": "Oslo"}
    assert "radar offline" in tool_radar["errorText"]
    progress = shown[4]
    assert progress["id"] == "c1"
    assert progress["data"]["message"] == "Asking the met office..."
    assert progress["data"]["fraction"] == 0.5
    assert shown[5]["data"] == {"city": "Oslo", "sky": "sunny"}
    assert shown[7]["text"] == "\n\nSunny in Oslo."
    assert result["message"]["metadata"]["usage"]["inputTokens"] == 30


def test_arguments_that_are_not_json_are_an_input_error(
    server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, _ = server
    [result] = run_client(live, "chat-broken", {"send": "broken arguments"})
    assert result["errors"] == []
    chunks = [c for c in result["chunks"] if c.get("toolCallId") == "b1"]
    assert [c["type"] for c in chunks] == [
        "tool-input-start",
        "tool-input-delta",
        "tool-input-error",
        "tool-output-error",
    ]
    assert chunks[2]["input"] == '{"city":'
    call = next(p for p in parts(result) if p["type"] == "tool-weather")
    assert call["state"] == "output-error"
    assert parts(result)[-1]["text"] == "Sorry."


def test_the_conversation_continues_from_the_stored_history(
    server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, provider = server
    first, second = run_client(live, "chat-2", {"send": "Please think"}, {"send": "Thanks"})
    assert parts(second)[-1]["text"] == "Noted."
    assert list(provider.requests[-1].messages) == [
        UserMessage(content="Please think"),
        AssistantMessage(
            text="Hello there.", reasoning=provider.requests[-1].messages[1].reasoning
        ),
        UserMessage(content="Thanks"),
    ]
    assert [m["role"] for m in stored(live)["messages"]] == ["user", "assistant"] * 2


def test_a_client_that_sends_only_the_last_message(
    server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, provider = server
    first, second = run_client(
        live, "chat-last", {"send": "Please think"}, {"send": "Thanks"}, only_last=True
    )
    assert parts(second)[-1]["text"] == "Noted."
    assert [type(m).__name__ for m in provider.requests[-1].messages] == [
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
    ]


def test_regenerate_replaces_the_last_answer(
    server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, provider = server
    first, again = run_client(live, "chat-3", {"send": "Hi"}, {"regenerate": True})
    assert again["errors"] == []
    assert parts(again)[-1]["text"] == "Noted."
    assert again["message"]["id"] != first["message"]["id"]
    assert list(provider.requests[-1].messages) == [UserMessage(content="Hi")]
    messages = stored(live)["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "Hi"),
        ("assistant", "Noted."),
    ]
    assert messages[1]["run_id"] == again["message"]["id"]


def test_resume_after_a_dropped_connection(
    server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, _ = server
    dropped, resumed, after = run_client(
        live, "chat-4", {"send": "count", "dropAfter": 2}, {"resume": True}, {"resume": True}
    )
    assert dropped["errors"] == []
    assert parts(dropped)[-1]["text"] == "tick tick "
    assert resumed["errors"] == []
    assert resumed["message"]["id"] == dropped["message"]["id"]
    assert kinds(resumed)[0] == "start" and kinds(resumed)[-1] == "finish"
    assert parts(resumed)[-1] == {
        "type": "text",
        "text": "tick " * 40,
        "state": "done",
    }
    assert after["status"] == 204
    assert stored(live)["messages"][-1]["content"] == "tick " * 40  # exactly as streamed


def test_stop_ends_the_stream_with_abort_and_keeps_the_partial_answer(
    server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, _ = server
    [stopped] = run_client(live, "chat-5", {"send": "count", "stopAfter": 1})
    assert stopped["errors"] == []
    assert stopped["chunks"][-1] == {"type": "abort", "reason": "user_cancelled"}
    text = parts(stopped)[-1]["text"]
    assert text.startswith("tick ") and len(text) < len("tick " * 40)
    answer = stored(live)["messages"][-1]
    assert answer["status"] == "interrupted"
    assert text.startswith(answer["content"])
    with live.client() as client:
        assert client.post(f"{PATH}/chat-5/stop").status_code == 404
        assert client.get(f"{PATH}/chat-5/stream").status_code == 204


def test_the_wire_names_the_protocol_and_ends_with_done(
    server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, _ = server
    body = {"id": "chat-6", "messages": [user("Hi")], "trigger": "submit-message"}
    with live.client() as client:
        response, text = stream_text(client, PATH, json=body)
    assert response.status_code == 200
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["content-type"].startswith("text/event-stream")
    datas = [line[6:] for line in text.split("\n") if line.startswith("data: ")]
    assert datas[-1] == "[DONE]"
    assert json.loads(datas[-2])["type"] == "finish"


def test_a_failed_run_is_an_error_then_finish(serve: Serve) -> None:
    provider = ScriptedProvider(
        {"turns": [{"text": ["Hel", "lo"], "error": {"kind": "overloaded", "after": 1}}]}
    )
    live = serve(Agent(model=provider))
    [result] = run_client(live, "chat-7", {"send": "Hi"})
    assert kinds(result)[-2:] == ["error", "finish"]
    assert result["chunks"][-1]["finishReason"] == "error"
    assert len(result["errors"]) == 1
    assert parts(result)[-1]["text"] == "Hel"


def user(text: str) -> dict[str, Any]:
    return {"id": "m1", "role": "user", "parts": [{"type": "text", "text": text}]}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"messages": [user("Hi")]}, "id"),
        ({"id": "", "messages": [user("Hi")]}, "id"),
        ({"id": "x" * 513, "messages": [user("Hi")]}, "id"),
        ({"id": "c"}, "messages"),
        ({"id": "c", "messages": []}, "messages"),
        ({"id": "c", "messages": [{"role": "user"}]}, "messages.0.parts"),
        ({"id": "c", "messages": [{"role": "robot", "parts": []}]}, "messages.0.role"),
        (
            {"id": "c", "messages": [user("Hi"), {"role": "assistant", "parts": []}]},
            "messages.1.role",
        ),
        (
            {"id": "c", "messages": [{"role": "user", "parts": [{"type": "file"}]}]},
            "messages.0.parts.0.url",
        ),
        ({"id": "c", "messages": [user("   ")]}, "messages.0.parts"),
        ({"id": "c", "messages": [user("Hi")], "trigger": "resume-stream"}, "trigger"),
        ({"id": "c", "message": {"role": "user", "parts": []}}, "message.parts"),
        ({"id": "c", "message": {"role": "assistant", "parts": []}}, "message.role"),
        (
            {
                "id": "c",
                "messages": [user("Hi"), {"role": "assistant", "parts": []}],
                "trigger": "regenerate-message",
            },
            "messages.1.role",
        ),
    ],
)
def test_bad_requests_name_the_field(serve: Serve, body: dict[str, Any], field: str) -> None:
    live = serve(chat_agent()[0])
    with live.client() as client:
        response = client.post(PATH, json=body)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field


def test_resume_and_stop_without_an_answer_in_progress(serve: Serve) -> None:
    live = serve(chat_agent()[0])
    with live.client() as client:
        assert client.get(f"{PATH}/nothing/stream").status_code == 204
        stop = client.post(f"{PATH}/nothing/stop")
    assert stop.status_code == 404
    assert stop.json()["detail"] == "No answer is in progress in this chat"


def test_text_held_back_as_a_possible_marker_comes_as_a_part_of_its_own(serve: Serve) -> None:
    from agentstream.chat import ChatHooks

    provider = ScriptedProvider({"turns": [{"text": ["All good.\n", "SUGGESTED_"]}]})
    live = serve(Agent(model=provider), hooks=ChatHooks())
    [result] = run_client(live, "chat-8", {"send": "Hi"})
    assert result["errors"] == []
    texts = [p["text"] for p in parts(result) if p["type"] == "text"]
    assert texts == ["All good.\n", "SUGGESTED_"]


def test_regenerate_while_an_answer_is_in_progress_is_refused(
    server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, _ = server
    body = {"id": "chat-9", "messages": [user("count")]}
    again = {**body, "trigger": "regenerate-message"}
    with live.client() as client, client.stream("POST", PATH, json=body) as response:
        frames = response.iter_lines()
        assert any('"text-delta"' in line for line in frames)
        refused = client.post(PATH, json=again)
        assert refused.status_code == 409
        busy = refused.json()
        assert busy["detail"].startswith("An answer is in progress in this conversation")
        assert busy["stop"] == f"/api/chat/runs/{busy['run_id']}/cancel"
        assert busy["run_id"] == response.headers["x-run-id"]
        assert client.post(f"{PATH}/chat-9/stop").status_code == 202
        rest = [line for line in frames if line.startswith("data: ")]
    assert rest[-1] == "data: [DONE]"
    assert json.loads(rest[-2][6:]) == {"type": "abort", "reason": "user_cancelled"}


@tool(requires_approval=True)
def refund(order: str) -> dict[str, Any]:
    """Refund an order (a person approves it first)."""
    return {"order": order, "refunded": True}


APPROVAL_SCRIPT = {
    "rules": [
        {
            "match": "refund",
            "turns": [
                {
                    "text": ["I'll refund it."],
                    "tool_calls": [{"id": "r1", "name": "refund", "arguments": {"order": "A7"}}],
                },
                {"text": ["Done."]},
            ],
        }
    ]
}


def approval_chat(
    live: LiveServer, chat_id: str, approve: bool, reason: str = "", reload: bool = False
) -> Any:
    plan = json.dumps(
        {
            "chatId": chat_id,
            "text": "Please refund A7",
            "approve": approve,
            "reason": reason,
            "reloadBeforeAnswer": reload,
        }
    )
    result = node_clients.run_client(
        "aisdk_chat.mjs", plan, env={"BASE_URL": live.url, "PATH": "/usr/bin:/bin"}
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def approval_server(serve: Serve, store: Any) -> tuple[LiveServer, ScriptedProvider]:
    from agentstream.store import upgrade

    provider = ScriptedProvider(APPROVAL_SCRIPT)
    live = serve(Agent(model=provider, tools=[refund]), store=store)
    live.call(upgrade(store.engine), timeout=60)
    return live, provider


def test_a_tool_waits_for_approval_and_the_chat_continues_when_approved(
    approval_server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, provider = approval_server
    found = approval_chat(live, "chat-approve", approve=True)
    assert found["errors"] == []
    asked = found["afterAsk"][-1]
    refund_part = next(p for p in asked["parts"] if p["type"] == "tool-refund")
    assert refund_part["state"] == "approval-requested"
    assert refund_part["input"] == {"order": "A7"}
    assert refund_part["approval"] == {"id": "r1"}
    # The SDK sent the approval by itself, and the answer went on in the same message.
    assert [r.get("trigger") for r in found["requests"]] == ["submit-message"] * 2
    messages = found["afterAnswer"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["id"] == asked["id"]
    done = next(p for p in messages[1]["parts"] if p["type"] == "tool-refund")
    assert done["state"] == "output-available"
    assert done["output"] == {"order": "A7", "refunded": True}
    assert messages[1]["parts"][-1]["text"] == "Done."
    assert [m["content"] for m in stored(live)["messages"]][0] == "Please refund A7"


def test_an_approval_asked_before_a_reload_is_answered_after_it(
    approval_server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, _ = approval_server
    found = approval_chat(live, "chat-approve-reload", approve=True, reload=True)
    assert found["errors"] == []
    loaded = found["afterAsk"][-1]
    asking = next(p for p in loaded["parts"] if p["type"] == "tool-refund")
    assert asking == {
        "type": "tool-refund",
        "toolCallId": "r1",
        "state": "approval-requested",
        "input": {"order": "A7"},
        "approval": {"id": "r1"},
    }
    answer = found["afterAnswer"][-1]
    assert answer["id"] == loaded["id"]
    done = next(p for p in answer["parts"] if p["type"] == "tool-refund")
    assert done["state"] == "output-available"
    assert answer["parts"][-1]["text"] == "Done."


def test_a_denied_tool_is_output_denied_and_the_model_reads_the_reason(
    approval_server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, provider = approval_server
    found = approval_chat(live, "chat-deny", approve=False, reason="Not this one")
    assert found["errors"] == []
    messages = found["afterAnswer"]
    denied = next(p for p in messages[-1]["parts"] if p["type"] == "tool-refund")
    assert denied["state"] == "output-denied"
    assert denied["approval"]["approved"] is False
    result = provider.requests[-1].messages[-1]
    assert "Not this one" in result.results[0].content


def responded(call_id: Any, approval: Any) -> dict[str, Any]:
    part = {"type": "tool-refund", "toolCallId": call_id, "state": "approval-responded"}
    return {"id": "a1", "role": "assistant", "parts": [part | {"approval": approval}]}


@pytest.mark.parametrize(
    ("last", "field", "detail"),
    [
        (
            responded("r9", {"id": "r9", "approved": True}),
            "messages.1.parts",
            "no tool calls are waiting for an answer",
        ),
        (responded("r9", {"id": "r9"}), "messages.1.parts.0.approval", None),
        (
            responded("r9", {"approved": True, "reason": 3}),
            "messages.1.parts.0.approval.reason",
            None,
        ),
        (responded(None, {"approved": True}), "messages.1.parts.0.toolCallId", None),
    ],
)
def test_approval_responses_that_do_not_fit_name_the_field(
    server: tuple[LiveServer, ScriptedProvider], last: Any, field: str, detail: str | None
) -> None:
    live, _ = server
    body = {"id": "chat-bad", "messages": [user("Please refund A7"), last]}
    with live.client() as client:
        response = client.post(PATH, json=body)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field
    if detail is not None:
        assert response.json()["detail"] == f"{field}: {detail}"


def without_state(part: dict[str, Any]) -> dict[str, Any]:
    """A part as stored and as streamed compare without the stream's bookkeeping."""
    return {k: v for k, v in part.items() if k not in ("id", "providerMetadata")}


def test_the_stored_chat_loads_as_the_messages_the_client_streamed(
    server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, _ = server
    first, second, loaded = run_client(
        live, "chat-load", {"send": "Please think"}, {"send": "What's the weather?"}, {"load": True}
    )
    assert loaded["status"] == 200 and loaded["errors"] == []
    messages = loaded["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"] * 2
    assert messages[0]["parts"] == [{"type": "text", "text": "Please think", "state": "done"}]
    for streamed, stored_message in ((first, messages[1]), (second, messages[3])):
        assert stored_message["id"] == streamed["message"]["id"]
        kept = [p for p in parts(streamed) if not p["type"].startswith("data-")]
        assert [without_state(p) for p in stored_message["parts"] if p["type"] != "step-start"] == [
            without_state(p) for p in kept if p["type"] != "step-start"
        ]
    assert messages[3]["metadata"] == {"status": "complete"}


def test_an_approved_answer_loads_as_one_message(
    approval_server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, _ = approval_server
    found = approval_chat(live, "chat-approved-load", approve=True)
    [loaded] = run_client(live, "chat-approved-load", {"load": True})
    assert loaded["errors"] == []
    user_message, answer = loaded["messages"]
    streamed = found["afterAnswer"][-1]
    assert answer["id"] == streamed["id"]
    # The call is stored with the run that ran it: it opens the continued step.
    assert [p["type"] for p in answer["parts"]] == [
        "step-start",
        "text",
        "step-start",
        "tool-refund",
        "text",
    ]
    assert answer["parts"][3]["output"] == {"order": "A7", "refunded": True}
    assert answer["parts"][3]["state"] == "output-available"


def test_messages_of_a_chat_not_started_and_of_a_server_without_a_store(
    server: tuple[LiveServer, ScriptedProvider], serve: Serve
) -> None:
    live, _ = server
    without = serve(chat_agent()[0])
    with live.client() as client, without.client() as other:
        assert client.get(f"{PATH}/nothing-yet/messages").json() == []
        missing = other.get(f"{PATH}/nothing-yet/messages")
    assert missing.status_code == 404
    assert missing.json()["detail"] == "This server keeps no conversations"


def test_chat_ids_are_the_callers_own(serve: Serve, store: Any) -> None:
    from agentstream.store import upgrade

    agent, _ = chat_agent()
    live = serve(agent, store=store, auth=True)
    live.call(upgrade(store.engine), timeout=60)
    alice, bob = bearer(token("alice")), bearer(token("bob"))
    body = {"id": "chat-1", "messages": [user("count")]}
    with live.client() as client:
        assert client.post(PATH, json=body).status_code == 401
        with client.stream("POST", PATH, json=body, headers=alice) as response:
            lines = response.iter_lines()
            assert any('"text-delta"' in line for line in lines)
            # Bob's chat-1 is another conversation: nothing of Alice's is found or stopped.
            assert client.get(f"{PATH}/chat-1/stream", headers=bob).status_code == 204
            assert client.post(f"{PATH}/chat-1/stop", headers=bob).status_code == 404
            assert client.get(f"{PATH}/chat-1/messages", headers=bob).json() == []
            assert client.post(f"{PATH}/chat-1/stop", headers=alice).status_code == 202
            list(lines)
        mine = client.get(f"{PATH}/chat-1/messages", headers=alice).json()
    assert [m["role"] for m in mine] == ["user", "assistant"]
    assert mine[1]["metadata"] == {"status": "interrupted"}


def test_a_reload_mid_answer_loads_the_chat_and_resumes_the_answer(
    server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, _ = server
    plan = json.dumps({"chatId": "chat-reload", "text": "count", "reload": True})
    result = node_clients.run_client(
        "aisdk_chat.mjs", plan, env={"BASE_URL": live.url, "PATH": "/usr/bin:/bin"}
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["errors"] == []
    cut = found["beforeReload"][-1]
    assert cut["role"] == "assistant"
    resumed = found["afterResume"]
    assert [m["role"] for m in resumed] == ["user", "assistant"]
    assert resumed[1]["id"] == cut["id"]
    texts = [p["text"] for p in resumed[1]["parts"] if p["type"] == "text"]
    assert texts == ["tick " * 40]


def edit_chat(live: LiveServer, chat_id: str, texts: list[str], at: int, text: str) -> Any:
    plan = json.dumps({"chatId": chat_id, "edit": {"texts": texts, "at": at, "text": text}})
    result = node_clients.run_client(
        "aisdk_chat.mjs", plan, env={"BASE_URL": live.url, "PATH": "/usr/bin:/bin"}
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def texts_of(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (m["role"], "".join(p.get("text", "") for p in m["parts"] if p["type"] == "text"))
        for m in messages
    ]


def test_send_message_with_a_message_id_edits_it_and_regenerate_answers_it_again(
    server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, provider = server
    shown = edit_chat(live, "chat-edit", ["Hi", "Tell a jkoe", "Never mind"], 1, "Tell a joke")
    assert shown["errors"] == []
    # The edit: the client's list ends with the edited message, and the model sees exactly
    # the edited path (what followed the old question is on the old branch).
    assert [r["trigger"] for r in shown["requests"]][-2:] == [
        "submit-message",
        "regenerate-message",
    ]
    edit_request = shown["requests"][-2]
    assert edit_request["messageId"] == shown["sent"][2]["id"]
    asked = [list(r.messages) for r in provider.requests]
    assert asked[-2] == [
        UserMessage(content="Hi"),
        AssistantMessage(text="Noted."),
        UserMessage(content="Tell a joke"),
    ]
    assert texts_of(shown["afterEdit"]) == [
        ("user", "Hi"),
        ("assistant", "Noted."),
        ("user", "Tell a joke"),
        ("assistant", "Noted."),
    ]
    # regenerate(): the same question answered again, as stored.
    assert asked[-1] == asked[-2]
    assert texts_of(shown["loaded"]) == texts_of(shown["afterRegenerate"])
    assert shown["loaded"][-1]["id"] == shown["afterRegenerate"][-1]["id"]
    assert shown["loaded"][-1]["id"] != shown["afterEdit"][-1]["id"]
    # Both branches are kept: the question has a sibling, and so does the answer.
    detail = stored(live)
    assert [m["content"] for m in detail["messages"]] == ["Hi", "Noted.", "Tell a joke", "Noted."]
    question, answer = detail["messages"][2], detail["messages"][3]
    assert len(question["siblings"]) == 2 and question["siblings"][1] == question["id"]
    assert answer["siblings"] == [shown["afterEdit"][-1]["id"], answer["id"]]
    with live.client() as client:
        old = client.put(
            f"/api/conversations/{detail['id']}/active_leaf",
            json={"message_id": question["siblings"][0]},
        ).json()
    assert [m["content"] for m in old["messages"]] == [
        "Hi",
        "Noted.",
        "Tell a jkoe",
        "Noted.",
        "Never mind",
        "Noted.",
    ]


def test_editing_a_message_the_chat_does_not_have_is_refused(
    server: tuple[LiveServer, ScriptedProvider],
) -> None:
    live, _ = server
    run_client(live, "chat-edit-2", {"send": "Hi"})
    body = {
        "id": "chat-edit-2",
        "message": user("Hello"),
        "trigger": "submit-message",
        "messageId": "not-a-stored-id",
    }
    with live.client() as client:
        refused = client.post(PATH, json=body)
    assert refused.status_code == 400
    assert refused.json()["field"] == "messageId"
