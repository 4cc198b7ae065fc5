"""Titles written by the model, after a conversation's first answer.

A new conversation is titled from its first message at once (the ops agent shows the title in its
first event). With a title writer the runner then asks for a better one in the background, after
the first run completed, so the answer is never delayed by it; the store keeps the user's own
title if they renamed the conversation meanwhile.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import aclosing

from agentstream.agent import Agent
from agentstream.messages import UserMessage
from agentstream.providers.base import ChatRequest, ProviderError, TextChunk

__all__ = ["TITLE_PROMPT", "TitleWriter", "model_titles"]

log = logging.getLogger("agentstream.runs")

TitleWriter = Callable[[str], Awaitable[str | None]]
"""The first user message in, a title (or None to keep the current one) out."""

TITLE_PROMPT = (
    "Write a title of at most six words for a conversation that starts with the message "
    "below. Answer with the title only: no quotes, no punctuation at the end.\n\n"
)


def model_titles(agent: Agent, *, max_tokens: int = 32) -> TitleWriter:
    """A :data:`TitleWriter` that asks the agent's own model, with no tools."""

    async def write(first_message: str) -> str | None:
        request = ChatRequest(
            system="You write short, specific titles for conversations.",
            messages=(UserMessage(content=TITLE_PROMPT + first_message[:2000]),),
            max_tokens=max_tokens,
            temperature=0.2,
        )
        parts: list[str] = []
        try:
            async with aclosing(agent.provider().stream(request)) as stream:
                async for event in stream:
                    if isinstance(event, TextChunk):
                        parts.append(event.text)
        except ProviderError as exc:
            log.info("no model title (%s: %s)", exc.kind, exc.message)
            return None
        title = "".join(parts).strip().strip("\"'“”").rstrip(".")
        return title or None

    return write
