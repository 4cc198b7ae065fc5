"""A stored conversation as the AI SDK's UI messages, for ``useChat({messages})`` after a
reload (``GET /ai-sdk/chat/{id}/messages``).

The shapes are the ones the stream builds, so a message loaded here looks like the one the
client streamed: an answer's id is its run's (the stream's ``start.messageId``), its text is
split around its tool calls where they happened, each call is a ``tool-<name>`` part with its
input and its output or error, and the reasoning comes first. An answer continued by
approval responses is stored as two runs and shown, as it streamed, as one message. Calls
still waiting for a person's approval end the last answer in state ``approval-requested``, so
a reloaded page can still answer them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from agentstream.attachments.types import Attachment
from agentstream.messages import PendingToolCall
from agentstream.server.attachments import attachment_url

if TYPE_CHECKING:
    from agentstream.store.views import DisplayMessage, DisplayToolCall

__all__ = ["STOPPED_TEXT", "file_part", "ui_messages"]

STOPPED_TEXT = "The answer was stopped before the tool returned."


def ui_messages(
    messages: Iterable[DisplayMessage], waiting: Sequence[PendingToolCall] = ()
) -> list[dict[str, Any]]:
    """``messages`` (a stored conversation, oldest first) as UI messages; ``waiting``: the
    calls its last turn leaves open (:func:`agentstream.pending.open_calls`)."""
    shown: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "user":
            text = {"type": "text", "text": message.content, "state": "done"}
            files = [file_part(attachment) for attachment in message.attachments]
            shown.append({"id": message.id, "role": "user", "parts": [*files, text]})
            continue
        parts = [{"type": "step-start"}, *_answer_parts(message)]
        metadata = {"status": message.status}
        if shown and shown[-1]["role"] == "assistant":  # the same answer, continued
            shown[-1]["parts"].extend(parts)
            shown[-1]["metadata"] = metadata
        else:
            shown.append(
                {"id": message.id, "role": "assistant", "parts": parts, "metadata": metadata}
            )
    if shown and shown[-1]["role"] == "assistant":
        asking = [_asking(call) for call in waiting if call.waiting_for == "approval"]
        shown[-1]["parts"].extend(asking)
    return shown


def file_part(attachment: Attachment) -> dict[str, Any]:
    """An attachment as a ``file`` part, at its URL here: the part ``sendMessage({files})``
    made of a user's file (which the client may send back), and the ``file`` chunk that
    adds a tool's file to the answer after the tool's output."""
    return {
        "type": "file",
        "mediaType": attachment.media_type,
        "filename": attachment.name,
        "url": attachment_url(attachment.id),
    }


def _asking(call: PendingToolCall) -> dict[str, Any]:
    """A call waiting for approval, as ``tool-approval-request`` left it in the client."""
    return {
        "type": f"tool-{call.name}",
        "toolCallId": call.call_id,
        "state": "approval-requested",
        "input": call.arguments,
        "approval": {"id": call.call_id},
    }


def _answer_parts(message: DisplayMessage) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if message.reasoning:
        parts.append({"type": "reasoning", "text": message.reasoning, "state": "done"})
    text, position = message.content, 0
    for call in sorted(message.tool_history, key=lambda c: (c.text_offset, c.index)):
        offset = min(max(call.text_offset, position), len(text))
        parts.extend(_text(text[position:offset]))
        parts.append(_tool(call))
        parts.extend(file_part(attachment) for attachment in call.attachments)
        position = offset
    parts.extend(_text(text[position:]))
    return parts


def _text(text: str) -> list[dict[str, Any]]:
    # Whitespace too: the parts join to exactly the text the client streamed.
    return [{"type": "text", "text": text, "state": "done"}] if text else []


def _tool(call: DisplayToolCall) -> dict[str, Any]:
    part: dict[str, Any] = {
        "type": f"tool-{call.tool_name}",
        "toolCallId": call.call_id,
        "input": call.input,
    }
    if call.display:
        part["title"] = call.display
    if call.stopped:
        return part | {"state": "output-error", "errorText": STOPPED_TEXT}
    if call.is_error:
        error = call.output.get("error") if isinstance(call.output, dict) else call.output
        return part | {"state": "output-error", "errorText": str(error)}
    return part | {"state": "output-available", "output": call.output}
