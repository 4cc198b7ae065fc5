"""Messages to rows and back, and the provider history a new run continues from.

A message is stored as its exact :data:`~agentstream.messages.MESSAGES_ADAPTER` JSON, so a
reload gives back equal values: reasoning signatures, redacted reasoning and each tool call's
``provider_data`` survive. A tool result's ``outcome`` is stored with it; results stored
before outcomes were kept have only ``is_error``, and :func:`result_outcome` reads theirs
from what those versions wrote. What the store *does* change on the way out is what an interrupted
run leaves behind and a vendor would reject, and the results of a turn that waited for
answers (stored over two runs), which are joined: :func:`~agentstream.pending.provider_history`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, cast, get_args

from agentstream.messages import (
    MESSAGES_ADAPTER,
    AssistantMessage,
    Message,
    ToolOutcome,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.pending import INTERRUPTED_TOOL_RESULT, provider_history

__all__ = [
    "INTERRUPTED_TOOL_RESULT",
    "dump_message",
    "load_messages",
    "provider_history",
    "result_outcome",
]

_OUTCOMES = frozenset(get_args(ToolOutcome))
_STOPPED_BEFORE = '{"error": "Interrupted before it finished"}'
"""What versions that kept no outcome wrote for a call its run was stopped in the middle of."""


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
    return MESSAGES_ADAPTER.validate_python([_with_outcomes(body) for body in bodies])


def result_outcome(part: dict[str, Any]) -> ToolOutcome:
    """The outcome of a stored tool result (a message body's ``results`` entry)."""
    outcome = part.get("outcome")
    if isinstance(outcome, str) and outcome in _OUTCOMES:
        return cast(ToolOutcome, outcome)
    content = part.get("content")
    if part.get("is_error"):
        return "interrupted" if content == _STOPPED_BEFORE else "error"
    return "denied" if _reads_as_denial(content) else "ok"


def _with_outcomes(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with an outcome on each of its tool results (those stored before outcomes
    were kept get theirs from :func:`result_outcome`)."""
    results = body.get("results") if body.get("role") == "tool" else None
    if not results or all("outcome" in part for part in results):
        return body
    return {**body, "results": [{**part, "outcome": result_outcome(part)} for part in results]}


def _reads_as_denial(content: object) -> bool:
    if not isinstance(content, str) or not content.startswith('{"denied"'):
        return False
    try:
        return json.loads(content).get("denied") is True
    except (ValueError, AttributeError):
        return False
