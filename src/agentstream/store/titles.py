"""Conversation titles.

004 shows ``conversation_title`` in its very first event, so a new conversation gets a title
at once, cut from the first message. A better one can come from the model afterwards:
:func:`retitle` runs a :data:`TitleGenerator` (any async function from the first message to a
title, typically a short model call) and stores its answer unless the user renamed the
conversation meanwhile. Calling it is left to the application (e.g. as a background task after
the first run); nothing in agentstream calls it yet.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from agentstream.principal import Principal

if TYPE_CHECKING:
    from agentstream.store.repository import SqlConversationStore

__all__ = ["DEFAULT_TITLE", "TITLE_CHARS", "TitleGenerator", "retitle", "title_from_message"]

TITLE_CHARS = 60
DEFAULT_TITLE = "New conversation"
_WHITESPACE = re.compile(r"\s+")

TitleGenerator = Callable[[str], Awaitable[str | None]]
"""Given the first user message, return a title (or None to keep the current one)."""


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


async def retitle(
    store: SqlConversationStore,
    principal: Principal,
    conversation_id: str,
    first_message: str,
    generate: TitleGenerator,
) -> str | None:
    """Ask ``generate`` for a title and store it if the title still came from the first
    message. Returns the stored title, or None when nothing changed."""
    proposed = await generate(first_message)
    if not proposed:
        return None
    title = title_from_message(proposed, limit=TITLE_CHARS)
    return await store.set_generated_title(principal, conversation_id, title)
