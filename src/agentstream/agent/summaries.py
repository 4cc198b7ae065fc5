"""Summaries of the earlier part of a conversation, written by the model itself.

When a request no longer fits the model's window, compaction
(:mod:`agentstream.agent.compaction`) would leave the oldest exchanges out, and the model
would forget them. With summaries on (``ContextLimits(summarize=True)``, the default), the
exchanges about to be left out are first summarized by the same model, and the summary is
sent with every later request as a section of the system prompt, headed as a summary so the
model reads it as such. The summary is *incremental*: the next one is the previous summary
extended with the exchanges that fall out after it, never a summary of the whole
conversation again, so its cost does not grow with the conversation.

The summary goes in the system prompt rather than in a message: every vendor accepts a
system prompt of any content, while a leading message would have to satisfy each vendor's
rules on who speaks first and in turn. A summary changes the system prompt only when a new
one is made, so a vendor's prompt cache is reused between summaries.

Summarizing happens rarely: when a request would leave exchanges out, more of them are
summarized than needed, until the history sent takes at most ``ContextLimits.keep`` of the
room left beside the summary, so the next turns fit without another summary. A summary
that fails (the model errs, or answers nothing) is not retried in the run: the exchanges
are left out unsummarized, as with summaries off, and the run says so with a warning.

Whoever keeps the conversation stores the summary (the ``context_summarized`` event says
what it covers) and hands it back with the rest of the history next time
(``RunInput.summary``); the store then reads only what comes after it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentstream.agent.tokens import text_tokens
from agentstream.events import Usage
from agentstream.messages import AssistantMessage, Message, ToolResultsMessage, UserMessage
from agentstream.providers.base import (
    ChatRequest,
    MessageComplete,
    MessageStart,
    Provider,
    TextChunk,
)

if TYPE_CHECKING:
    from agentstream.agent.usage import UsageMeter

__all__ = [
    "SUMMARY_HEADING",
    "SUMMARY_INSTRUCTIONS",
    "ContextSummary",
    "Summarizer",
    "transcript",
    "with_summary",
]

SUMMARY_HEADING = "Summary of the earlier conversation"

SUMMARY_INSTRUCTIONS = (
    "You keep the memory of a long conversation between a user and an assistant, whose "
    "earliest part no longer fits the assistant's context window. Write a summary the "
    "assistant will read in place of that part: the user's goals, questions and "
    "preferences, what was decided and answered, facts, names, numbers and identifiers "
    "the conversation relied on, what tools returned that still matters, and anything "
    "left open. Be concise and factual, in the language of the conversation; write it as "
    "notes, not as a dialogue, and answer with the summary only."
)
"""The system prompt of a summary request."""

TOOL_RESULT_CHARS = 2_000
"""How much of one tool result a summary request shows: a summary keeps what a result
meant, not its whole text."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextSummary:
    """A summary of a conversation's first ``exchanges`` exchanges."""

    text: str
    exchanges: int


def with_summary(system: str, summary: ContextSummary | None) -> str:
    """The system prompt ``system`` with ``summary`` as its last section."""
    if summary is None:
        return system
    noun = "exchange" if summary.exchanges == 1 else "exchanges"
    section = (
        f"## {SUMMARY_HEADING}\n\n"
        "This conversation began before the messages you are given. Its first "
        f"{summary.exchanges} {noun} were left out to fit your context window; this is a "
        f"summary of them, written earlier:\n\n{summary.text}"
    )
    return f"{system}\n\n{section}" if system else section


def transcript(messages: Sequence[Message]) -> list[str]:
    """``messages`` as lines of a transcript a model can summarize: one entry per message,
    tool results cut to :data:`TOOL_RESULT_CHARS`, files named."""
    lines: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage):
            files = "".join(f" [file: {a.name}]" for a in message.attachments)
            lines.append(f"User: {message.content}{files}")
        elif isinstance(message, AssistantMessage):
            if message.text:
                lines.append(f"Assistant: {message.text}")
            for call in message.tool_calls:
                arguments = json.dumps(call.arguments, ensure_ascii=False)
                lines.append(f"Assistant called {call.name} with {arguments}")
        elif isinstance(message, ToolResultsMessage):
            for result in message.results:
                content = result.content
                if len(content) > TOOL_RESULT_CHARS:
                    content = content[:TOOL_RESULT_CHARS] + " [...]"
                failed = " (failed)" if result.is_error else ""
                lines.append(f"Tool {result.name}{failed} returned: {content}")
    return lines


class Summarizer:
    """Writes a run's summaries with its model. ``window`` is the model's (a summary
    request must fit it too: a long stretch is summarized in parts, each extending the
    summary so far); ``max_tokens`` the longest summary asked for."""

    __slots__ = ("_max_tokens", "_meter", "_options", "_provider", "_window")

    def __init__(
        self,
        provider: Provider,
        *,
        window: int,
        max_tokens: int,
        meter: UsageMeter,
        options: dict[str, object] | None = None,
    ) -> None:
        self._provider = provider
        self._window = window
        self._max_tokens = max_tokens
        self._meter = meter
        self._options = options or {}

    async def summarize(
        self, previous: ContextSummary | None, messages: Sequence[Message], exchanges: int
    ) -> tuple[ContextSummary | None, Usage]:
        """The summary of ``previous`` followed by ``messages`` (``exchanges`` more of them),
        and what writing it used; None when the model gave none."""
        text = previous.text if previous is not None else ""
        used = Usage()
        for part in self._parts(transcript(messages), text):
            written, usage = await self._write(text, part)
            used = used + usage
            if not written:
                return None, used
            text = written
        covered = exchanges + (previous.exchanges if previous is not None else 0)
        return ContextSummary(text=text, exchanges=covered), used

    def _parts(self, lines: list[str], previous: str) -> list[list[str]]:
        """``lines`` in parts that each fit one request beside the summary so far (assumed
        as long as the longest summary asked for) and the instructions."""
        room = (
            self._window
            - 2 * self._max_tokens
            - text_tokens(SUMMARY_INSTRUCTIONS)
            - max(text_tokens(previous), 0)
            - self._window // 20
        )
        room = max(room, self._window // 4)
        parts: list[list[str]] = [[]]
        used = 0
        for line in lines:
            cost = text_tokens(line) + 1
            if cost > room:  # one line longer than a request: what fits of it
                line = line[: room * 2]
                cost = text_tokens(line) + 1
            if used + cost > room and parts[-1]:
                parts.append([])
                used = 0
            parts[-1].append(line)
            used += cost
        return [part for part in parts if part]

    async def _write(self, previous: str, lines: list[str]) -> tuple[str, Usage]:
        if previous:
            asked = (
                f"The summary so far:\n\n{previous}\n\nThe conversation went on as follows. "
                "Write the summary again, extended with what follows; keep what still "
                "matters of the summary so far.\n\n"
            )
        else:
            asked = "Summarize this part of the conversation:\n\n"
        request = ChatRequest(
            system=SUMMARY_INSTRUCTIONS,
            messages=(UserMessage(content=asked + "\n".join(lines)),),
            max_tokens=self._max_tokens,
            options=self._options,
            purpose="summary",
        )
        meter = self._meter
        meter.begin(request)
        pieces: list[str] = []
        usage = Usage()
        try:
            async for event in self._provider.stream(request):
                if type(event) is TextChunk:
                    pieces.append(event.text)
                elif isinstance(event, MessageStart):
                    meter.answering(event.usage)
                elif isinstance(event, MessageComplete):
                    usage = event.usage
                    meter.completed(usage, sum(map(len, pieces)))
        except BaseException:
            meter.cut_short(sum(map(len, pieces)))
            raise
        return "".join(pieces).strip(), usage
