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
    "MarkerLineFilter",
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


_MARKER_LINE = re.compile(r"[A-Z][A-Z0-9_]{2,}:[ \t]*[\[{]")
"""A line that opens a ``MARKER: [json`` or ``MARKER: {json`` block (``SUGGESTED_VALUES:``,
``SCHEMA_PROPOSAL:``, ...)."""
_MARKER_PREFIX = re.compile(r"[A-Z][A-Z0-9_]*(:[ \t]*)?")
"""The start of a line that may still become one."""


class MarkerLineFilter:
    """Withholds marker blocks from streamed text.

    The model is asked to end its answer with ``SUGGESTED_VALUES: [...]`` lines and payload
    markers; the final message has them parsed out (003), but a client that shows the stream
    would flash their JSON first. Text that starts a line and could still become a marker is
    held back for a moment; once a marker line opens, the rest of the turn is withheld (the
    markers come last, and the final message carries what follows them cleaned). Mid-line
    text passes straight through, so the per-delta cost is one membership test.
    """

    __slots__ = ("_held", "_hiding", "_line_start")

    def __init__(self) -> None:
        self._line_start = True
        self._held = ""
        self._hiding = False

    def new_turn(self) -> None:
        """A new model turn is a new paragraph of the answer."""
        self._line_start, self._hiding = True, False

    def feed(self, text: str) -> str:
        """The part of ``text`` to show now."""
        if self._hiding:
            return ""
        if not self._line_start and not self._held and "\n" not in text:
            return text
        buffer, self._held = self._held + text, ""
        shown: list[str] = []
        position = 0
        while position < len(buffer):
            end = buffer.find("\n", position)
            line = buffer[position:] if end < 0 else buffer[position:end]
            if self._line_start:
                if _MARKER_LINE.match(line):
                    self._hiding = True
                    break
                if end < 0:
                    if not line or _MARKER_PREFIX.fullmatch(line):
                        self._held = line  # may still become a marker
                        break
                    self._line_start = False
            if end < 0:
                shown.append(line)
                break
            shown.append(line + "\n")
            position = end + 1
            self._line_start = True
        return "".join(shown)

    def flush(self) -> str:
        """Text held back when the answer ended: it was not a marker after all."""
        held, self._held = self._held, ""
        return "" if self._hiding else held
