"""What every dialect parses its request into."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentstream.errors import RefusedRequest
from agentstream.messages import Message
from agentstream.pending import Answers, ClientTool
from agentstream.principal import Principal

__all__ = ["ActionRequest", "RefusedRequest", "RunRequest"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionRequest:
    """A suggested action with ``handler: "server"`` sent back by the client (chat tray)."""

    action: str
    data: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRequest:
    """One message to answer, independent of wire format. Per-dialect defaults (20 turns for
    ``ichor``, 5 and tool markers for ``tray``) are set here by the dialect, as data."""

    message: str
    """The user's new message; empty when the request only answers pending tool calls."""
    principal: Principal
    conversation_id: str | None = None
    answers: Answers | None = None
    """Results and approval decisions for the tool calls the conversation's last run left
    open (see :mod:`agentstream.pending`)."""
    client_tools: Sequence[ClientTool] = ()
    """Frontend tools the client offers the model for this run."""
    create_conversation: bool = False
    """Create the conversation under ``conversation_id`` if it does not exist (the data playground
    names its own ids in ``metadata.conversationId``)."""
    history: Sequence[Message] | None = None
    """History sent by the client (data playground); when set it is the context instead of the
    stored one."""
    context: Any = None
    context_type: str | None = None
    model: str | None = None
    temperature: float | None = None
    max_turns: int | None = None
    max_tokens: int | None = None
    model_options: Mapping[str, Any] = field(default_factory=dict)
    tool_options: Mapping[str, Any] = field(default_factory=dict)
    interaction_type: str | None = None
    action: ActionRequest | None = None
    response_language: str | None = None
    """The language answers must be in (workflow assistant: English); the chat hooks retry an answer
    written in another script once."""
    tool_markers: bool = False
    suggestions: bool = True
    """The client shows suggested values and actions and custom payloads (chat tray), so the
    model may be asked for them. Dialects without them (workflow assistant, data playground,
    ops agent) say ``False``: their
    clients would show the marker lines as text."""
    diagnostics: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    reader: Mapping[str, Any] | None = None
    """Kept with the run's log for readers on any worker: what they need to continue the run
    in the protocol that started it (the server's dialects put their name and options here)."""
