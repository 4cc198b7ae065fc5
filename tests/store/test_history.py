"""Messages to rows and back, and the repairs that keep a provider history valid."""

from __future__ import annotations

from agentstream.messages import (
    AssistantMessage,
    Message,
    Reasoning,
    ToolCall,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.store.history import (
    INTERRUPTED_TOOL_RESULT,
    dump_message,
    load_messages,
    provider_history,
)

CALL_A = ToolCall(id="a", name="first", arguments={"n": 1}, provider_data={"sig": "x"})
CALL_B = ToolCall(id="b", name="second")


def interrupted(call: ToolCall) -> ToolResultPart:
    return ToolResultPart(
        tool_call_id=call.id, name=call.name, content=INTERRUPTED_TOOL_RESULT, outcome="interrupted"
    )


def test_round_trip_is_exact() -> None:
    messages: list[Message] = [
        UserMessage(content="hi ✓"),
        AssistantMessage(
            text="t",
            reasoning=(Reasoning(text="r", signature="s", provider="anthropic"),),
            tool_calls=(CALL_A,),
        ),
        ToolResultsMessage(
            results=(ToolResultPart(tool_call_id="a", name="first", content="e", outcome="error"),)
        ),
    ]
    rows = [dump_message(message) for message in messages]
    assert [(role, text, reasoning) for role, text, reasoning, _ in rows] == [
        ("user", "hi ✓", None),
        ("assistant", "t", "r"),
        ("tool", "", None),
    ]
    assert load_messages(body for *_, body in rows) == messages


def test_a_complete_history_is_unchanged() -> None:
    messages: list[Message] = [
        UserMessage(content="q"),
        AssistantMessage(text="calling", tool_calls=(CALL_A, CALL_B)),
        ToolResultsMessage(
            results=(
                ToolResultPart(tool_call_id="a", name="first", content="1"),
                ToolResultPart(tool_call_id="b", name="second", content="2"),
            )
        ),
        AssistantMessage(text="done"),
        UserMessage(content="q2"),
    ]
    assert provider_history(messages) == messages


def test_unanswered_calls_get_interrupted_results() -> None:
    partial = AssistantMessage(text="calling", tool_calls=(CALL_A, CALL_B))
    assert provider_history([UserMessage(content="q"), partial, UserMessage(content="q2")]) == [
        UserMessage(content="q"),
        partial,
        ToolResultsMessage(results=(interrupted(CALL_A), interrupted(CALL_B))),
        UserMessage(content="q2"),
    ]


def test_partly_answered_calls_are_completed_in_place() -> None:
    partial = AssistantMessage(tool_calls=(CALL_A, CALL_B))
    got_a = ToolResultPart(tool_call_id="a", name="first", content="1")
    assert provider_history([partial, ToolResultsMessage(results=(got_a,))]) == [
        partial,
        ToolResultsMessage(results=(got_a, interrupted(CALL_B))),
    ]


def test_empty_answers_are_dropped() -> None:
    assert provider_history(
        [UserMessage(content="q"), AssistantMessage(), UserMessage(content="again")]
    ) == [UserMessage(content="q"), UserMessage(content="again")]
