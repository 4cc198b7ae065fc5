"""The chat mechanisms through the real dialect endpoints (``tray``, ``ichor``, ``agent``) on a
live uvicorn, with the scripted model: what each client sees on the wire."""

from __future__ import annotations

import json
from typing import Any

from agentstream import Agent
from agentstream.chat import (
    CONTEXT_LAST_LAYOUT,
    ActionCall,
    ChatConfig,
    ChatHooks,
    ClientAction,
    ContextType,
    LanguageGuard,
    Page,
    PayloadType,
    ServerActions,
    Tab,
    inject_from_context,
    preview_interceptor,
)
from agentstream.messages import UserMessage
from agentstream.providers.scripted import ScriptedProvider
from agentstream.tools import Toolset, tool
from tests.server.conftest import Serve
from tests.server.helpers import ANY_INT, bearer, datas, named, parse_sse, stream_text, token

from .helpers import provider_of
from .test_hooks import UnreachableCatalogue

TRAY = "/api/chat/stream"
ICHOR = "/v1/agent/chat"
AGENT = "/agent/stream"
WORKFLOW_ID = "550e8400-e29b-41d4-a716-446655440000"
API_KEY = "sk-test-0a1b2c3d4e5f6a7b8c9d"


@tool
def search_articles(query: str) -> str:
    """Search the article index."""
    return f"Found 5 articles about {query}."


@tool
def tag_article(article_id: int, tag: str) -> str:
    """Tag an article."""
    return "tagged"


@tool
def add_note(text: str) -> str:
    """Add a note to the article."""
    return "noted"


def _rules(*rules: dict[str, Any]) -> ScriptedProvider:
    return ScriptedProvider({"rules": list(rules)})


TRAY_CONFIG_ACTIONS = ServerActions()
APPLIED: list[ActionCall] = []


@TRAY_CONFIG_ACTIONS.register("apply_schema", description="Apply the proposed schema")
async def _apply_schema(call: ActionCall) -> str:
    APPLIED.append(call)
    return f"Schema {call.data['schema_id']} applied."


def _tray_config() -> ChatConfig:
    return ChatConfig(
        guidelines="Answer briefly.",
        pages=[
            Page(
                name="reports",
                identity="You help analysts with reports.",
                payload_types=["schema_proposal"],
                client_actions=[ClientAction(name="close_chat")],
                tabs=[
                    Tab(
                        name="articles",
                        tools=[tag_article],
                        subtabs=[Tab(name="notes", tools=[add_note])],
                    )
                ],
            )
        ],
        payload_types=[
            PayloadType.llm("schema_proposal", instructions="Propose schemas.", is_global=False)
        ],
        server_actions=TRAY_CONFIG_ACTIONS,
    )


ANSWER = (
    "Here is a schema.\n\n"
    'SCHEMA_PROPOSAL: {"name": "Inventory", "tables": ["items"]}\n\n'
    "Apply it?\n"
    'SUGGESTED_VALUES: [{"label": "Yes", "value": "yes"}]\n'
    'SUGGESTED_ACTIONS: [{"label": "Apply Changes", "action": "apply_schema", '
    '"handler": "server", "data": {"schema_id": 123}, "style": "primary"}]'
)


def _tray_agent() -> Agent:
    model = _rules(
        {"match": "ran the action", "turns": [{"text": "The schema is applied."}]},
        {"match": "broken", "turns": [{"text": 'Sure.\nSUGGESTED_VALUES: [{"label": "A", '}]},
        {
            "match": "search",
            "turns": [
                {
                    "text": "Let me search for that...",
                    "tool_calls": [{"name": "search_articles", "arguments": {"query": "CRISPR"}}],
                },
                {"text": "I found 5 relevant articles."},
            ],
        },
        {"turns": [{"text": ANSWER}]},
    )
    return Agent(model=model, tools=[search_articles], instructions="Default identity.")


def _complete(text: str) -> dict[str, Any]:
    frames = datas(parse_sse(text))
    assert frames[-1]["type"] == "complete", frames[-1]
    payload: dict[str, Any] = frames[-1]["payload"]
    return payload


def test_tray_prompt_sections_scopes_payload_and_suggestions(serve: Serve) -> None:
    agent = _tray_agent()
    server = serve(agent, hooks=ChatHooks(_tray_config()), diagnostics=False)
    context = {
        "current_page": "reports",
        "active_tab": "articles",
        "active_subtab": "notes",
        "report_id": 456,
    }
    with server.client() as client:
        response, text = stream_text(client, TRAY, json={"message": "schema?", "context": context})
    assert response.status_code == 200
    request = provider_of(agent).requests[0]
    assert [t.name for t in request.tools] == ["search_articles", "tag_article", "add_note"]
    system = request.system
    assert system.startswith("You help analysts with reports.\n\n## Context\n")
    order = [
        "**Current report ID: `456`**",
        "## Capabilities",
        "SCHEMA_PROPOSAL:",
        "Answer briefly.",
    ]
    assert [system.index(s) for s in order] == sorted(system.index(s) for s in order)
    payload = _complete(text)
    assert payload["message"] == "Here is a schema.\n\nApply it?"
    assert payload["custom_payload"]["type"] == "schema_proposal"
    assert payload["custom_payload"]["data"] == {"name": "Inventory", "tables": ["items"]}
    assert payload["custom_payload"]["summary"] == "Schema proposal: Inventory"
    assert payload["suggested_values"] == [{"label": "Yes", "value": "yes"}]
    assert payload["suggested_actions"] == [
        {
            "label": "Apply Changes",
            "action": "apply_schema",
            "handler": "server",
            "data": {"schema_id": 123},
            "style": "primary",
        }
    ]
    assert "diagnostics" not in payload


def test_tray_markers_tool_history_and_broken_suggestions(serve: Serve) -> None:
    server = serve(_tray_agent(), hooks=ChatHooks(_tray_config()))
    with server.client() as client:
        _, searched = stream_text(client, TRAY, json={"message": "search CRISPR"})
        _, broken = stream_text(client, TRAY, json={"message": "broken please"})
    frames = datas(parse_sse(searched))
    assert {
        "type": "tool_complete",
        "tool": "search_articles",
        "index": 0,
        "is_error": False,
        "duration_ms": ANY_INT,
    } in frames
    marker_at = frames.index({"type": "text_delta", "text": "[[tool:0]]"})
    assert frames[marker_at - 1]["type"] == "tool_complete"
    payload = _complete(searched)
    assert payload["message"] == (
        "Let me search for that...\n\n[[tool:0]]\n\nI found 5 relevant articles."
    )
    history = [
        {
            "tool_name": "search_articles",
            "input": {"query": "CRISPR"},
            "output": "Found 5 articles about CRISPR.",
            "index": 0,
            "is_error": False,
        }
    ]
    # Exactly the tray's tool history shape, the same as without chat hooks: no null payload_id or
    # summary.
    assert payload["custom_payload"] == {"type": "tool_history", "data": history}
    assert payload["tool_history"] == history
    broken_payload = _complete(broken)
    assert broken_payload["message"] == 'Sure.\nSUGGESTED_VALUES: [{"label": "A", '
    assert broken_payload["suggested_values"] == []


def test_tray_without_the_tool_history_payload_sends_none_live(serve: Serve) -> None:
    """``ChatConfig(tool_history_payload=False)`` holds for the live ``complete`` frame as it
    does for the stored answer: the tool history stays at the top level only."""
    config = ChatConfig(tool_history_payload=False)
    server = serve(_tray_agent(), hooks=ChatHooks(config))
    with server.client() as client:
        _, searched = stream_text(client, TRAY, json={"message": "search CRISPR"})
    payload = _complete(searched)
    assert "custom_payload" not in payload
    assert [entry["tool_name"] for entry in payload["tool_history"]] == ["search_articles"]


def test_tray_server_action_round_trip(serve: Serve) -> None:
    agent = _tray_agent()
    server = serve(agent, hooks=ChatHooks(_tray_config()), auth=True)
    headers = bearer(token("alice"))
    with server.client(headers=headers) as client:
        _, offered = stream_text(client, TRAY, json={"message": "schema?"})
        [action] = _complete(offered)["suggested_actions"]
        body = {
            "message": action["label"],
            "interaction_type": "action_executed",
            "action": {"action": action["action"], "data": action["data"]},
        }
        response, text = stream_text(client, TRAY, json=body)
    assert response.status_code == 200
    assert _complete(text)["message"] == "The schema is applied."
    assert APPLIED[-1].principal.user_id == "alice"
    assert APPLIED[-1].data == {"schema_id": 123}
    assert provider_of(agent).requests[-1].messages[-1].content == (  # type: ignore[union-attr]
        'The user ran the action "apply_schema" (Apply Changes).\nOutcome: Schema 123 applied.'
    )


def test_tray_unknown_action_is_a_400(serve: Serve) -> None:
    agent = _tray_agent()
    server = serve(agent, hooks=ChatHooks(_tray_config()))
    body = {
        "message": "Go",
        "interaction_type": "action_executed",
        "action": {"action": "drop_everything"},
    }
    with server.client() as client:
        response = client.post(TRAY, json=body)
    assert response.status_code == 400
    assert "drop_everything" in response.json()["detail"]
    assert provider_of(agent).requests == []


def test_tray_diagnostics_without_secrets(serve: Serve) -> None:
    server = serve(_tray_agent(), hooks=ChatHooks(_tray_config()), auth=True, diagnostics=True)
    jwt = token("alice")
    context = {"current_page": "reports", "api_key": API_KEY, "note": f"key {API_KEY}"}
    with server.client(headers=bearer(jwt)) as client:
        _, text = stream_text(client, TRAY, json={"message": "schema?", "context": context})
    assert jwt not in text
    assert jwt.split(".")[2] not in text
    assert API_KEY not in text
    diagnostics = _complete(text)["diagnostics"]
    assert diagnostics["max_iterations"] == 5
    assert diagnostics["tools"] == ["search_articles"]
    assert diagnostics["system_prompt"].startswith("You help analysts with reports.")
    assert diagnostics["context"]["api_key"] == "[redacted]"
    assert diagnostics["raw_llm_response"] == ANSWER


# --- ichor (workflow assistant) ----------------------------------------------------------------


def _ichor_agent() -> Agent:
    toolset = Toolset()

    @toolset.scoped("workflow")
    @tool(prepare=inject_from_context("workflow_id", uuid_only=True))
    def get_workflow_rule(workflow_id: str) -> dict[str, Any]:
        """Fetch a rule."""
        return {"id": workflow_id, "name": "Low Stock Alert"}

    @toolset.scoped("workflow")
    @tool(intercept=preview_interceptor())
    def preview_workflow(description: str, workflow: dict[str, Any]) -> dict[str, Any]:
        """Validate and preview a workflow."""
        return {"valid": True}

    @toolset.scoped("tables")
    @tool
    def list_tables() -> list[str]:
        """List tables."""
        return []

    model = _rules(
        {"match": "Please respond in English", "turns": [{"text": "It has three steps."}]},
        {"match": "chinese", "turns": [{"text": "这个工作流程有三个步骤。"}]},
        {
            "match": "preview",
            "turns": [
                {
                    "tool_calls": [
                        {
                            "id": "t1",
                            "name": "get_workflow_rule",
                            "arguments": {"workflow_id": "Low Stock Alert"},
                        },
                        {
                            "id": "t2",
                            "name": "preview_workflow",
                            "arguments": {
                                "description": "Alert on low stock",
                                "workflow": {"a": 1},
                            },
                        },
                    ]
                },
                {"text": "I've sent a preview for your review."},
            ],
        },
        {"turns": [{"text": "Tables."}]},
    )
    return Agent(model=model, tools=toolset, answer_checks=[LanguageGuard()])


ICHOR_CONFIG = ChatConfig(
    layout=CONTEXT_LAST_LAYOUT,
    identity="ROLE BLOCK",
    tool_guidance="TOOL GUIDANCE",
    guidelines="RESPONSE GUIDANCE",
    context_preamble="## Current workflow",
    context_ids=["workflow_id"],
    context_types={"tables": ContextType(identity="TABLES ROLE", tool_guidance="")},
)


def test_ichor_context_injection_workflow_id_and_preview(serve: Serve) -> None:
    agent = _ichor_agent()
    server = serve(agent, hooks=ChatHooks(ICHOR_CONFIG))
    body = {
        "message": "preview a low stock alert",
        "context_type": "workflow",
        "context": {"workflow_id": WORKFLOW_ID, "rule_name": "Low Stock Alert"},
    }
    with server.client() as client:
        _, text = stream_text(client, ICHOR, json=body)
    request = provider_of(agent).requests[0]
    assert request.system == (
        "ROLE BLOCK\n\nTOOL GUIDANCE\n\nRESPONSE GUIDANCE\n\n## Current workflow\n"
        f"**Current workflow ID: `{WORKFLOW_ID}`**\n```json\n"
        f'{{"workflow_id":"{WORKFLOW_ID}","rule_name":"Low Stock Alert"}}\n```'
    )
    assert [t.name for t in request.tools] == ["get_workflow_rule", "preview_workflow"]
    events = named(parse_sse(text))
    assert (
        "workflow_preview",
        {"description": "Alert on low stock", "workflow": {"a": 1}, "is_update": False},
    ) in events
    results = provider_of(agent).requests[1].messages[-1].results  # type: ignore[union-attr]
    assert json.loads(results[0].content)["id"] == WORKFLOW_ID
    assert json.loads(results[1].content)["status"] == "preview_sent"
    assert events[-1] == ("message_complete", {})


def test_ichor_tables_prompt_and_language_retry(serve: Serve) -> None:
    agent = _ichor_agent()
    server = serve(agent, hooks=ChatHooks(ICHOR_CONFIG))
    with server.client() as client:
        _, text = stream_text(
            client, ICHOR, json={"message": "chinese please", "context_type": "tables"}
        )
    request = provider_of(agent).requests[0]
    assert request.system == "TABLES ROLE\n\nRESPONSE GUIDANCE"
    assert [t.name for t in request.tools] == ["list_tables"]
    chunks = "".join(
        data["chunk"] for event, data in named(parse_sse(text)) if event == "content_chunk"
    )
    assert chunks == "这个工作流程有三个步骤。[Retrying in English...]It has three steps."
    assert provider_of(agent).requests[1].messages[-1].content == (  # type: ignore[union-attr]
        "Please respond in English, not Chinese."
    )


# --- agent (ops agent) -------------------------------------------------------------------------


def test_agent_dialect_tool_fallback_warning_and_string_context(serve: Serve) -> None:
    agent = Agent(
        model=_rules({"turns": [{"text": "Still here."}]}),
        tools=[search_articles],
        tool_sources=[UnreachableCatalogue()],
        instructions="You are the ops agent.",
    )
    server = serve(agent, hooks=ChatHooks())
    body = {"message": "status?", "context": "The user is an on-call admin."}
    with server.client() as client:
        _, text = stream_text(client, AGENT, json=body)
    frames = datas(parse_sse(text))
    assert [f["type"] for f in frames][:2] == ["start", "warning"]
    assert frames[1] == {
        "type": "warning",
        "code": "tool_fallback",
        "message": "Tool-enabled streaming encountered an issue. Continuing without tools.",
    }
    assert frames[0]["tools_enabled"] is False
    assert "".join(f["content"] for f in frames if f["type"] == "token") == "Still here."
    assert frames[-1] == {"type": "done"}
    system = provider_of(agent).requests[0].system
    assert system.startswith("You are the ops agent.\n\n## Context\n")
    assert "The user is an on-call admin." in system


# --- what the model is asked for, per dialect ---------------------------------------------------


def test_only_the_tray_asks_the_model_for_suggestions_and_payload_markers(serve: Serve) -> None:
    """Workflow assistant, data playground and ops agent clients show every streamed character
    and have nowhere to put suggestions or written payloads: telling their model to write
    ``SUGGESTED_VALUES:`` or ``QUERY_SUGGESTION:`` lines would put those lines in
    ``content_chunk``/``message``/``token`` text. The tray gets the instructions."""
    agent = Agent(
        model=_rules({"turns": [{"text": "Fine."}]}), tools=[search_articles], instructions="Hi."
    )
    config = ChatConfig(
        client_actions=[ClientAction(name="close_chat")],
        payload_types=[PayloadType.llm("query_suggestion", instructions="Suggest a query.")],
    )
    server = serve(agent, hooks=ChatHooks(config))
    requests = [
        (TRAY, {"message": "hi"}),
        (ICHOR, {"message": "hi", "context_type": "workflow"}),
        (AGENT, {"message": "hi"}),
        (
            "/api/chat/agent-chat/stream?brandRef=b1",
            {"brandRef": "b1", "model": "scripted:script", "content": "hi"},
        ),
    ]
    with server.client() as client:
        for path, body in requests:
            response, _ = stream_text(client, path, json=body)
            assert response.status_code == 200, response.text
    systems = [request.system for request in provider_of(agent).requests]
    tray, ichor, *others = systems
    assert "SUGGESTED_VALUES:" in tray
    assert "SUGGESTED_ACTIONS:" in tray
    assert "QUERY_SUGGESTION:" in tray
    assert ichor == "Hi."  # the workflow layout: role, tool guidance, response guidance, context
    for system in others:
        assert system == (
            "Hi.\n\n## Capabilities\nTools you can call:\n"
            "- `search_articles`: Search the article index."
        )


def test_ichor_retries_a_chinese_answer_in_english_by_default(serve: Serve) -> None:
    """A Chinese answer to a workflow client is retried with "Please respond in English, not
    Chinese." and the client sees ``[Retrying in English...]`` as a content chunk. No agent setting
    needed."""
    agent = Agent(
        model=_rules(
            {"match": "not Chinese", "turns": [{"text": ["This workflow has ", "three steps."]}]},
            {"turns": [{"text": ["这个工作流程", "有三个步骤。"]}]},
        ),
        instructions="Hi.",
    )
    server = serve(agent, hooks=ChatHooks())
    with server.client() as client:
        response, text = stream_text(
            client, ICHOR, json={"message": "What does it do?", "context_type": "workflow"}
        )
        tray_response, tray_text = stream_text(client, TRAY, json={"message": "What does it do?"})
    assert response.status_code == 200
    chunks = [data["chunk"] for name, data in named(parse_sse(text)) if name == "content_chunk"]
    assert chunks == [
        "这个工作流程",
        "有三个步骤。",
        "[Retrying in English...]",
        "This workflow has ",
        "three steps.",
    ]
    retry = provider_of(agent).requests[1].messages[-1]
    assert retry == UserMessage(content="Please respond in English, not Chinese.")
    # The tray asks for no language: its answer stands as written.
    assert "[Retrying" not in tray_text
