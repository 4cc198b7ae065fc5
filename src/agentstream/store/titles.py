"""Conversation titles.

004 shows ``conversation_title`` in its very first event, so a new conversation gets a title
at once, cut from the first message. A better one can come from the model afterwards (the
runner's ``titles`` option): ``SqlConversationStore.set_generated_title`` stores it unless the
user renamed the conversation meanwhile.
"""

from __future__ import annotations

import re

__all__ = ["DEFAULT_TITLE", "TITLE_CHARS", "title_from_message"]

TITLE_CHARS = 60
DEFAULT_TITLE = "New conversation"
_WHITESPACE = re.compile(r"\s+")


def title_from_message(text: str, limit: int = TITLE_CHARS) -> str:
    """The message on one line, cut at a word boundary to at most ``limit`` characters
    (an ellipsis marks the cut)."""
    line = _WHITESPACE.sub(" ", text).strip()
    if not line:
        return DEFAULT_TITLE
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:-") + "…"
