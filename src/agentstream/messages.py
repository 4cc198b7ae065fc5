"""Conversation history: what was said, in a vendor-neutral form.

Providers convert these to and from their vendor's wire types at their edge; the store persists
them; the loop appends to them. They come in the three kinds the agent loop needs: a user message,
an assistant message with text, reasoning and tool calls, and the tool results fed back to the
model. User messages and tool results may carry files (:class:`Attachment`: a reference to
content kept in a blob store, which each provider turns into its vendor's native form).
Vendor-specific opaque data that must survive a round-trip (Anthropic thinking signatures,
Gemini thought signatures) rides along in ``signature``/``provider_data`` without the rest of the
code knowing what it means.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from agentstream.attachments.types import Attachment

__all__ = [
    "ERROR_OUTCOMES",
    "MESSAGES_ADAPTER",
    "TURN_SEPARATOR",
    "AssistantMessage",
    "Attachment",
    "Message",
    "PendingToolCall",
    "Reasoning",
    "ToolCall",
    "ToolOutcome",
    "ToolResultPart",
    "ToolResultsMessage",
    "UserMessage",
    "WaitingFor",
]


TURN_SEPARATOR = "\n\n"
"""Between the text of two model turns in a run's answer (and in the streamed text)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage:
    content: str
    attachments: tuple[Attachment, ...] = ()
    """Files sent with the text, in the order the user gave them."""
    role: Literal["user"] = "user"


@dataclass(frozen=True, slots=True, kw_only=True)
class Reasoning:
    """A block of model reasoning. ``signature`` (Anthropic) or ``redacted`` (Anthropic's
    encrypted thinking) must go back to the same vendor unchanged; ``provider`` says which
    vendor produced it so other vendors can drop it."""

    text: str = ""
    signature: str | None = None
    redacted: str | None = None
    provider: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    provider_data: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage:
    text: str = ""
    reasoning: tuple[Reasoning, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    role: Literal["assistant"] = "assistant"


ToolOutcome = Literal["ok", "error", "interrupted", "denied"]
"""How a tool call ended: it returned (``ok``); it failed, and the model is told why
(``error``); it was stopped before it returned, by a cancelled run, a worker that died or a
conversation that went on without its answer (``interrupted``); or a person declined it
(``denied``: the model reads the decision, not an error to retry)."""

ERROR_OUTCOMES: frozenset[ToolOutcome] = frozenset({"error", "interrupted"})
"""The outcomes the model reads as a failed call (a vendor's ``is_error``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultPart:
    tool_call_id: str
    name: str
    content: str
    """What the model reads."""
    outcome: ToolOutcome = "ok"
    attachments: tuple[Attachment, ...] = ()
    """Images the tool produced (a chart it drew, a screenshot it took), read by the model
    beside ``content``."""

    @property
    def is_error(self) -> bool:
        """The model reads the result as a failure (vendors mark it so)."""
        return self.outcome in ERROR_OUTCOMES


WaitingFor = Literal["client", "approval", "approved"]
"""What a pending tool call waits for: its result from the client (a frontend tool), a
person's approval, or (``approved``) the run that answered the approval, which runs it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingToolCall:
    """A call of the model's that its run did not run: the run ended with the call open, and
    a later run continues the conversation once the call is answered (see
    :mod:`agentstream.pending`)."""

    call_id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    waiting_for: WaitingFor = "client"
    display: str | None = None
    """The tool's friendly text for the call, kept so the person asked to approve it (after a
    reload too) reads what the live card showed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultsMessage:
    """The results of one turn's tool calls, in the order the model made the calls.

    ``pending`` lists the calls of the turn that have no result yet and what each waits for.
    A turn with pending calls is *open*: its results are completed by a later message (the
    run that carries the answers), and :func:`agentstream.pending.provider_history` joins
    them into one message before a provider sees the turn."""

    results: tuple[ToolResultPart, ...]
    pending: tuple[PendingToolCall, ...] = ()
    role: Literal["tool"] = "tool"


Message = Annotated[
    UserMessage | AssistantMessage | ToolResultsMessage, Field(discriminator="role")
]

MESSAGES_ADAPTER: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
