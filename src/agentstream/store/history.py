"""Messages to rows and back, and the provider history a new run continues from.

A message is stored as its exact :data:`~agentstream.messages.MESSAGES_ADAPTER` JSON, so a
reload gives back equal values: reasoning signatures, redacted reasoning and each tool call's
``provider_data`` survive. What the store *does* change on the way out is what an interrupted
run leaves behind and a vendor would reject (:func:`provider_history`):

* an assistant turn whose tool calls never got results (the run stopped while the tools ran)
  gets a synthetic error result per missing call, so every call has its answer and the model
  learns the call did not complete;
* an assistant message with no text, reasoning or tool calls (cancelled before the first
  token) is dropped;
* tool results that answer no tool call of the assistant turn before them are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agentstream.messages import (
    MESSAGES_ADAPTER,
    AssistantMessage,
    Message,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)

__all__ = ["INTERRUPTED_TOOL_RESULT", "dump_message", "load_messages", "provider_history"]

INTERRUPTED_TOOL_RESULT = '{"error": "The tool call was interrupted before it returned a result."}'
"""What the model reads for a call that never returned, in the shape of every tool error."""


def dump_message(message: Message) -> tuple[str, str, str | None, dict[str, Any]]:
    """``(role, text, reasoning, body)`` for a message row."""
    body: dict[str, Any] = MESSAGES_ADAPTER.dump_python([message], mode="json")[0]
    match message:
        case UserMessage():
            return "user", message.content, None, body
        case AssistantMessage():
            reasoning = "\n\n".join(block.text for block in message.reasoning if block.text)
            return "assistant", message.text, reasoning or None, body
        case ToolResultsMessage():
            return "tool", "", None, body
    raise TypeError(f"not a message: {type(message).__name__}")


def load_messages(bodies: Iterable[dict[str, Any]]) -> list[Message]:
    return MESSAGES_ADAPTER.validate_python(list(bodies))


def provider_history(messages: Sequence[Message]) -> list[Message]:
    """``messages`` made safe to send to a provider (see the module docstring)."""
    repaired: list[Message] = []
    position = 0
    while position < len(messages):
        message = messages[position]
        position += 1
        if isinstance(message, ToolResultsMessage):
            continue  # results whose tool calls are not in the history: a vendor refuses them
        if not isinstance(message, AssistantMessage):
            repaired.append(message)
            continue
        if not (message.text or message.reasoning or message.tool_calls):
            continue
        repaired.append(message)
        if not message.tool_calls:
            continue
        results: tuple[ToolResultPart, ...] = ()
        if position < len(messages):
            following = messages[position]
            if isinstance(following, ToolResultsMessage):
                called = {call.id for call in message.tool_calls}
                results = tuple(part for part in following.results if part.tool_call_id in called)
                position += 1
        answered = {part.tool_call_id for part in results}
        missing = tuple(
            ToolResultPart(
                tool_call_id=call.id,
                name=call.name,
                content=INTERRUPTED_TOOL_RESULT,
                is_error=True,
            )
            for call in message.tool_calls
            if call.id not in answered
        )
        if missing or results:
            repaired.append(ToolResultsMessage(results=results + missing))
    return repaired
