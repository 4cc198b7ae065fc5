"""Tool markers (002): ``[[tool:N]]`` in the text shows where tool call N's card belongs.

The ``tray`` dialect streams a marker after each ``tool_complete``; the final message keeps
them. Both use these functions, so the marker's form is written down once. The
``tool_history`` custom payload says what each marker's card shows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from agentstream.events import Payload, ToolHistoryEntry

__all__ = [
    "TOOL_MARKER",
    "insert_tool_markers",
    "strip_tool_markers",
    "tool_history_payload",
    "tool_marker",
]

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


def tool_history_payload(history: Iterable[ToolHistoryEntry]) -> Payload:
    """002's ``custom_payload {type: "tool_history", data: [{tool_name, input, output}]}``:
    what each ``[[tool:N]]`` card shows, in index order. ``output`` is text, as 002's cards
    show it; ``index`` and ``is_error`` are added so a card can find its marker and show a
    failure."""
    entries = sorted(history, key=lambda e: e.index)
    return Payload(
        kind="tool_history",
        data=[
            {
                "tool_name": e.tool_name,
                "input": e.input,
                "output": _as_text(e.output),
                "index": e.index,
                "is_error": e.is_error,
            }
            for e in entries
        ],
    )


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
