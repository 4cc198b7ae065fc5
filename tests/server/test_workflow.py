"""Golden frames for ``ichor`` (the workflow assistant's event stream) over a real uvicorn, plus its
request rules."""

from __future__ import annotations

from typing import Any

import pytest

from agentstream.server.dialects.workflow import WorkflowEncoder
from tests.server import agents
from tests.server.agents import WORKFLOW, ichor_agent
from tests.server.conftest import Serve
from tests.server.helpers import bearer, named, parse_sse, stream_text, token

PATH = "/v1/agent/chat"


def chat(serve: Serve, message: str, **body: Any) -> list[tuple[str | None, Any]]:
    server = serve(ichor_agent())
    with server.client() as client:
        response, text = stream_text(
            client,
            PATH,
            json={"message": message, "context_type": "workflow", **body},
            headers={"Accept": "text/event-stream"},
        )
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-accel-buffering"] == "no"
    return named(parse_sse(text))


def test_simple_question_no_tools(serve: Serve) -> None:
    assert chat(serve, "What does this workflow do?") == [
        ("message_start", {"turn": 0}),
        ("content_chunk", {"chunk": "The "}),
        ("content_chunk", {"chunk": "**Low Stock Alert**"}),
        ("content_chunk", {"chunk": " rule triggers..."}),
        ("message_complete", {}),
    ]


def test_question_requiring_a_tool_call(serve: Serve) -> None:
    assert chat(serve, "Please look up that workflow") == [
        ("message_start", {"turn": 0}),
        ("content_chunk", {"chunk": "Let me look up that workflow."}),
        ("tool_call_start", {"tool_use_id": "t1", "name": "get_workflow_rule"}),
        ("tool_call_result", {"tool_use_id": "t1", "name": "get_workflow_rule", "is_error": False}),
        ("message_start", {"turn": 1}),
        ("content_chunk", {"chunk": "\n\nThe workflow has 3 actions..."}),
        ("message_complete", {}),
    ]


def test_workflow_creation_with_preview(serve: Serve) -> None:
    assert chat(serve, "Create a low stock workflow") == [
        ("message_start", {"turn": 0}),
        ("tool_call_start", {"tool_use_id": "t1", "name": "discover_action_types"}),
        (
            "tool_call_result",
            {"tool_use_id": "t1", "name": "discover_action_types", "is_error": False},
        ),
        ("message_start", {"turn": 1}),
        ("content_chunk", {"chunk": "I'll build that workflow..."}),
        ("tool_call_start", {"tool_use_id": "t2", "name": "preview_workflow"}),
        ("tool_call_result", {"tool_use_id": "t2", "name": "preview_workflow", "is_error": False}),
        (
            "workflow_preview",
            {"description": "Add low stock alert", "workflow": WORKFLOW, "is_update": False},
        ),
        ("message_start", {"turn": 2}),
        ("content_chunk", {"chunk": "\n\nI've sent a preview for your review."}),
        ("message_complete", {}),
    ]


def test_provider_error_is_an_error_event(serve: Serve) -> None:
    assert chat(serve, "please fail") == [
        ("message_start", {"turn": 0}),
        ("content_chunk", {"chunk": "Partial"}),
        ("error", {"message": "LLM provider error: context deadline exceeded"}),
    ]


def test_context_type_selects_tools_and_context_reaches_them(serve: Serve) -> None:
    agent = ichor_agent()
    server = serve(agent, auth=True)
    context = {"workflow_id": "550e8400-e29b-41d4-a716-446655440000", "nodes": []}
    jwt_token = token("bob")
    with server.client() as client:
        for context_type in ("tables", "workflow"):
            response, _ = stream_text(
                client,
                PATH,
                json={
                    "message": "Please look up",
                    "context_type": context_type,
                    "context": context,
                },
                headers=bearer(jwt_token),
            )
            assert response.status_code == 200
    provider = agent.model
    tables_request = provider.requests[0]  # type: ignore[union-attr]
    workflow_request = provider.requests[-1]  # type: ignore[union-attr]
    assert [t.name for t in tables_request.tools] == []
    assert {t.name for t in workflow_request.tools} == {
        "get_workflow_rule",
        "discover_action_types",
        "preview_workflow",
    }
    # The bearer token is forwarded verbatim to tools, with the request's context.
    assert agents.seen_tokens[-1] == jwt_token
    assert agents.seen_contexts[-1] == context


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"context_type": "workflow"}, "message"),
        ({"message": "", "context_type": "workflow"}, "message"),
        ({"message": "hi"}, "context_type"),
        ({"message": "hi", "context_type": "nodes"}, "context_type"),
        ({"message": "hi", "context_type": "workflow", "context": "text"}, "context"),
        ({"message": 5, "context_type": "workflow"}, "message"),
        ({"message": "hi", "context_type": "workflow", "conversation_id": 7}, "conversation_id"),
        ([1, 2], "body"),
    ],
)
def test_bad_requests_are_400_naming_the_field(serve: Serve, body: Any, field: str) -> None:
    server = serve(ichor_agent())
    with server.client() as client:
        response = client.post(PATH, json=body)
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert response.json()["detail"].startswith(field)


def test_blank_message_says_so(serve: Serve) -> None:
    server = serve(ichor_agent())
    with server.client() as client:
        response = client.post(PATH, json={"message": "  ", "context_type": "workflow"})
    assert response.json() == {"detail": "message: must not be empty", "field": "message"}


def test_malformed_json_is_400(serve: Serve) -> None:
    server = serve(ichor_agent())
    with server.client() as client:
        response = client.post(
            PATH, content=b'{"message": "hi",', headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 400
    assert response.json() == {"detail": "body: malformed JSON", "field": "body"}


def test_cors_preflight(serve: Serve) -> None:
    server = serve(ichor_agent(), cors_origins=("https://app.example",))
    with server.client() as client:
        preflight = client.options(
            PATH,
            headers={
                "Origin": "https://app.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type, last-event-id",
            },
        )
        denied = client.options(
            PATH,
            headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
        )
        plain = client.options(PATH)
        response, _ = stream_text(
            client,
            PATH,
            json={"message": "What does it do?", "context_type": "workflow"},
            headers={"Origin": "https://app.example"},
        )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://app.example"
    assert "POST" in preflight.headers["access-control-allow-methods"]
    allowed = preflight.headers["access-control-allow-headers"].lower()
    assert "authorization" in allowed and "last-event-id" in allowed  # resuming a stream
    assert denied.status_code == 400
    assert "access-control-allow-origin" not in denied.headers
    assert plain.status_code == 204
    assert "POST" in plain.headers["allow"]
    assert response.headers["access-control-allow-origin"] == "https://app.example"


def test_encoder_never_sends_tool_inputs_or_results() -> None:
    from agentstream.events import ToolCallArgs, ToolCallFinished

    encoder = WorkflowEncoder()
    args = ToolCallArgs(run_id="r", seq=1, call_id="t1", name="x", index=0, arguments={"a": 1})
    done = ToolCallFinished(
        run_id="r", seq=2, call_id="t1", name="x", index=0, is_error=True, result="secret"
    )
    assert encoder.encode(args) == ()
    assert encoder.encode(done) == (
        ("tool_call_result", '{"tool_use_id":"t1","name":"x","is_error":true}'),
    )


def test_with_chat_hooks_the_context_is_in_the_system_prompt(serve: Serve) -> None:
    from agentstream.chat import ChatHooks

    agent = ichor_agent()
    server = serve(agent, hooks=ChatHooks())
    context = {"workflow_id": "550e8400-e29b-41d4-a716-446655440000", "rule_name": "Low Stock"}
    with server.client() as client:
        response, text = stream_text(
            client,
            PATH,
            json={
                "message": "What does this workflow do?",
                "context_type": "workflow",
                "context": context,
            },
        )
    assert response.status_code == 200
    assert named(parse_sse(text))[-1] == ("message_complete", {})
    system = agent.model.requests[-1].system  # type: ignore[union-attr]
    assert "550e8400-e29b-41d4-a716-446655440000" in system
    assert "Low Stock" in system


def test_the_bearer_token_reaches_tools_in_anonymous_local_mode(serve: Serve) -> None:
    """Tools call the user's APIs with the token the client sent, even when this server does
    not check tokens itself."""
    server = serve(ichor_agent())
    with server.client() as client:
        response, _ = stream_text(
            client,
            PATH,
            json={"message": "Please look up", "context_type": "workflow", "context": {}},
            headers=bearer("opaque-upstream-token.123"),
        )
    assert response.status_code == 200
    assert agents.seen_tokens[-1] == "opaque-upstream-token.123"


@pytest.mark.parametrize(
    "client_id", ["alice@example.com:chat-3", "x" * 69, "workspace/42 thread #7", "ü"]
)
def test_any_tracking_string_is_a_conversation_id(serve: Serve, client_id: str) -> None:
    server = serve(ichor_agent())
    with server.client() as client:
        for _ in range(2):
            response, _text = stream_text(
                client,
                PATH,
                json={
                    "message": "What does this workflow do?",
                    "context_type": "workflow",
                    "conversation_id": client_id,
                },
            )
            assert response.status_code == 200
        too_long = client.post(
            PATH,
            json={"message": "hi", "context_type": "workflow", "conversation_id": "x" * 513},
        )
    assert too_long.status_code == 400
    assert too_long.json()["field"] == "conversation_id"
