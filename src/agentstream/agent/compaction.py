"""What a model is sent of a conversation too long for its window: a pure function of the
history, the budget and the estimates.

Compaction changes only the request: the history the loop keeps (``AgentRun.new_messages``),
the store and the UI keep every message whole. It goes in stages, each only as far as needed:

1. a tool result longer than its share of the window is cut, with a note saying so (always:
   one result should never crowd out the conversation);
2. the files of earlier exchanges, oldest first, become a line naming them;
3. the oldest exchanges are left out whole.

An *exchange* is a user message and everything after it up to the next one (the model's
turns and the tool results they asked for), so leaving out whole exchanges never separates a
tool call from its result, and the history still starts with a user message, as every vendor
requires. The latest exchange is always sent whole (it is what is being answered: from the
run's user message on), and so is an exchange with calls still open (waiting for a client or
an approval).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from agentstream.agent.tokens import text_tokens
from agentstream.messages import Message, ToolResultPart, ToolResultsMessage, UserMessage

__all__ = ["Compaction", "Compactor", "cut_note", "placeholder"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Compaction:
    """The messages to send and what was done to fit them. ``tokens`` is the estimate of the
    whole request (system prompt and tools included)."""

    messages: tuple[Message, ...]
    tokens: int
    cut: int = 0
    """Tool results cut down."""
    placeholders: int = 0
    """Files replaced by their names."""
    dropped: int = 0
    """Earlier exchanges left out."""
    first_kept: int = 0
    """Where the messages sent start in the messages given, when the exchanges left out are
    the oldest ones (as they are unless an exchange with open calls stood among them): the
    messages before it are those left out."""

    @property
    def changed(self) -> bool:
        return bool(self.cut or self.placeholders or self.dropped)


@dataclass(slots=True, kw_only=True)
class _Scan:
    """One pass over a history: the messages as sent after stage 1, their estimates, where
    the exchanges start, which messages carry files and which hold open calls."""

    limit: int
    source: list[Message] = field(default_factory=list)
    sent: list[Message] = field(default_factory=list)
    costs: list[int] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    files: list[int] = field(default_factory=list)
    held: list[int] = field(default_factory=list)
    cut: int = 0
    total: int = 0


def cut_note(shown: int, total: int) -> str:
    return (
        f"\n\n[Result cut to fit the model's context window: the first {shown:,} of "
        f"{total:,} characters are shown.]"
    )


def placeholder(names: Sequence[str]) -> str:
    return f"[Attached earlier, left out to fit the context window: {', '.join(names)}]"


class Compactor:
    """Compacts a run's requests. ``count`` estimates a message (a
    :class:`~agentstream.agent.tokens.TokenCounter`); the messages made by cutting a result
    are kept per original, so a long history costs its cuts once per run, not once per
    model call."""

    __slots__ = ("_count", "_cuts", "_last", "_placeheld")

    def __init__(self, count: Callable[[Message], int]) -> None:
        self._count = count
        self._cuts: dict[tuple[int, int], tuple[Message, Message, int]] = {}
        self._placeheld: dict[int, tuple[Message, Message, int]] = {}
        self._last: _Scan | None = None

    def compact(
        self,
        messages: Sequence[Message],
        *,
        budget: int,
        fixed: int,
        result_limit: int,
        current: int | None = None,
    ) -> Compaction:
        """Fit ``messages`` into ``budget`` tokens beside ``fixed`` ones (system prompt and
        tools), cutting tool results over ``result_limit`` tokens. The messages from
        ``current`` on (default: the latest user message) are the exchange being answered:
        a run that adds a user message of its own (an answer check asking again) keeps the
        question it answers."""
        scan = self._scan(messages, result_limit)
        cut, total = scan.cut, fixed + scan.total
        if total <= budget:
            return Compaction(messages=tuple(scan.sent), tokens=total, cut=cut)
        sent, costs, starts = list(scan.sent), list(scan.costs), list(scan.starts)
        files, held = scan.files, scan.held
        if not starts or starts[0] != 0:
            starts.insert(0, 0)
        # The exchanges that may lose their files or be left out: all but the latest, and
        # none with open calls.
        end = len(sent) if current is None else current
        exchanges = [(a, b) for a, b in zip(starts, starts[1:], strict=False) if b <= end]
        earlier, kept_whole = exchanges, set()
        if held:
            with_open = {(a, b) for a, b in exchanges if any(a <= i < b for i in held)}
            earlier = [exchange for exchange in exchanges if exchange not in with_open]
            kept_whole = {i for a, b in with_open for i in range(a, b)}
        last_earlier = earlier[-1][1] if earlier else 0
        # 2. The files of earlier exchanges, oldest first, until the request fits.
        placeholders = 0
        for index in files:
            if total <= budget or index >= last_earlier:
                break
            if index not in kept_whole:
                shorter, names = self._without_files(sent[index])
                cost = self._count(shorter)
                total += cost - costs[index]
                sent[index], costs[index] = shorter, cost
                placeholders += names
        # 3. The oldest exchanges, whole, until it fits.
        left_out: list[tuple[int, int]] = []
        for start, end in earlier:
            if total <= budget:
                break
            total -= sum(costs[start:end])
            left_out.append((start, end))
        kept = _without(sent, left_out) if left_out else tuple(sent)
        first_kept = 0
        for start, end in left_out:
            if start != first_kept:
                break
            first_kept = end
        return Compaction(
            messages=kept,
            tokens=total,
            cut=cut,
            placeholders=placeholders,
            dropped=len(left_out),
            first_kept=first_kept,
        )

    def _scan(self, messages: Sequence[Message], result_limit: int) -> _Scan:
        """Stage 1 and the estimates, for ``messages``. A run's history only grows between its
        model calls, so the previous call's scan is extended with the new messages rather
        than redone (a thousand messages cost their new ones, not a thousand lookups)."""
        scan = self._last
        if (
            scan is None
            or scan.limit != result_limit
            or len(messages) < len(scan.source)
            or not all(map(operator.is_, messages, scan.source))
        ):
            scan = _Scan(limit=result_limit)
        for index in range(len(scan.source), len(messages)):
            message = sent = messages[index]
            scan.source.append(message)
            if isinstance(message, UserMessage):
                scan.starts.append(index)
                if message.attachments:
                    scan.files.append(index)
            elif isinstance(message, ToolResultsMessage):
                # 1. Results over their share are cut, whatever the total.
                sent, cuts = self._cut(message, result_limit)
                scan.cut += cuts
                if message.pending:
                    scan.held.append(index)
                if any(r.attachments for r in message.results):
                    scan.files.append(index)
            cost = self._count(sent)
            scan.sent.append(sent)
            scan.costs.append(cost)
            scan.total += cost
        self._last = scan
        return scan

    def _cut(self, message: ToolResultsMessage, limit: int) -> tuple[Message, int]:
        key = (id(message), limit)
        found = self._cuts.get(key)
        if found is not None and found[0] is message:
            return found[1], found[2]
        results: list[ToolResultPart] = []
        cuts = 0
        for result in message.results:
            tokens = text_tokens(result.content)
            if tokens > limit:
                keep = len(result.content) * limit // tokens
                note = cut_note(keep, len(result.content))
                result = replace(result, content=result.content[:keep] + note)
                cuts += 1
            results.append(result)
        shorter: Message = replace(message, results=tuple(results)) if cuts else message
        self._cuts[key] = (message, shorter, cuts)
        return shorter, cuts

    def _without_files(self, message: Message) -> tuple[Message, int]:
        found = self._placeheld.get(id(message))
        if found is not None and found[0] is message:
            return found[1], found[2]
        shorter, names = _without_files(message)
        self._placeheld[id(message)] = (message, shorter, names)
        return shorter, names


def _without(messages: list[Message], ranges: list[tuple[int, int]]) -> tuple[Message, ...]:
    """``messages`` less the slices ``ranges`` (in order, not overlapping)."""
    kept: list[Message] = []
    position = 0
    for start, end in ranges:
        kept += messages[position:start]
        position = end
    kept += messages[position:]
    return tuple(kept)


def _without_files(message: Message) -> tuple[Message, int]:
    """``message`` with its files replaced by a line naming them, and how many there were."""
    if isinstance(message, UserMessage) and message.attachments:
        names = [a.name for a in message.attachments]
        text = placeholder(names)
        content = f"{message.content}\n\n{text}" if message.content else text
        return replace(message, content=content, attachments=()), len(names)
    if isinstance(message, ToolResultsMessage) and any(r.attachments for r in message.results):
        results = tuple(
            replace(
                r,
                content=f"{r.content}\n\n{placeholder([a.name for a in r.attachments])}",
                attachments=(),
            )
            if r.attachments
            else r
            for r in message.results
        )
        count = sum(len(r.attachments) for r in message.results)
        return replace(message, results=results), count
    return message, 0
