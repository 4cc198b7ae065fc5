from __future__ import annotations

import json

from agentstream import Agent
from agentstream.chat import ChatConfig
from agentstream.chat.redaction import REDACTED
from agentstream.events import RunCompleted, event_to_json
from agentstream.messages import (
    AssistantMessage,
    Reasoning,
    ToolCall,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.principal import Principal

from .helpers import run_chat, scripted, shaped
from .test_hooks import search_articles

BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNlY3JldA"
API_KEY = "sk-test-4f9d8c7b6a5e4d3c2b1a"
ALICE = Principal(user_id="alice", token=BEARER, claims={"scope": "chat"})
RAW = 'The answer.\nSUGGESTED_VALUES: [{"label": "More", "value": "more"}]'


async def _diagnosed(**request: object) -> RunCompleted:
    agent = Agent(
        model=scripted(
            {
                "text": "Looking.",
                "tool_calls": [{"name": "search_articles", "arguments": {"query": "x"}}],
            },
            {"text": RAW},
        ),
        tools=[search_articles],
        instructions="You are careful.",
        max_tokens=2000,
        max_turns=5,
        temperature=0.0,
    )
    context = {
        "current_page": "reports",
        "api_key": API_KEY,
        "nested": {"Authorization": f"Bearer {BEARER}", "note": f"my key is {API_KEY}"},
    }
    return shaped(
        await run_chat(
            agent,
            ChatConfig(),
            principal=ALICE,
            context=context,
            history=[UserMessage(content="earlier"), AssistantMessage(text="reply")],
            **request,
        )
    )


async def test_diagnostics_show_what_the_model_got_and_said() -> None:
    done = await _diagnosed(diagnostics=True)
    diagnostics = done.diagnostics
    assert diagnostics is not None
    assert diagnostics["model"] == "scripted:script"
    assert diagnostics["max_tokens"] == 2000
    assert diagnostics["max_iterations"] == 5
    assert diagnostics["temperature"] == 0.0
    assert diagnostics["tools"] == ["search_articles"]
    assert diagnostics["system_prompt"].startswith("You are careful.\n\n## Context")
    # Each message is {"role", "content"}, not our internal history shape.
    assert diagnostics["messages"] == [
        {"role": "user", "content": "earlier"},
        {"role": "assistant", "content": "reply"},
        {"role": "user", "content": "hello"},
    ]
    assert diagnostics["context"]["current_page"] == "reports"
    assert diagnostics["raw_llm_response"] == "Looking.\n\n" + RAW
    assert done.message == "Looking.\n\nThe answer."


async def test_diagnostics_never_carry_the_token_or_keys_anywhere() -> None:
    done = await _diagnosed(diagnostics=True)
    serialised = event_to_json(done).decode()
    assert BEARER not in serialised
    assert API_KEY not in serialised
    assert "c2lnbmF0dXJlLXNlY3JldA" not in serialised  # not even part of the token
    diagnostics = done.diagnostics
    assert diagnostics is not None
    assert diagnostics["context"]["api_key"] == REDACTED
    assert diagnostics["context"]["nested"]["Authorization"] == REDACTED
    assert diagnostics["context"]["nested"]["note"] == f"my key is {REDACTED}"
    assert REDACTED in diagnostics["system_prompt"]
    json.loads(serialised)


async def test_diagnostics_are_off_unless_the_request_enables_them() -> None:
    done = await _diagnosed()
    assert done.diagnostics is None
    assert API_KEY not in event_to_json(done).decode()


async def test_parse_problems_are_reported_in_diagnostics() -> None:
    agent = Agent(model=scripted({"text": "Hi.\nSUGGESTED_VALUES: [oops]"}))
    done = shaped(await run_chat(agent, ChatConfig(), diagnostics=True))
    assert done.diagnostics is not None
    assert done.diagnostics["parse_warnings"] == [
        "SUGGESTED_VALUES: ignored: invalid JSON (Expecting value); the text was left as written"
    ]


async def test_diagnostics_list_tool_round_trips_as_role_and_content_messages() -> None:
    """A stored tool round trip reads as the tray's diagnostics show it: the assistant's text as
    ``content`` (its calls beside it), the results as a user message of ``tool_result`` blocks; no
    reasoning signatures or vendor data."""
    history = [
        UserMessage(content="find CRISPR"),
        AssistantMessage(
            text="Searching.",
            reasoning=(Reasoning(text="think", signature="sig-opaque"),),
            tool_calls=(ToolCall(id="t1", name="search_articles", arguments={"query": "CRISPR"}),),
        ),
        ToolResultsMessage(
            results=(
                ToolResultPart(tool_call_id="t1", name="search_articles", content="5 found"),
                ToolResultPart(
                    tool_call_id="t2", name="broken", content='{"error":"x"}', outcome="error"
                ),
            )
        ),
        AssistantMessage(text="Found 5."),
    ]
    agent = Agent(model=scripted({"text": "Sure."}))
    done = shaped(await run_chat(agent, ChatConfig(), history=history, diagnostics=True))
    assert done.diagnostics is not None
    assert done.diagnostics["messages"] == [
        {"role": "user", "content": "find CRISPR"},
        {
            "role": "assistant",
            "content": "Searching.",
            "tool_calls": [{"id": "t1", "name": "search_articles", "input": {"query": "CRISPR"}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "5 found"},
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "content": '{"error":"x"}',
                    "is_error": True,
                },
            ],
        },
        {"role": "assistant", "content": "Found 5."},
        {"role": "user", "content": "hello"},
    ]
