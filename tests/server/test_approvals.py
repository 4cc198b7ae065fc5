"""Tool calls that need a person's approval through the chat tray (``POST /api/chat/stream``),
ops agent (``POST /agent/stream``) and workflow assistant (``POST /v1/agent/chat``)
protocols: shown on the run's last frames, answered by the next request's ``approvals``, on
a live server with a SQLite store and a scripted model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentstream import Agent
from agentstream.events import RunCompleted
from agentstream.messages import PendingToolCall, ToolResultsMessage, UserMessage
from agentstream.providers.scripted import ScriptedProvider
from agentstream.server.dialects.ops import OpsEncoder
from agentstream.server.dialects.tray import TrayEncoder
from agentstream.store import SqlConversationStore, create_engine, upgrade
from tests.agent.pending_helpers import Refunds, script, vendor_problem
from tests.server.conftest import Serve
from tests.server.helpers import LiveServer, datas, named, parse_sse, stream_text

TRAY, AGENT, ICHOR = "/api/chat/stream", "/agent/stream", "/v1/agent/chat"


class Live:
    def __init__(self, server: LiveServer, refunds: Refunds) -> None:
        self.server, self.refunds = server, refunds

    @property
    def provider(self) -> ScriptedProvider:
        provider = self.server.app.state.server.runner.agent.model
        assert isinstance(provider, ScriptedProvider)
        return provider

    def post(self, path: str, body: dict[str, Any]) -> list[tuple[str | None, Any]]:
        with self.server.client() as client:
            response, text = stream_text(client, path, json=body)
        assert response.status_code == 200, text
        return named(parse_sse(text))

    def refused(self, path: str, body: dict[str, Any]) -> str:
        """The field a 400 names."""
        with self.server.client() as client:
            response = client.post(path, json=body)
        assert response.status_code == 400, response.text
        field: str = response.json()["field"]
        return field

    def conversation(self, conversation_id: str) -> dict[str, Any]:
        with self.server.client() as client:
            shown: dict[str, Any] = client.get(f"/api/conversations/{conversation_id}").json()
        return shown

    def denial_sent(self) -> dict[str, Any]:
        """The result the model read for ``r1`` in the last request it got."""
        sent = self.provider.requests[-1].messages
        assert vendor_problem(sent) is None
        results = sent[-1]
        assert isinstance(results, ToolResultsMessage)
        [r1] = [r for r in results.results if r.tool_call_id == "r1"]
        assert not r1.is_error  # a decision, not a failure
        content: dict[str, Any] = json.loads(r1.content)
        return content


@pytest.fixture
def live(serve: Serve, tmp_path: Path) -> Iterator[Live]:
    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}"))
    refunds = Refunds()
    server = serve(Agent(model=script(), tools=refunds.tools), store=store)
    server.call(upgrade(store.engine), timeout=60)
    yield Live(server, refunds)
    server.call(store.close())


@pytest.mark.parametrize("approve", [True, False])
def test_the_tray_shows_a_waiting_call_and_takes_the_decision(live: Live, approve: bool) -> None:
    first = datas(parse_sse_body(live, TRAY, {"message": "refund please"}))
    complete = first[-1]["payload"]
    assert complete["pending_approvals"] == [
        {"call_id": "r1", "tool_name": "refund", "input": {"amount": 500}}
    ]
    assert live.refunds.made == [5]  # the small refund needed nobody
    conversation_id = complete["conversation_id"]
    [waiting] = live.conversation(conversation_id)["messages"][-1]["pending_calls"]
    assert waiting == {
        "call_id": "r1",
        "tool_name": "refund",
        "input": {"amount": 500},
        "waiting_for": "approval",
    }

    decision: dict[str, Any] = {"call_id": "r1", "approved": approve}
    if not approve:
        decision["reason"] = "too much"
    body = {"message": "", "conversation_id": conversation_id, "approvals": [decision]}
    second = datas(parse_sse_body(live, TRAY, body))
    done = second[-1]["payload"]
    assert done["message"].endswith("Done.")
    assert "pending_approvals" not in done
    assert live.refunds.made == ([5, 500] if approve else [5])
    if not approve:
        assert live.denial_sent() == {
            "denied": True,
            "message": "The user did not approve this call.",
            "reason": "too much",
        }
    shown = live.conversation(conversation_id)["messages"]
    assert [m["role"] for m in shown] == ["user", "assistant", "assistant"]
    assert [m["pending_calls"] for m in shown] == [[], [], []]
    [r1] = [t for t in shown[-1]["tool_history"] if t["call_id"] == "r1"]
    assert r1["is_error"] is False


def parse_sse_body(live: Live, path: str, body: dict[str, Any]) -> list[Any]:
    with live.server.client() as client:
        response, text = stream_text(client, path, json=body)
    assert response.status_code == 200, text
    return parse_sse(text)


def test_the_ops_agent_names_waiting_calls_before_done(live: Live) -> None:
    first = live.post(AGENT, {"message": "refund please"})
    assert first[-2:] == [
        (
            None,
            {
                "type": "approval_required",
                "tool_call_id": "r1",
                "tool_name": "refund",
                "args": {"amount": 500},
            },
        ),
        (None, {"type": "done"}),
    ]
    conversation_id = first[0][1]["conversation_id"]
    body = {
        "conversation_id": conversation_id,
        "approvals": [{"tool_call_id": "r1", "approved": False, "reason": "not today"}],
    }
    second = live.post(AGENT, body)
    assert [data["type"] for _, data in second][-2:] == ["conversation", "done"]
    assert "".join(d["content"] for _, d in second if d["type"] == "token") == "Done."
    assert live.refunds.made == [5]
    assert live.denial_sent()["reason"] == "not today"


def test_the_workflow_assistant_names_waiting_calls_without_their_input(live: Live) -> None:
    start = {"context_type": "workflow", "conversation_id": "mine-1"}
    first = live.post(ICHOR, {**start, "message": "refund please"})
    assert first[-2:] == [
        ("approval_required", {"tool_use_id": "r1", "name": "refund"}),
        ("message_complete", {}),
    ]
    second = live.post(ICHOR, {**start, "approvals": [{"tool_use_id": "r1", "approved": True}]})
    assert "".join(d["chunk"] for e, d in second if e == "content_chunk") == "Done."
    assert second[-1] == ("message_complete", {})
    assert live.refunds.made == [5, 500]


def test_answers_that_do_not_fit_are_400_naming_the_field(live: Live) -> None:
    complete = datas(parse_sse_body(live, TRAY, {"message": "refund please"}))[-1]["payload"]
    cid = complete["conversation_id"]
    tray: list[tuple[dict[str, Any], str]] = [
        ({"conversation_id": cid}, "message"),
        ({"message": "  ", "conversation_id": cid}, "message"),
        (
            {"conversation_id": cid, "approvals": [{"call_id": "nope", "approved": True}]},
            "approvals",
        ),
        ({"conversation_id": cid, "approvals": [{"call_id": "r1"}]}, "approvals.0.approved"),
        (
            {"conversation_id": cid, "approvals": [{"call_id": "", "approved": True}]},
            "approvals.0.call_id",
        ),
        (
            {
                "conversation_id": cid,
                "approvals": [{"call_id": "r1", "approved": True}] * 2,
            },
            "approvals",
        ),
        ({"conversation_id": cid, "approvals": {"r1": True}}, "approvals"),
    ]
    for body, field in tray:
        assert live.refused(TRAY, body) == field, body
    # Nothing waits in a new conversation.
    fresh = {"approvals": [{"call_id": "r1", "approved": True}]}
    assert live.refused(TRAY, fresh) == "approvals"

    first = live.post(AGENT, {"message": "refund please"})
    agent_id = first[0][1]["conversation_id"]
    agent_cases: list[tuple[dict[str, Any], str]] = [
        ({"conversation_id": agent_id}, "message"),
        (
            {"conversation_id": agent_id, "approvals": [{"tool_call_id": "x", "approved": True}]},
            "approvals",
        ),
        ({"approvals": [{"call_id": "r1", "approved": True}]}, "approvals.0.tool_call_id"),
    ]
    for body, field in agent_cases:
        assert live.refused(AGENT, body) == field, body

    start = {"context_type": "workflow", "conversation_id": "mine-2"}
    live.post(ICHOR, {**start, "message": "refund please"})
    ichor_cases: list[tuple[dict[str, Any], str]] = [
        (start, "message"),
        ({**start, "approvals": [{"tool_use_id": "x", "approved": False}]}, "approvals"),
        (
            {**start, "approvals": [{"tool_use_id": "r1", "approved": "maybe"}]},
            "approvals.0.approved",
        ),
    ]
    for body, field in ichor_cases:
        assert live.refused(ICHOR, body) == field, body
    # The waiting call is still there, answerable, after all those refusals.
    done = live.post(ICHOR, {**start, "approvals": [{"tool_use_id": "r1", "approved": True}]})
    assert done[-1] == ("message_complete", {})
    assert live.refunds.made == [5, 5, 5, 500]


def test_a_waiting_calls_friendly_text_reaches_tray_and_ops_clients() -> None:
    calls = (
        PendingToolCall(
            call_id="r1",
            name="refund",
            arguments={"amount": 500},
            waiting_for="approval",
            display="Refund 500 EUR",
        ),
        PendingToolCall(call_id="c1", name="pick_color", waiting_for="client"),
    )
    done = RunCompleted(run_id="run", seq=3, message="", pending_calls=calls)
    [(_, tray)] = TrayEncoder().encode(done)
    assert json.loads(tray)["payload"]["pending_approvals"] == [
        {
            "call_id": "r1",
            "tool_name": "refund",
            "input": {"amount": 500},
            "display": "Refund 500 EUR",
        }
    ]
    [(_, required), (_, finished)] = OpsEncoder().encode(done)
    assert json.loads(required)["display"] == "Refund 500 EUR"
    assert json.loads(finished) == {"type": "done"}


def test_a_message_may_come_with_the_decisions(live: Live) -> None:
    complete = datas(parse_sse_body(live, TRAY, {"message": "refund please"}))[-1]["payload"]
    body = {
        "message": "yes, go ahead",
        "conversation_id": complete["conversation_id"],
        "approvals": [{"call_id": "r1", "approved": True}],
    }
    datas(parse_sse_body(live, TRAY, body))
    assert live.refunds.made == [5, 500]
    sent = live.provider.requests[-1].messages
    assert vendor_problem(sent) is None
    # The model reads the turn complete, then the message.
    assert isinstance(sent[-2], ToolResultsMessage)
    assert sent[-1] == UserMessage(content="yes, go ahead")
