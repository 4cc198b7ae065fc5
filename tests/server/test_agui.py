"""The AG-UI dialect (``POST /ag-ui``) against the official client: ``@ag-ui/client``'s
``HttpAgent``, unchanged, in Node, on a live server with a SQLite store and a scripted model.
The client verifies the event order itself; a stream it refuses fails the scenario."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import (
    RunAgentInput,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    TextMessageContentEvent,
    ToolCallArgsEvent,
)
from ag_ui.encoder import EventEncoder

from agentstream import Agent, tool
from agentstream.events import ReasoningDelta, RunCompleted, TextDelta, ToolCallDelta
from agentstream.messages import PendingToolCall
from agentstream.pending import ClientToolResult
from agentstream.principal import Principal
from agentstream.providers.scripted import ScriptedProvider
from agentstream.server.dialects.agui import AgUiEncoder, to_run_request
from agentstream.store import SqlConversationStore, create_engine, upgrade
from tests.agent.pending_helpers import Refunds, vendor_problem
from tests.node_clients import run_client
from tests.server.conftest import Serve
from tests.server.helpers import PROCESS_START, LiveServer, parse_sse, wait_until

SCRIPT: dict[str, Any] = {
    "rules": [
        {
            "match": "weather",
            "turns": [
                {
                    "reasoning": ["The user ", "wants weather."],
                    "text": ["Let me ", "check."],
                    "tool_calls": [
                        {"name": "get_weather", "id": "w1", "arguments": {"city": "Paris"}}
                    ],
                },
                {"text": ["It is ", "sunny."], "usage": {"input_tokens": 40, "output_tokens": 8}},
            ],
        },
        {
            "match": "colour",
            "turns": [
                {
                    "text": "Let me ask.",
                    "tool_calls": [
                        {"name": "lookup", "id": "c1", "arguments": {"q": "theme"}},
                        {"name": "pick_color", "id": "c2", "arguments": {"hint": "warm"}},
                    ],
                },
                {"text": "You picked it."},
            ],
        },
        {
            "match": "refund",
            "turns": [
                {
                    "tool_calls": [
                        {"name": "refund", "id": "r1", "arguments": {"amount": 500}},
                        {"name": "refund", "id": "r2", "arguments": {"amount": 5}},
                    ]
                },
                {"text": "Done."},
            ],
        },
        {"match": "slow", "turns": [{"text": ["tick "] * 40, "delay": 0.05}]},
        {"turns": [{"text": "You are welcome."}]},
    ]
}


@tool
def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city."""
    return {"city": city, "sky": "sunny"}


class Live:
    def __init__(self, server: LiveServer, store: SqlConversationStore, refunds: Refunds) -> None:
        self.server, self.store, self.refunds = server, store, refunds

    @property
    def provider(self) -> ScriptedProvider:
        provider = self.server.app.state.server.runner.agent.model
        assert isinstance(provider, ScriptedProvider)
        return provider

    def node(self, scenario: str, **env: str) -> dict[str, Any]:
        result = run_client(
            "agui_client.mjs",
            scenario,
            env={**os.environ, "BASE_URL": self.server.url, **env},
            timeout=PROCESS_START,
        )
        assert result.returncode == 0, result.stderr
        out: dict[str, Any] = json.loads(result.stdout)
        return out

    def settled(self) -> None:
        runner = self.server.app.state.server.runner
        assert wait_until(lambda: runner.running == 0)
        self.server.call(runner.settle())


@pytest.fixture
def live(serve: Serve, tmp_path: Path) -> Iterator[Live]:
    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'agui.db'}"))
    refunds = Refunds()
    agent = Agent(model=ScriptedProvider(SCRIPT), tools=[*refunds.tools, get_weather])
    server = serve(agent, store=store)
    server.call(upgrade(store.engine), timeout=60)
    yield Live(server, store, refunds)
    server.call(store.close())


def conversations(live: Live) -> list[dict[str, Any]]:
    with live.server.client() as client:
        items = client.get("/api/conversations").json()["items"]
        return [client.get(f"/api/conversations/{c['id']}").json() for c in items]


def test_text_reasoning_and_a_server_tool_pass_the_clients_verification(live: Live) -> None:
    out = live.node("stream")
    first_run = out["types"][: out["types"].index("RUN_FINISHED") + 1]
    assert first_run == [
        "RUN_STARTED",
        "STATE_SNAPSHOT",
        "STEP_STARTED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STEP_FINISHED",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STEP_FINISHED",
        "RUN_FINISHED",
    ]
    events = out["events"]
    assert events[1]["snapshot"] == {"unit": "celsius"}
    assert out["result"] == {"message": "Let me check.\n\nIt is sunny."}
    finished = next(e for e in events if e["type"] == "RUN_FINISHED")
    assert finished["usage"] == [
        {
            "provider": "scripted",
            "model": "script",
            "inputTokens": 40,
            "outputTokens": 8,
            "totalTokens": 48,
        }
    ]
    by_role = [(m["role"], m.get("content")) for m in out["messages"]]
    assert ("user", "Thanks") in by_role and by_role[-1] == ("assistant", "You are welcome.")
    called = [m for m in out["messages"] if m.get("toolCalls")]
    assert called[0]["toolCalls"][0]["function"] == {
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    }
    result = next(m for m in out["messages"] if m["role"] == "tool")
    assert json.loads(result["content"]) == {"city": "Paris", "sky": "sunny"}
    # One thread, one stored conversation, whose second run continued the first.
    [stored] = conversations(live)
    assert [m["content"] for m in stored["messages"] if m["role"] == "user"] == [
        "What is the weather in Paris?",
        "Thanks",
    ]


def test_a_frontend_tool_round_trip(live: Live) -> None:
    out = live.node("frontend")
    finished = [e for e in out["events"] if e["type"] == "RUN_FINISHED"]
    assert finished[0]["outcome"] == {"type": "success", "pendingToolCallIds": ["c2"]}
    assert finished[1]["outcome"] == {"type": "success"}
    assert out["messages"][-1]["content"] == "You picked it."
    # The server ran its own call of that turn; the model got both results in one message.
    sent = live.provider.requests[-1].messages
    assert vendor_problem(sent) is None
    joined = sent[-1]
    assert [r.content for r in joined.results] == ["found theme", '"teal (warm)"']  # type: ignore[union-attr]
    assert {t.name for t in live.provider.requests[0].tools} >= {"pick_color", "get_weather"}


@pytest.mark.parametrize("approve", [True, False])
def test_an_approval_interrupt_and_its_resume(live: Live, approve: bool) -> None:
    out = live.node("approval", APPROVE="1" if approve else "0")
    [interrupt] = out["interrupts"]
    assert interrupt["id"] == interrupt["toolCallId"] == "r1"
    assert interrupt["reason"] == "tool_approval"
    assert interrupt["responseSchema"]["required"] == ["approved"]
    finished = [e for e in out["events"] if e["type"] == "RUN_FINISHED"]
    assert finished[0]["outcome"]["type"] == "interrupt"
    assert finished[1]["outcome"] == {"type": "success"}
    assert out["pendingInterrupts"] == []
    assert out["messages"][-1]["content"] == "Done."
    assert live.refunds.made == ([5, 500] if approve else [5])
    r1 = [e for e in out["events"] if e["type"] == "TOOL_CALL_RESULT" and e["toolCallId"] == "r1"]
    content = json.loads(r1[0]["content"]) if not approve else r1[0]["content"]
    assert content == (
        "refunded 500.0"
        if approve
        else {
            "denied": True,
            "message": "The user did not approve this call.",
            "reason": "too much",
        }
    )


def test_abort_run_stops_the_run_when_the_client_asks_for_cancel(live: Live) -> None:
    out = live.node("abort", FORWARDED_PROPS=json.dumps({"onDisconnect": "cancel"}))
    assert out["aborted"] is True
    live.settled()
    assert live.provider.closed_early == 1  # the model's stream was closed, not read out
    [stored] = conversations(live)
    answer = stored["messages"][-1]
    assert answer["role"] == "assistant" and answer["status"] == "interrupted"
    assert answer["content"].count("tick") < 40


def test_abort_run_leaves_a_detached_run_to_finish_and_be_stored(live: Live) -> None:
    out = live.node("abort")
    assert out["aborted"] is True
    live.settled()
    assert live.provider.closed_early == 0
    [stored] = conversations(live)
    answer = stored["messages"][-1]
    assert answer["status"] == "complete" and answer["content"].count("tick") == 40


def post(live: Live, body: dict[str, Any]) -> Any:
    with live.server.client() as client:
        return client.post("/ag-ui", json=body)


def test_inputs_the_server_cannot_serve_are_400_naming_the_field(live: Live) -> None:
    base = {"threadId": "t1", "runId": "r", "messages": []}
    user = [{"id": "u", "role": "user", "content": "refund"}]
    cases = [
        ({"runId": "r", "messages": []}, "threadId"),
        (base, "messages"),
        (
            {**base, "messages": user, "resume": [{"interruptId": "x", "status": "resolved"}]},
            "resume.0.payload",
        ),
        (
            {**base, "resume": [{"interruptId": "x", "status": "resolved", "payload": True}]},
            "resume",
        ),
        (
            {**base, "messages": user, "forwardedProps": {"onDisconnect": "later"}},
            "forwardedProps.onDisconnect",
        ),
        (
            {**base, "messages": user, "tools": [{"name": "refund", "description": "mine"}]},
            "tools.0.name",
        ),
        (
            {**base, "messages": [{"id": "u", "role": "user", "content": [{"type": "image"}]}]},
            "messages",
        ),
    ]
    for body, field in cases:
        response = post(live, body)
        assert response.status_code == 400, (body, response.text)
        assert response.json()["field"].startswith(field), (body, response.json())


def test_frames_are_what_the_packages_encoder_writes() -> None:
    encoder = AgUiEncoder({"thread_id": "t", "run_id": "r"})
    from agentstream.events import PartStarted

    encoder.encode(PartStarted(run_id="run", seq=0, part=0, kind="text"))
    official = EventEncoder()
    [(_, text)] = encoder.encode(TextDelta(run_id="run", seq=1, text='say "hi"\n'))
    expected = TextMessageContentEvent(message_id="run-0", delta='say "hi"\n')
    assert f"data: {text}\n\n" == official.encode(expected)
    [(_, args)] = encoder.encode(ToolCallDelta(run_id="run", seq=2, call_id="c", delta='{"a'))
    assert f"data: {args}\n\n" == official.encode(ToolCallArgsEvent(tool_call_id="c", delta='{"a'))
    encoder.encode(PartStarted(run_id="run", seq=3, part=1, kind="reasoning"))
    [(kind, _)] = encoder.encode(ReasoningDelta(run_id="run", seq=4, text="hm"))
    assert kind == "REASONING_MESSAGE_CONTENT"
    pending = PendingToolCall(call_id="x", name="refund", waiting_for="approval")
    [*_, (_, finished)] = encoder.encode(
        RunCompleted(run_id="run", seq=5, message="", pending_calls=(pending,))
    )
    event = RunFinishedEvent.model_validate_json(finished)
    assert isinstance(event.outcome, RunFinishedInterruptOutcome)
    assert parse_sse(f"data: {finished}\n\n")[0].data["outcome"]["interrupts"][0]["id"] == "x"


def test_only_what_follows_the_last_assistant_message_is_read() -> None:
    alice = Principal(user_id="alice")
    body = RunAgentInput.model_validate(
        {
            "threadId": "t",
            "runId": "r",
            "messages": [
                {"id": "1", "role": "user", "content": "old question"},
                {
                    "id": "2",
                    "role": "assistant",
                    "toolCalls": [
                        {
                            "id": "a",
                            "type": "function",
                            "function": {"name": "x", "arguments": "{}"},
                        },
                        {
                            "id": "b",
                            "type": "function",
                            "function": {"name": "y", "arguments": "{}"},
                        },
                    ],
                },
                {"id": "a-result", "role": "tool", "toolCallId": "a", "content": "from the server"},
                {
                    "id": "3",
                    "role": "tool",
                    "toolCallId": "b",
                    "content": "",
                    "error": "denied by OS",
                },
                {"id": "4", "role": "user", "content": [{"type": "text", "text": "Also"}]},
                {"id": "5", "role": "user", "content": "this"},
            ],
            "context": [{"description": "page", "value": "/billing"}],
        }
    )
    request, files = to_run_request(body, alice)
    assert (request.message, files) == ("Also\n\nthis", [])
    assert request.answers is not None
    assert request.answers.results == (
        ClientToolResult(call_id="b", content='{"error": "denied by OS"}', is_error=True),
    )
    assert request.context == [{"description": "page", "value": "/billing"}]
    assert request.conversation_id == to_run_request(body, alice)[0].conversation_id
    bobs, _ = to_run_request(body, Principal(user_id="bob"))
    assert request.conversation_id != bobs.conversation_id


def test_a_client_list_that_differs_from_the_stored_thread_branches_it(live: Live) -> None:
    result = live.node("branches")
    live.settled()
    requests = [
        [getattr(m, "content", None) or getattr(m, "text", "") for m in r.messages]
        for r in live.provider.requests
    ]
    answer = "You are welcome."
    # The edit: the model sees the stored thread up to the edited question, then the new text.
    assert requests[-2] == ["Hi", answer, "Tell a joke"]
    # The list cut after the question: the same question answered again, as stored.
    assert requests[-1] == ["Hi", answer, "Tell a joke"]
    assert result["types"].count("RUN_ERROR") == 0
    [detail] = conversations(live)
    shown = detail["messages"]
    assert [m["content"] for m in shown] == ["Hi", answer, "Tell a joke", answer]
    assert len(shown[2]["siblings"]) == 2 and len(shown[3]["siblings"]) == 2
    # The old branch is kept: switching back shows it whole.
    with live.server.client() as client:
        old = client.put(
            f"/api/conversations/{detail['id']}/active_leaf",
            json={"message_id": shown[2]["siblings"][0]},
        ).json()
    assert [m["content"] for m in old["messages"]] == [
        "Hi",
        answer,
        "Tell a jkoe",
        answer,
        "Never mind",
        answer,
    ]
