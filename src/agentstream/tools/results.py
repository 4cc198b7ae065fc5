"""What a tool gives back.

A tool may return a plain string (text for the model), any JSON-able value (serialised for the
model, shown as-is to clients that display results), or a :class:`ToolResult` separating the
text the model reads from a payload only the client sees. A streaming tool is a generator
that yields :class:`Progress` updates and finally a result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentstream.attachments.types import Attachment
from agentstream.events import Payload

__all__ = ["Progress", "ToolResult"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """A tool's answer with the model's part (``text``) and the client's (``output``, and a
    ``payload`` card) kept apart, e.g. ``ToolResult(text="3 articles match.",
    output=matches, payload=Payload(kind="search_results", data=matches))``."""

    text: str
    """What the model reads."""
    payload: Payload | None = None
    """Structured data for the client only (a preview, search results)."""
    output: Any = None
    """The value clients that display tool results see (the ops agent's ``tool_end.result``);
    defaults to ``text``."""
    attachments: tuple[Attachment, ...] = ()
    """Files the model reads beside ``text`` (images, kept with
    :meth:`ToolContext.attach <agentstream.tools.ToolContext.attach>`)."""
    display: str | None = None
    """Friendly text for clients when the call ends ("Admin alerted, ticket #42"), as the tool's
    ``display`` hook gives it when the call starts (the ops agent's ``tool_end.display``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    """A progress update from a long-running tool (the chat tray's ``tool_progress``)."""

    stage: str | None = None
    message: str | None = None
    fraction: float | None = None
    data: Any = None
