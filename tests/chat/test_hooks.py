"""Each chat mechanism end to end: ``Runner(agent, hooks=ChatHooks(...))`` with the scripted
model, asserting on what the model received and on the completed event."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentstream import Agent, Principal, Toolset, tool
from agentstream.chat import (
    ChatConfig,
    ChatHooks,
    ClientAction,
    ContextType,
    Page,
    PayloadType,
    Tab,
    inject_from_context,
    preview_interceptor,
)
from agentstream.events import (
    Payload,
    PayloadEvent,
    RunWarning,
    SuggestedAction,
    SuggestedValue,
    TextDelta,
    ToolCallArgs,
    ToolHistoryEntry,
)
from agentstream.messages import ToolResultsMessage
from agentstream.runs import RunRequest
from agentstream.store import SqlConversationStore
from agentstream.tools import Tool, ToolResult

from .helpers import USER, completed, provider_of, run_chat, scripted, shaped

WORKFLOW_ID = "550e8400-e29b-41d4-a716-446655440000"


@tool
def search_articles(query: str) -> str:
    """Search the article index.

    Args:
        query: What to search for.
    """
    return f"Found 5 articles about {query}."


@tool
def summarize_report(report_id: int) -> str:
    """Summarize a report."""
    return f"Report {report_id}"


@tool
def tag_article(article_id: int, tag: str) -> str:
    """Tag an article."""
    return "tagged"


@tool
def add_note(text: str) -> str:
    """Add a note to the current article."""
    return "noted"


SCHEMA = PayloadType.llm(
    "schema_proposal",
    instructions="When the user asks for a schema, propose one.",
    description="Database schema suggestions",
    is_global=False,
)
QUERY = PayloadType.llm("query_suggestion", instructions="Suggest a search query when useful.")

REPORTS = Page(
    name="reports",
    identity="You help analysts read research reports.",
    tools=[summarize_report],
    payload_types=["schema_proposal"],
    client_actions=[ClientAction(name="open_article", description="Open an article")],
    instructions="On the reports page, cite article ids.",
    tabs=[
        Tab(
            name="articles",
            tools=[tag_article],
            subtabs=[Tab(name="notes", tools=[add_note, tag_article])],
        )
    ],
)


def _config(**overrides: Any) -> ChatConfig:
    settings: dict[str, Any] = {
        "guidelines": "Answer in short markdown paragraphs.",
        "instructions": "This stream follows CRISPR research.",
        "pages": [REPORTS],
        "payload_types": [SCHEMA, QUERY],
        "client_actions": [ClientAction(name="close_chat", description="Close the chat")],
    }
    settings.update(overrides)
    return ChatConfig(**settings)


def _agent(*turns: dict[str, Any], **kwargs: Any) -> Agent:
    kwargs.setdefault("tools", [search_articles])
    kwargs.setdefault("instructions", "You are the default research assistant.")
    return Agent(model=scripted(*turns), **kwargs)


# --- system prompt ------------------------------------------------------------------------------


async def test_prompt_sections_follow_the_trays_order_with_page_identity_and_context() -> None:
    agent = _agent({"text": "Hello."})
    context = {"current_page": "reports", "report_id": 456, "stream_id": 123}
    await run_chat(agent, _config(), context=context)
    system = provider_of(agent).requests[0].system
    landmarks = [
        "You help analysts read research reports.",  # identity (the page's)
        "## Context",
        "**Current report ID: `456`**",
        "**Current stream ID: `123`**",
        '```json\n{"current_page":"reports","report_id":456,"stream_id":123}\n```',
        "## Capabilities",
        "- `search_articles`: Search the article index.",
        "- `summarize_report`: Summarize a report.",
        "`query_suggestion`",  # global payload types first, then the page's
        "`schema_proposal`: Database schema suggestions",
        '- `close_chat` (handler "client"): Close the chat',
        '- `open_article` (handler "client"): Open an article',
        "SUGGESTED_VALUES:",
        "SUGGESTED_ACTIONS:",
        "## Instructions\nThis stream follows CRISPR research.\n\n"
        "On the reports page, cite article ids.",
        "Answer in short markdown paragraphs.",  # guidelines, last
    ]
    positions = [system.index(landmark) for landmark in landmarks]
    assert positions == sorted(positions)
    assert system.startswith("You help analysts read research reports.\n\n## Context")
    assert system.endswith("Answer in short markdown paragraphs.")
    assert "default research assistant" not in system


async def test_without_a_page_the_agents_instructions_are_the_identity() -> None:
    agent = _agent({"text": "Hello."})
    await run_chat(agent, _config(), context={"current_page": "settings"})
    system = provider_of(agent).requests[0].system
    assert system.startswith("You are the default research assistant.\n\n## Context")
    assert "schema_proposal" not in system  # declared by the reports page only
    assert "query_suggestion" in system


ROLE = "You are the workflow assistant. Preview before you create."
TOOL_GUIDANCE = "Use get_workflow_rule to read a rule."
RESPONSE_GUIDANCE = "Interpret results; never dump raw JSON."
TABLES_ROLE = "You are the tables assistant."


@tool
def get_workflow_rule(workflow_id: str) -> str:
    """Fetch a workflow rule."""
    return workflow_id


@tool
def list_tables() -> str:
    """List tables."""
    return "[]"


def _ichor_agent() -> Agent:
    toolset = Toolset()
    toolset.add(get_workflow_rule, scope="workflow")
    toolset.add(list_tables, scope="tables")
    return Agent(model=scripted({"text": "Sure."}), tools=toolset)


ICHOR = ChatConfig(  # the workflow layout (context last) is the default for context_type requests
    identity=ROLE,
    tool_guidance=TOOL_GUIDANCE,
    guidelines=RESPONSE_GUIDANCE,
    context_preamble="## Current workflow",
    context_ids=["workflow_id"],
    context_types={"tables": ContextType(identity=TABLES_ROLE, tool_guidance="")},
)


async def test_workflow_prompt_puts_the_context_last_with_the_workflow_id_prominent() -> None:
    agent = _ichor_agent()
    context = {"workflow_id": WORKFLOW_ID, "rule_name": "Low Stock Alert", "nodes": []}
    await run_chat(agent, ICHOR, context=context, context_type="workflow")
    request = provider_of(agent).requests[0]
    assert request.system == (
        f"{ROLE}\n\n{TOOL_GUIDANCE}\n\n{RESPONSE_GUIDANCE}\n\n"
        "## Current workflow\n"
        f"**Current workflow ID: `{WORKFLOW_ID}`**\n"
        "```json\n"
        f'{{"workflow_id":"{WORKFLOW_ID}","rule_name":"Low Stock Alert","nodes":[]}}\n'
        "```"
    )
    assert [t.name for t in request.tools] == ["get_workflow_rule"]


async def test_tables_context_type_replaces_role_and_tool_guidance() -> None:
    agent = _ichor_agent()
    await run_chat(agent, ICHOR, context_type="tables")
    request = provider_of(agent).requests[0]
    assert request.system == f"{TABLES_ROLE}\n\n{RESPONSE_GUIDANCE}"
    assert [t.name for t in request.tools] == ["list_tables"]


# --- scoped tools -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ({}, ["search_articles"]),
        ({"current_page": "reports"}, ["search_articles", "summarize_report"]),
        (
            {"current_page": "reports", "active_tab": "articles"},
            ["search_articles", "summarize_report", "tag_article"],
        ),
        (
            {"current_page": "reports", "active_tab": "articles", "active_subtab": "notes"},
            ["search_articles", "summarize_report", "tag_article", "add_note"],
        ),
        (
            {"current_page": "reports", "active_subtab": "notes"},
            ["search_articles", "summarize_report"],
        ),
    ],
)
async def test_tools_are_global_then_page_tab_subtab_without_duplicates(
    location: dict[str, str], expected: list[str]
) -> None:
    agent = _agent({"text": "Ok."})
    await run_chat(agent, _config(), context=location)
    assert [t.name for t in provider_of(agent).requests[0].tools] == expected


# --- payloads, suggestions ----------------------------------------------------------------------

ANSWER_WITH_PAYLOAD = (
    "Here is a schema for your inventory.\n\n"
    'SCHEMA_PROPOSAL: {"name": "Inventory", "tables": [{"name": "items", "note": "a ] b"}]}\n\n'
    "Shall I apply it?\n"
    'SUGGESTED_VALUES: [{"label": "Yes, apply", "value": "Apply the schema"}]\n'
    'SUGGESTED_ACTIONS: [{"label": "Close", "action": "close_chat", "handler": "client", '
    '"style": "secondary"}]'
)


async def test_an_llm_payload_and_suggestions_are_parsed_out_of_the_answer() -> None:
    agent = _agent({"text": ANSWER_WITH_PAYLOAD})
    events = await run_chat(agent, _config(), context={"current_page": "reports"})
    done = shaped(events)
    assert done.message == "Here is a schema for your inventory.\n\nShall I apply it?"
    assert completed(events).message == ANSWER_WITH_PAYLOAD  # the model's own text
    [payload] = done.payloads
    assert payload.kind == "schema_proposal"
    assert payload.data == {"name": "Inventory", "tables": [{"name": "items", "note": "a ] b"}]}
    assert payload.summary == "Schema proposal: Inventory"
    assert payload.payload_id is not None
    assert done.custom_payload == payload
    assert done.suggested_values == (SuggestedValue(label="Yes, apply", value="Apply the schema"),)
    assert done.suggested_actions == (
        SuggestedAction(label="Close", action="close_chat", style="secondary"),
    )
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert streamed == ANSWER_WITH_PAYLOAD  # the stream is the model's; the answer is shaped


async def test_a_page_only_payload_is_not_parsed_on_other_pages() -> None:
    agent = _agent({"text": ANSWER_WITH_PAYLOAD})
    done = shaped(await run_chat(agent, _config(), context={"current_page": "settings"}))
    assert "SCHEMA_PROPOSAL:" in done.message
    assert done.payloads == ()
    assert done.suggested_values != ()


async def test_broken_suggestion_json_keeps_the_text_and_completes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = 'Done.\n\nSUGGESTED_VALUES: [{"label": "Yes", "value": "yes"}, {"label": "No", "val'
    agent = _agent({"text": text})
    with caplog.at_level(logging.WARNING, logger="agentstream.chat"):
        done = shaped(await run_chat(agent, _config()))
    assert done.message == text
    assert done.suggested_values == ()
    assert "SUGGESTED_VALUES: ignored: the JSON is not terminated" in caplog.text


async def test_a_suggested_server_action_without_a_handler_is_dropped() -> None:
    text = 'Ok.\nSUGGESTED_ACTIONS: [{"label": "Apply", "action": "apply_schema", "handler": "server"}]'
    done = shaped(await run_chat(_agent({"text": text}), _config()))
    assert done.message == "Ok."
    assert done.suggested_actions == ()


# --- tool history and markers -------------------------------------------------------------------

SEARCH_TURNS = (
    {
        "text": "Let me search for that...",
        "tool_calls": [{"name": "search_articles", "arguments": {"query": "CRISPR"}}],
    },
    {"text": "I found 5 relevant articles."},
)


async def test_the_message_is_the_streamed_text_and_tool_history_in_custom_payload() -> None:
    agent = _agent(*SEARCH_TURNS)
    events = await run_chat(agent, _config())
    done = shaped(events)
    # No markers: presenters place them from the offsets (the tray's complete frame does).
    assert done.message == "Let me search for that...\n\nI found 5 relevant articles."
    assert done.message == "".join(e.text for e in events if isinstance(e, TextDelta))
    assert done.custom_payload == Payload(
        kind="tool_history",
        data=[
            {
                "tool_name": "search_articles",
                "input": {"query": "CRISPR"},
                "output": "Found 5 articles about CRISPR.",
                "index": 0,
                "is_error": False,
            }
        ],
    )
    [entry] = completed(events).tool_history
    assert isinstance(entry, ToolHistoryEntry)
    assert (entry.index, entry.tool_name) == (0, "search_articles")
    assert done.tool_history == (entry,)
    assert entry.text_offset == len("Let me search for that...")


async def test_tool_offsets_follow_the_marker_blocks_cut_out_before_them() -> None:
    block = 'SCHEMA_PROPOSAL: {"name": "Inventory", "tables": ["items"]}'
    agent = _agent(
        {
            "text": f"Here is a schema.\n\n{block}\n\nLet me check it.",
            "tool_calls": [{"name": "search_articles", "arguments": {"query": "items"}}],
        },
        {"text": "It is fine."},
    )
    done = shaped(await run_chat(agent, _config(), context={"current_page": "reports"}))
    assert done.message == "Here is a schema.\n\nLet me check it.\n\nIt is fine."
    [entry] = done.tool_history
    assert done.message[: entry.text_offset] == "Here is a schema.\n\nLet me check it."


async def test_without_markers_the_message_is_plain_and_the_history_still_there() -> None:
    done = shaped(await run_chat(_agent(*SEARCH_TURNS), _config()))
    assert done.message == "Let me search for that...\n\nI found 5 relevant articles."
    assert done.custom_payload is not None
    assert done.custom_payload.kind == "tool_history"


async def test_a_tool_payload_gets_a_summary_and_is_the_custom_payload() -> None:
    @tool
    def preview(description: str) -> ToolResult:
        """Preview."""
        return ToolResult(
            text="sent", payload=Payload(kind="workflow_preview", data={"description": description})
        )

    agent = _agent(
        {"tool_calls": [{"name": "preview", "arguments": {"description": "Low stock"}}]},
        {"text": "Sent."},
        tools=[preview],
    )
    done = shaped(await run_chat(agent, _config()))
    [payload] = done.payloads
    assert payload.summary == "Workflow preview: Low stock"
    assert done.custom_payload == payload


# --- payload manifest across a stored conversation ----------------------------------------------


async def test_the_payload_manifest_lists_earlier_payloads(tmp_path: Path) -> None:
    from agentstream.runs import Runner

    agent = _agent({"text": ANSWER_WITH_PAYLOAD})
    store = await SqlConversationStore.open(f"sqlite+aiosqlite:///{tmp_path / 'chat.db'}")
    try:
        runner = Runner(agent, store=store, hooks=ChatHooks(_config()))
        context = {"current_page": "reports"}
        first = await runner.begin(RunRequest(message="schema?", principal=USER, context=context))
        done = shaped([e async for e in first.events()])
        payload_id = done.payloads[0].payload_id
        second = await runner.begin(
            RunRequest(
                message="apply it",
                principal=USER,
                context=context,
                conversation_id=first.conversation_id,
            )
        )
        [e async for e in second.events()]
    finally:
        await store.close()
    system = provider_of(agent).requests[-1].system
    assert (
        "## Payloads in this conversation\n"
        "Earlier in this conversation you produced these payloads; the user can see them. "
        "Refer to one by its id when it helps.\n"
        f"- `{payload_id}` schema_proposal: Schema proposal: Inventory"
    ) in system
    assert (
        system.index("## Context") < system.index("## Payloads") < system.index("## Capabilities")
    )
    assert "tool_history" not in system


# --- tool fallback ------------------------------------------------------------------------------


class UnreachableCatalogue:
    async def load(self, principal: Principal, scopes: Sequence[str]) -> Sequence[Tool]:
        raise ConnectionError("catalogue at http://tools.internal is unreachable")


async def test_a_failing_tool_source_warns_and_the_run_continues_without_tools() -> None:
    agent = _agent({"text": "I can still answer."}, tool_sources=[UnreachableCatalogue()])
    events = await run_chat(agent, _config())
    [warning] = [e for e in events if isinstance(e, RunWarning)]
    assert warning.code == "tool_fallback"
    assert "tools.internal" not in warning.message
    assert provider_of(agent).requests[0].tools == ()
    assert shaped(events).message == "I can still answer."


# --- the default ---------------------------------------------------------------------------------


async def test_default_chat_hooks_suit_any_agent() -> None:
    text = 'Hi!\nSUGGESTED_VALUES: ["More", {"label": "Stop", "value": "stop"}]'
    agent = Agent(model=scripted({"text": text}), instructions="Be nice.")
    events = await run_chat(agent, None, context={"page": "home"})
    done = shaped(events)
    assert done.message == "Hi!"
    assert [v.value for v in done.suggested_values] == ["More", "stop"]
    assert done.diagnostics is None
    system = provider_of(agent).requests[0].system
    assert system.startswith("Be nice.\n\n## Context\n")
    assert '```json\n{"page":"home"}\n```' in system
    assert "SUGGESTED_VALUES:" in system
    assert "SUGGESTED_ACTIONS:" not in system  # no actions to offer


# --- page context builders and the workflow assistant's tool hooks -----------------------------


async def test_a_page_renders_its_own_context_possibly_async() -> None:
    async def loaded(context: Any) -> str:
        return f"Report {context['report_id']} has 12 articles."

    config = ChatConfig(pages=[Page(name="reports", context=loaded)])
    agent = _agent({"text": "Ok."})
    await run_chat(agent, config, context={"current_page": "reports", "report_id": 9})
    system = provider_of(agent).requests[0].system
    assert "**Current report ID: `9`**\nReport 9 has 12 articles." in system
    assert "```json" not in system


async def test_workflow_tool_hooks_inject_the_workflow_id_and_send_a_preview() -> None:
    seen: list[str] = []

    @tool(prepare=inject_from_context("workflow_id", uuid_only=True))
    def explain_workflow_node(workflow_id: str, node: str) -> str:
        """Explain one node."""
        seen.append(workflow_id)
        return "detail"

    @tool(intercept=preview_interceptor())
    def preview_workflow(description: str, workflow: dict[str, Any]) -> dict[str, Any]:
        """Validate a workflow and preview it."""
        return {"valid": True}

    agent = _agent(
        {
            "tool_calls": [
                {
                    "name": "explain_workflow_node",
                    "arguments": {"workflow_id": "Low Stock Alert", "node": "n1"},
                },
                {
                    "name": "preview_workflow",
                    "arguments": {"description": "Alert on low stock", "workflow": {"a": 1}},
                },
            ]
        },
        {"text": "I've sent a preview for your review."},
        tools=[explain_workflow_node, preview_workflow],
    )
    events = await run_chat(agent, ICHOR, context={"workflow_id": WORKFLOW_ID})
    assert seen == [WORKFLOW_ID]
    args = [e for e in events if isinstance(e, ToolCallArgs)]
    assert args[0].arguments == {"workflow_id": WORKFLOW_ID, "node": "n1"}
    [preview] = [e for e in events if isinstance(e, PayloadEvent)]
    assert preview.payload.kind == "workflow_preview"
    assert preview.payload.data == {
        "description": "Alert on low stock",
        "workflow": {"a": 1},
        "is_update": False,
    }
    results = provider_of(agent).requests[1].messages[-1]
    assert isinstance(results, ToolResultsMessage)
    assert results.results[1].content.startswith('{"status": "preview_sent"')
    done = shaped(events)
    assert done.custom_payload is not None
    assert done.custom_payload.payload_id == preview.payload.payload_id


async def test_a_failing_page_context_builder_falls_back_to_the_json() -> None:
    def broken(context: Any) -> str:
        raise KeyError("report_id")

    config = ChatConfig(pages=[Page(name="reports", context=broken)])
    agent = _agent({"text": "Ok."})
    done = shaped(await run_chat(agent, config, context={"current_page": "reports"}))
    assert done.message == "Ok."
    assert '```json\n{"current_page":"reports"}\n```' in provider_of(agent).requests[0].system


async def test_instructions_may_be_chosen_per_request() -> None:
    def per_stream(request: RunRequest) -> str | None:
        context = request.context or {}
        return f"Stream {context['stream_id']} studies CRISPR." if "stream_id" in context else None

    hooks = ChatHooks(ChatConfig(instructions=per_stream, suggestions=False))
    agent = _agent()
    with_stream = await hooks.system_prompt(
        agent, RunRequest(message="hi", principal=USER, context={"stream_id": 7}), ()
    )
    assert with_stream.section("custom_instructions") == (
        "## Instructions\nStream 7 studies CRISPR."
    )
    without = await hooks.system_prompt(agent, RunRequest(message="hi", principal=USER), ())
    assert without.names == ("identity", "capabilities")
    assert "SUGGESTED_VALUES" not in without.text


async def test_an_action_offered_by_the_app_and_its_page_is_listed_once() -> None:
    close = ClientAction(name="close_chat", description="Close the chat")
    page = Page(name="reports", client_actions=[close, ClientAction(name="open_article")])
    hooks = ChatHooks(ChatConfig(client_actions=[close], pages=[page]))
    prompt = await hooks.system_prompt(
        _agent(), RunRequest(message="hi", principal=USER, context={"current_page": "reports"})
    )
    assert prompt.text.count("`close_chat`") == 1
    assert "`open_article`" in prompt.text
