"""What a tool gives back.

A tool may return a plain string (text for the model), any JSON-able value (serialised for the
model, shown as-is to clients that display results), or a :class:`ToolResult` separating the
text the model reads from a payload only the client sees (003). A streaming tool is a generator
that yields :class:`Progress` updates and finally a result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentstream.events import Payload

__all__ = ["Progress", "ToolResult"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    text: str
    """What the model reads."""
    payload: Payload | None = None
    """Structured data for the client only (a preview, search results)."""
    output: Any = None
    """The value clients that display tool results see (004 ``tool_end.result``); defaults to
    ``text``."""
    display: str | None = None
    """Friendly text for clients when the call ends ("Admin alerted, ticket #42"), as the tool's
    ``display`` hook gives it when the call starts (004 ``tool_end.display``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    """A progress update from a long-running tool (002 ``tool_progress``)."""

    stage: str | None = None
    message: str | None = None
    fraction: float | None = None
    data: Any = None
