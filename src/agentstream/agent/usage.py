"""What a run used, as it is billed: the vendor's token counts, and estimates where it gave none.

A vendor reports a model call's usage when the call ends (OpenAI, Ollama), or its prompt's
tokens at the start and the rest at the end (Anthropic, Gemini). A run stopped by its user, by
a client that hung up, by a limit or by a failing upstream still paid for the calls it made,
the one cut short included, and an operator's bill counts those too. :class:`UsageMeter`
follows a run's model calls and gives its total (:class:`RunUsage`): the vendor's own counts
where it sent them, the prompt's count a vendor sent at the start of a call cut short, and an
estimate (:data:`CHARS_PER_TOKEN`) for what no vendor counted: the prompt of a call cut short
before the vendor said it, the output of a call cut short, a call whose vendor reported
nothing (a compatible server without usage). A total with any estimate in it says so
(``estimated``).

The meter is fed once per model call, never per delta: the output of a call cut short is
measured from what its turn had collected.
"""

from __future__ import annotations

import json

from agentstream.events import RunUsage, Usage
from agentstream.messages import MESSAGES_ADAPTER
from agentstream.providers.base import ChatRequest

__all__ = ["CHARS_PER_TOKEN", "UsageMeter", "estimate_tokens"]

CHARS_PER_TOKEN = 4
"""The usual rule of thumb for English text and JSON with the vendors' tokenizers; an estimate
is only made where a vendor sent no count, and it is marked as one."""


def estimate_tokens(characters: int) -> int:
    """Tokens for ``characters`` of text, rounded up (any text is at least one token)."""
    return -(-characters // CHARS_PER_TOKEN)


class UsageMeter:
    """Sums a run's model calls (:mod:`agentstream.agent.usage`). The loop says when a call
    begins (:meth:`begin`), when the vendor starts answering (:meth:`answering`, with any
    counts it sent then), and how it ended: :meth:`completed` with the vendor's usage, or
    :meth:`cut_short` with the characters it had streamed."""

    __slots__ = ("_answering", "_estimated", "_prompt", "_request", "_total")

    def __init__(self) -> None:
        self._total = Usage()
        self._estimated = False
        self._request: ChatRequest | None = None
        self._prompt: Usage | None = None
        self._answering = False

    def carried(self, usage: Usage) -> None:
        """Count what earlier model calls of the run used (a run taken over from a worker
        that died: what its log reported)."""
        self._total = self._total + usage

    def begin(self, request: ChatRequest) -> None:
        """A model call is being made with ``request``."""
        self._request, self._prompt, self._answering = request, None, False

    def answering(self, counted: Usage | None) -> None:
        """The vendor started answering; ``counted`` is what it had counted by then."""
        self._answering = True
        if counted is not None and counted.input_tokens:
            self._prompt = Usage(
                input_tokens=counted.input_tokens,
                cache_read_tokens=counted.cache_read_tokens,
                cache_write_tokens=counted.cache_write_tokens,
            )

    def completed(self, usage: Usage, output_characters: int) -> None:
        """The call ended with the vendor's ``usage`` (all zero: it reported none)."""
        if usage.input_tokens or usage.output_tokens:
            self._total = self._total + usage
        else:
            self._add_estimate(output_characters)
        self._request = None

    def cut_short(self, output_characters: int) -> None:
        """The call in progress was stopped after streaming ``output_characters``. A call the
        vendor had not started answering is not counted: it may never have reached it."""
        if self._request is not None and self._answering:
            self._add_estimate(output_characters)
        self._request = None

    def _add_estimate(self, output_characters: int) -> None:
        prompt = self._prompt
        if prompt is None:
            prompt = Usage(input_tokens=self._prompt_estimate())
        output = estimate_tokens(output_characters)
        self._total = self._total + prompt + Usage(output_tokens=output)
        self._estimated = True

    def _prompt_estimate(self) -> int:
        request = self._request
        if request is None:
            return 0
        tools = json.dumps([(t.name, t.description, t.parameters) for t in request.tools])
        messages = MESSAGES_ADAPTER.dump_json(list(request.messages))
        return estimate_tokens(len(request.system) + len(messages) + len(tools))

    @property
    def total(self) -> RunUsage:
        """The run's tokens so far; the run's owner names the model and prices them."""
        return RunUsage(usage=self._total, estimated=self._estimated)
