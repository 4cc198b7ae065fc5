"""Finding ``MARKER: <json>`` blocks in a model's answer.

Models announce structured output with a marker followed by JSON (the tray's ``SUGGESTED_VALUES:
[...]`` or ``SCHEMA_PROPOSAL: {...}``). The JSON ends where its brackets balance, which a
regular expression cannot find: strings may contain brackets, quotes may be escaped, and text
may follow on the same line. :func:`find_blocks` scans once, honouring JSON strings, and reports
each occurrence either with its parsed value or with the reason it could not be read, so callers
remove the good blocks and leave broken ones in the text where nothing is lost.

Models also like to wrap the JSON in a code fence (``SUGGESTED_VALUES:\\n```json\\n[...]\\n```
``); the fence is accepted and removed with the block.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Cut", "MarkedBlock", "cut", "find_blocks"]

_FENCE_OPEN = re.compile(r"[ \t]*\n?[ \t]*```[a-zA-Z]*[ \t]*\n")
_FENCE_CLOSE = re.compile(r"\s*```")


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkedBlock:
    """One ``marker`` occurrence followed by JSON. ``start``/``end`` delimit the text to remove
    (marker, JSON and any code fence). ``error`` is set when the JSON is unreadable; then
    ``value`` is ``None`` and the block should stay in the text."""

    marker: str
    start: int
    end: int
    value: Any = None
    error: str | None = None


def find_blocks(text: str, marker: str) -> list[MarkedBlock]:
    """Every occurrence of ``marker`` that is followed by a JSON array or object.

    An occurrence followed by anything else (prose that merely mentions the marker) is not a
    block and is not reported.
    """
    blocks: list[MarkedBlock] = []
    position = 0
    while True:
        start = text.find(marker, position)
        if start < 0:
            return blocks
        block = _read_block(text, marker, start)
        position = start + len(marker)
        if block is not None:
            blocks.append(block)
            if block.error is None:
                position = block.end


def _read_block(text: str, marker: str, start: int) -> MarkedBlock | None:
    cursor = start + len(marker)
    fence = _FENCE_OPEN.match(text, cursor)
    if fence is not None:
        cursor = fence.end()
    while cursor < len(text) and text[cursor] in " \t\r\n":
        cursor += 1
    if cursor >= len(text) or text[cursor] not in "[{":
        return None
    end = _balanced_end(text, cursor)
    if end is None:
        return MarkedBlock(
            marker=marker, start=start, end=len(text), error="the JSON is not terminated"
        )
    try:
        value = json.loads(text[cursor:end])
    except json.JSONDecodeError as exc:
        return MarkedBlock(marker=marker, start=start, end=end, error=f"invalid JSON ({exc.msg})")
    if fence is not None:
        closing = _FENCE_CLOSE.match(text, end)
        if closing is not None:
            end = closing.end()
    return MarkedBlock(marker=marker, start=start, end=end, value=value)


def _balanced_end(text: str, begin: int) -> int | None:
    """The index just past the bracket that closes ``text[begin]``, or ``None``."""
    depth = 0
    in_string = False
    escaped = False
    for index in range(begin, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


_SPACE = " \t\r\n"


Seam = tuple[int, int, int]
"""``(start, end, kept)``: the ``[start, end)`` of a text became ``kept`` characters of
whitespace."""


@dataclass(frozen=True, slots=True)
class Cut:
    """A text with blocks cut out: what is left, and where each position of the original went,
    so that whatever pointed into the original (a tool call's ``text_offset``) points at the
    same place in what is left."""

    text: str
    steps: tuple[tuple[Seam, ...], ...] = ()
    """The seams of each cut, in order; each cut's positions are those of the text the
    previous one left."""

    def moved(self, offset: int) -> int:
        """Where ``offset`` of the original is in :attr:`text` (a position inside a removed
        block goes to the end of its seam)."""
        for seams in self.steps:
            offset = _moved(seams, offset)
        return offset

    def then(self, later: Cut) -> Cut:
        """This cut followed by ``later``, a cut of this one's text, as one cut."""
        return Cut(later.text, self.steps + later.steps)


def _moved(seams: tuple[Seam, ...], offset: int) -> int:
    shift = 0
    for start, end, kept in seams:
        if offset <= start:
            break
        if offset < end:
            return start - shift + kept
        shift += end - start - kept
    return offset - shift


def cut(text: str, spans: Iterable[tuple[int, int]]) -> Cut:
    """``text`` without the given ``(start, end)`` spans (which must not overlap), touching
    nothing else: only the whitespace around each span becomes one seam. A seam at the start
    or end of the text is removed; elsewhere it keeps the break it stood in (a blank line, a
    line break, or a space). Blocks separated by whitespace alone share one seam."""
    regions: list[list[int]] = []  # [start, end, line breaks before, line breaks after]
    for start, end in sorted(spans):
        before = start
        while before > 0 and text[before - 1] in _SPACE:
            before -= 1
        after = end
        while after < len(text) and text[after] in _SPACE:
            after += 1
        breaks_before = text.count("\n", before, start)
        breaks_after = text.count("\n", end, after)
        if regions and before <= regions[-1][1]:
            regions[-1][1], regions[-1][3] = after, breaks_after
        else:
            regions.append([before, after, breaks_before, breaks_after])
    kept: list[str] = []
    seams: list[Seam] = []
    position = 0
    for start, end, breaks_before, breaks_after in regions:
        kept.append(text[position:start])
        if start == 0 or end == len(text):
            seam = ""
        else:
            breaks = min(max(breaks_before, breaks_after), 2)
            seam = "\n" * breaks if breaks else " "
        kept.append(seam)
        seams.append((start, end, len(seam)))
        position = end
    kept.append(text[position:])
    return Cut("".join(kept), (tuple(seams),) if seams else ())
