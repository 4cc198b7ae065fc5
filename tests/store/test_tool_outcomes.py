"""How each tool call ended is data (``ok``, ``error``, ``interrupted``, ``denied``), kept with
its result and shown as kept: never worked out again by comparing the result's text with
what the loop writes for a call it stopped."""

from __future__ import annotations

import json

from agentstream.messages import (
    AssistantMessage,
    ToolCall,
    ToolOutcome,
    ToolResultPart,
    ToolResultsMessage,
)
from agentstream.principal import Principal
from agentstream.store import SqlConversationStore
from agentstream.store.history import load_messages, result_outcome

from .helpers import run_id

STOPPED_TEXT = '{"error": "Interrupted before it finished"}'
"""What the loop gives the model for a call its run was stopped in the middle of."""


async def test_each_calls_outcome_is_stored_and_shown(
    store: SqlConversationStore, alice: Principal
) -> None:
    outcomes: list[tuple[str, str, ToolOutcome]] = [
        ("c1", "3 hits", "ok"),
        ("c2", '{"error": "no such page"}', "error"),
        ("c3", STOPPED_TEXT, "interrupted"),
        ("c4", '{"denied": true, "message": "The user did not approve this call."}', "denied"),
        # A tool whose answer happens to read like the loop's: it returned, it was not stopped.
        ("c5", STOPPED_TEXT, "ok"),
    ]
    rid = run_id()
    started = await store.start_run(alice, run_id=rid, conversation_id=None, user_message="Go")
    calls = tuple(ToolCall(id=call_id, name="fetch") for call_id, _, _ in outcomes)
    results = tuple(
        ToolResultPart(tool_call_id=call_id, name="fetch", content=content, outcome=outcome)
        for call_id, content, outcome in outcomes
    )
    await store.append_messages(
        alice,
        run_id=rid,
        conversation_id=started.conversation_id,
        messages=[
            AssistantMessage(text="Fetching.", tool_calls=calls),
            ToolResultsMessage(results=results),
        ],
    )
    await store.finish_run(
        alice, run_id=rid, conversation_id=started.conversation_id, messages=(), status="cancelled"
    )

    answer = (await store.get_conversation(alice, started.conversation_id)).messages[-1]
    shown = [(t.call_id, t.outcome, t.stopped, t.is_error) for t in answer.tool_history]
    assert shown == [
        ("c1", "ok", False, False),
        ("c2", "error", False, True),
        ("c3", "interrupted", True, True),
        ("c4", "denied", False, False),
        ("c5", "ok", False, False),
    ]
    history = await store.history(alice, started.conversation_id)
    stored = next(m for m in history if isinstance(m, ToolResultsMessage))
    assert [part.outcome for part in stored.results] == [o for _, _, o in outcomes]


def test_results_stored_before_outcomes_were_kept_read_as_they_were_meant() -> None:
    legacy = [
        {"tool_call_id": "a", "name": "t", "content": "fine", "is_error": False},
        {"tool_call_id": "b", "name": "t", "content": '{"error": "boom"}', "is_error": True},
        {"tool_call_id": "c", "name": "t", "content": STOPPED_TEXT, "is_error": True},
        {
            "tool_call_id": "d",
            "name": "t",
            "content": json.dumps({"denied": True}),
            "is_error": False,
        },
    ]
    assert [result_outcome(part) for part in legacy] == ["ok", "error", "interrupted", "denied"]
    [loaded] = load_messages([{"role": "tool", "results": legacy}])
    assert isinstance(loaded, ToolResultsMessage)
    assert [(p.outcome, p.is_error) for p in loaded.results] == [
        ("ok", False),
        ("error", True),
        ("interrupted", True),
        ("denied", False),
    ]
