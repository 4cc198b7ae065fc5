"""What every dialect parses its request into."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentstream.errors import RefusedRequest
from agentstream.messages import Message
from agentstream.pending import Answers, ClientTool
from agentstream.principal import Principal

__all__ = [
    "DOUBLE_TEXTING_POLICIES",
    "ActionRequest",
    "Branch",
    "DoubleTexting",
    "ProtocolOptions",
    "RefusedRequest",
    "RunRequest",
]

DoubleTexting = Literal["reject", "queue", "interrupt"]
"""What a message for a conversation whose answer is still being written does (see
:mod:`agentstream.runs.turns`): ``reject`` refuses it (409, nothing stored), ``queue`` stores
it and answers it once the answer before it has ended, ``interrupt`` stops that answer (kept,
marked interrupted) and answers the new message next."""
DOUBLE_TEXTING_POLICIES: tuple[DoubleTexting, ...] = ("reject", "queue", "interrupt")


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionRequest:
    """A suggested action with ``handler: "server"`` sent back by the client (chat tray)."""

    action: str
    data: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Branch:
    """Where in the conversation's tree a run goes when it does not continue the active leaf
    (see ``docs/guides/branches.md``). Ids are those the conversation API shows: a user
    message's own, an answer's run id.

    ``Branch(after=X)``: the run's message follows ``X`` (``None``: it starts the
    conversation anew), beside whatever already followed it; an edited question is
    ``after`` the message before the one it replaces. ``Branch(after=Q, again=True)``: a
    new answer to the user message ``Q``, a sibling of the answers it has; the run adds no
    message of its own and the model is asked ``Q`` as stored."""

    after: str | None
    again: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ProtocolOptions:
    """What a protocol's clients can show and the limits it sets, declared once per protocol
    beside the request (workflow assistant: 20 turns and answers in English; chat tray: 5
    turns and suggestions). The defaults suit a library user's own client."""

    max_turns: int | None = None
    """The turn limit (``None``: the agent's own)."""
    suggestions: bool = True
    """The client shows suggested values and actions and custom payloads, so the model may
    be asked for them. Protocols without them say ``False``: their clients would show the
    marker lines as text."""
    response_language: str | None = None
    """The language answers must be in (workflow assistant: English); the chat hooks retry
    an answer written in another script once."""
    conversation_snapshot: bool = False
    """End a stored run with ``conversation_saved``, the conversation as it now stands (the ops
    agent sends it to its client). Off for protocols that do not show it: building it reads
    the whole conversation back at the end of every run."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRequest:
    """One message to answer, independent of wire format, with the options of the protocol
    it came in (:class:`ProtocolOptions`)."""

    message: str
    """The user's new message; empty when the request only answers pending tool calls."""
    principal: Principal
    attachments: Sequence[str] = ()
    """Ids of the caller's uploads the message carries (``POST /api/attachments``)."""
    conversation_id: str | None = None
    answers: Answers | None = None
    """Results and approval decisions for the tool calls the conversation's last run left
    open (see :mod:`agentstream.pending`)."""
    client_tools: Sequence[ClientTool] = ()
    """Frontend tools the client offers the model for this run."""
    create_conversation: bool = False
    """Create the conversation under ``conversation_id`` if it does not exist (the data playground
    names its own ids in ``metadata.conversationId``)."""
    branch: Branch | None = None
    """Start a new branch of the conversation (an edited question, an answer given again)
    instead of continuing its active leaf; the branch becomes the active one."""
    history: Sequence[Message] | None = None
    """History sent by the client (data playground); when set it is the context instead of the
    stored one."""
    context: Any = None
    state: Mapping[str, Any] | None = None
    """The page's shared state, sent with the message (:mod:`agentstream.state`, checked by
    the dialect): it replaces the state the conversation has stored, and the run starts
    from it. ``None``: the page sent none, and the run starts from the stored state."""
    context_type: str | None = None
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    model_options: Mapping[str, Any] = field(default_factory=dict)
    tool_options: Mapping[str, Any] = field(default_factory=dict)
    interaction_type: str | None = None
    action: ActionRequest | None = None
    protocol: ProtocolOptions = field(default_factory=ProtocolOptions)
    """What the protocol's clients can show and the limits it sets (each dialect declares
    its own, as data)."""
    diagnostics: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)
    double_texting: DoubleTexting | None = None
    """What this message does if the conversation is still answering an earlier one
    (``None``: the runner's default, ``AGENTSTREAM_DOUBLE_TEXTING``)."""
    run_id: str | None = None
    reader: Mapping[str, Any] | None = None
    """Kept with the run's log for readers on any worker: what they need to continue the run
    in the protocol that started it (the server's dialects put their name and options here)."""
