"""The provider interface: a chat request in, a stream of model events out, in Python.

A provider turns a :class:`ChatRequest` into an async generator of :data:`ProviderEvent`. It knows
nothing of tools beyond their JSON Schemas, nothing of runs, dialects or storage. Each vendor
module converts at its edge: our messages to the vendor's request, the vendor's stream to these
events, the vendor's exceptions to :class:`ProviderError`.

A stream ends in one of two ways: a :class:`MessageComplete` event, or a raised
:class:`ProviderError` (an ``error`` stream event, expressed the way Python streams fail). Closing
the iterator (``aclose()``) must close the upstream HTTP request.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from agentstream.errors import ErrorKind, ProviderError
from agentstream.events import StopReason, Usage
from agentstream.messages import Message

__all__ = [
    "ChatRequest",
    "ErrorKind",
    "MessageComplete",
    "MessageStart",
    "Provider",
    "ProviderError",
    "ProviderEvent",
    "ReasoningChunk",
    "StopReason",
    "TextChunk",
    "ToolInputChunk",
    "ToolSpec",
    "ToolUseStart",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """What a model is told about a tool."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatRequest:
    """One model call, vendor-neutral: each provider translates it to its vendor's request."""

    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolSpec] = ()
    max_tokens: int = 4096
    temperature: float | None = None
    files: Mapping[str, bytes] = field(default_factory=dict)
    """The content of the attachments ``messages`` carry, by SHA-256 (see
    :mod:`agentstream.providers._files`)."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Vendor-neutral model options: ``reasoning`` (``True``, ``False`` or an effort such as
    ``"low"``), ``reasoning_budget`` (tokens), ``stop`` (sequences). Unknown keys are ignored."""
    purpose: Literal["answer", "summary"] = "answer"
    """What the call is for: an answer, or a summary of earlier exchanges
    (:mod:`agentstream.agent.summaries`), whose text nobody is shown as it streams. Vendors'
    providers send both alike; a scripted model answers a summary request with a digest of
    its own rather than from its script."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageStart:
    """The model started generating. ``model`` is the model that answers, as the vendor names
    it; ``usage`` what the vendor had counted by then, for vendors that say it at once (the
    prompt's tokens: Anthropic, Gemini), so that a turn cut short is billed from the vendor's
    own count of its prompt rather than an estimate."""

    model: str | None = None
    usage: Usage | None = None
    kind: Literal["message_start"] = "message_start"


@dataclass(frozen=True, slots=True, kw_only=True)
class TextChunk:
    """A piece of the answer's text, as the vendor streamed it."""

    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningChunk:
    """A piece of reasoning. ``signature``/``redacted`` close or replace a reasoning block for
    vendors that require it back verbatim; a chunk may carry only a signature."""

    text: str = ""
    signature: str | None = None
    redacted: str | None = None
    kind: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUseStart:
    """The model began a tool call; its arguments follow as :class:`ToolInputChunk` fragments.
    ``provider_data`` keeps what a vendor needs back on the next turn."""

    call_id: str
    name: str
    provider_data: dict[str, Any] | None = None
    kind: Literal["tool_use_start"] = "tool_use_start"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInputChunk:
    """A fragment of a tool call's JSON arguments. Fragments of one call concatenate to the
    whole JSON text; vendors that send a call whole send one fragment."""

    call_id: str
    fragment: str
    kind: Literal["tool_input"] = "tool_input"


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageComplete:
    """The model finished its turn: why (``tool_use`` means it wants tools run) and the usage."""

    stop_reason: StopReason
    usage: Usage = field(default_factory=Usage)
    raw_stop_reason: str | None = None
    kind: Literal["message_complete"] = "message_complete"


ProviderEvent = (
    MessageStart | TextChunk | ReasoningChunk | ToolUseStart | ToolInputChunk | MessageComplete
)


@runtime_checkable
class Provider(Protocol):
    """One streaming method. ``name`` is the vendor prefix of the model id (``anthropic``),
    ``model`` the vendor's model name."""

    name: str
    model: str

    def stream(self, request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        """Usually an ``async def`` generator; ``aclose()`` must close the upstream request."""
        ...
