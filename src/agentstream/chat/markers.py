"""Tool markers (002): ``[[tool:N]]`` in the text shows where tool call N's card belongs.

The ``tray`` dialect streams a marker after each ``tool_complete``; the final message keeps
them. Both use these functions, so the marker's form is written down once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agentstream.events import ToolHistoryEntry

__all__ = ["TOOL_MARKER", "insert_tool_markers", "strip_tool_markers", "tool_marker"]

TOOL_MARKER = re.compile(r"\[\[tool:(\d+)\]\]")


def tool_marker(index: int) -> str:
    return f"[[tool:{index}]]"


def insert_tool_markers(message: str, history: Iterable[ToolHistoryEntry]) -> str:
    """Put each call's marker where its ``text_offset`` says, separated by blank lines:
    ``"Let me search.\\n\\n[[tool:0]]\\n\\nI found 5 articles."``."""
    parts: list[str] = []
    position = 0
    for entry in sorted(history, key=lambda e: (e.text_offset, e.index)):
        offset = min(max(entry.text_offset, position), len(message))
        parts.append(message[position:offset].rstrip("\n"))
        parts.append(tool_marker(entry.index))
        position = offset
    parts.append(message[position:].lstrip("\n"))
    return "\n\n".join(p for p in parts if p)


def strip_tool_markers(message: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", TOOL_MARKER.sub("", message)).strip()
