"""Conversation titles.

The ops agent protocol shows ``conversation_title`` in its very first event, so a new conversation
gets a title at once, cut from the first message. A better one can come from the model afterwards
(the runner's ``titles`` option): ``SqlConversationStore.set_generated_title`` stores it unless the
user renamed the conversation meanwhile.
"""

from __future__ import annotations

import re

__all__ = ["DEFAULT_TITLE", "TITLE_CHARS", "clean_title", "title_from_message"]

TITLE_CHARS = 60
DEFAULT_TITLE = "New conversation"
_WHITESPACE = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean_title(title: str, limit: int) -> str:
    """A title a user chose, on one line: control characters and runs of whitespace become
    one space. Raises ``ValueError`` when nothing is left or it is longer than ``limit``."""
    line = _WHITESPACE.sub(" ", _CONTROL.sub(" ", title)).strip()
    if not 1 <= len(line) <= limit:
        raise ValueError(f"title must be 1 to {limit} characters")
    return line


def title_from_message(text: str, limit: int = TITLE_CHARS) -> str:
    """The message on one line, cut at a word boundary to at most ``limit`` characters
    (an ellipsis marks the cut)."""
    line = _WHITESPACE.sub(" ", _CONTROL.sub(" ", text)).strip()
    if not line:
        return DEFAULT_TITLE
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:-") + "…"
