"""Tool markers (chat tray): ``[[tool:N]]`` in the text shows where tool call N's card belongs.

The ``tray`` dialect streams a marker after each ``tool_complete``; the final message keeps
them. Both use these functions, so the marker's form is written down once. The
``tool_history`` custom payload says what each marker's card shows.

A model can write ``[[tool:0]]`` too (a prompt injection, a page it quotes). In the stream a
client tells the two apart by where the marker comes (the delta right after
``tool_complete``); in a final message it could not, so :func:`insert_tool_markers` defuses
the model's look-alikes first (:func:`defuse_tool_markers`), and every marker a client finds
there is a real call's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from agentstream.conversation import attachment_json
from agentstream.events import Payload, ToolHistoryEntry

__all__ = [
    "TOOL_MARKER",
    "MarkerLineFilter",
    "defuse_tool_markers",
    "insert_tool_markers",
    "strip_tool_markers",
    "tool_history_entry",
    "tool_history_payload",
    "tool_marker",
]

TOOL_MARKER = re.compile(r"\[\[tool:(\d+)\]\]")

WORD_JOINER = "\u2060"
"""Invisible, and never part of a marker: what :func:`defuse_tool_markers` puts in a look-alike."""


def tool_marker(index: int) -> str:
    """The marker for tool call ``index`` (zero-based, in call order): ``[[tool:0]]``."""
    return f"[[tool:{index}]]"


def defuse_tool_markers(text: str) -> str:
    """``text`` with each marker look-alike made inert and shown the same: a word joiner
    (U+2060, invisible) after ``tool``, so ``[[tool:0]]`` written by a model reads as it was
    written and is no card."""
    return TOOL_MARKER.sub(lambda m: f"[[tool{WORD_JOINER}:{m[1]}]]", text)


def insert_tool_markers(message: str, history: Iterable[ToolHistoryEntry]) -> str:
    """Put each call's marker where its ``text_offset`` says, separated by blank lines:
    ``"Let me search.\\n\\n[[tool:0]]\\n\\nI found 5 articles."``. What only looks like a
    marker in ``message`` is defused, so the markers in the result are exactly the calls'."""
    entries = sorted(history, key=lambda e: (e.text_offset, e.index))
    if not entries:
        return defuse_tool_markers(message)
    parts: list[str] = []
    position = 0
    for entry in entries:
        offset = min(max(entry.text_offset, position), len(message))
        parts.append(defuse_tool_markers(message[position:offset].rstrip("\n")))
        parts.append(tool_marker(entry.index))
        position = offset
    parts.append(defuse_tool_markers(message[position:].lstrip("\n")))
    return "\n\n".join(p for p in parts if p)


def strip_tool_markers(message: str) -> str:
    """``message`` without its tool markers, for clients and titles that show plain text."""
    return re.sub(r"\n{3,}", "\n\n", TOOL_MARKER.sub("", message)).strip()


def tool_history_entry(entry: ToolHistoryEntry) -> dict[str, Any]:
    """What the ``[[tool:N]]`` card of one call shows: ``{tool_name, input, output, index,
    is_error}``, plus ``display`` when the tool gave one. ``output`` is text, as the tray's
    cards show it; ``index`` and ``is_error`` let a card find its marker and show a failure.
    The one shape of a tool history entry, wherever a client gets one."""
    shown: dict[str, Any] = {
        "tool_name": entry.tool_name,
        "input": entry.input,
        "output": _as_text(entry.output),
        "index": entry.index,
        "is_error": entry.is_error,
    }
    if entry.display:
        shown["display"] = entry.display
    if entry.attachments:  # only then: what clients saw before files stays the same
        shown["attachments"] = [attachment_json(a) for a in entry.attachments]
    return shown


def tool_history_payload(history: Iterable[ToolHistoryEntry]) -> Payload:
    """The tray's ``custom_payload {type: "tool_history", data: [...]}``: each call's
    :func:`tool_history_entry`, in index order."""
    entries = sorted(history, key=lambda e: e.index)
    return Payload(kind="tool_history", data=[tool_history_entry(e) for e in entries])


def _as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class MarkerLineFilter:
    """Withholds marker blocks from streamed text.

    The model is asked to end its answer with marker lines (``SUGGESTED_VALUES: [...]``,
    ``SCHEMA_PROPOSAL: {...}``) that the final message has parsed out; a client that shows the
    stream would flash their JSON first. Only the ``markers`` the deployment knows are held
    back, and only while a line can still become one: text that starts a line and is a prefix
    of a known marker waits for the next delta; once a known marker opens a ``[`` or ``{``
    block, the rest of the turn is withheld (the markers come last, and the final message
    carries what follows them cleaned). Any other line, ``NOTE: [optional]`` included, passes
    at once, and mid-line text passes with one membership test.
    """

    __slots__ = ("_held", "_hiding", "_line_start", "_markers")

    def __init__(self, markers: Iterable[str]) -> None:
        self._markers = tuple(m if m.endswith(":") else m + ":" for m in markers)
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
                state = self._classify(line)
                if state == "marker":
                    self._hiding = True
                    break
                if end < 0:
                    if state == "maybe":
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

    def _classify(self, line: str) -> str:
        """``marker`` (a known marker opened a block), ``maybe`` (it still could), or
        ``text``."""
        if not line:
            return "maybe"
        for marker in self._markers:
            if marker.startswith(line):
                return "maybe"
            if line.startswith(marker):
                rest = line[len(marker) :].lstrip(" \t")
                if not rest:
                    return "maybe"
                if rest[0] in "[{":
                    return "marker"
        return "text"

    def flush(self) -> str:
        """Text held back when the answer ended: it was not a marker after all."""
        held, self._held = self._held, ""
        return "" if self._hiding else held
