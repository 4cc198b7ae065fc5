"""Messages to rows and back, and the provider history a new run continues from.

A message is stored as its exact :data:`~agentstream.messages.MESSAGES_ADAPTER` JSON, so a
reload gives back equal values: reasoning signatures, redacted reasoning and each tool call's
``provider_data`` survive. What the store *does* change on the way out is what an interrupted
run leaves behind and a vendor would reject, and the results of a turn that waited for
answers (stored over two runs), which are joined: :func:`~agentstream.pending.provider_history`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentstream.messages import (
    MESSAGES_ADAPTER,
    AssistantMessage,
    Message,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.pending import INTERRUPTED_TOOL_RESULT, provider_history

__all__ = ["INTERRUPTED_TOOL_RESULT", "dump_message", "load_messages", "provider_history"]


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
