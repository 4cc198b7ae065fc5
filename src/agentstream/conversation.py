"""A conversation as clients see it: typed snapshots the store hands out.

The store keeps a provider history (one row per model turn); people read a conversation as
their messages and one answer per run, with the tool calls folded in. These values are that
reading, shared by the REST API, the protocols that send a conversation back with an answer
(``conversation_saved``) and the store that builds them (``agentstream.store.views``).
Timestamps serialise as ISO-8601 UTC ending in ``Z`` with millisecond precision.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from agentstream.attachments.types import Attachment
from agentstream.messages import ToolOutcome

if TYPE_CHECKING:
    from agentstream.store.models import ConversationRow

__all__ = [
    "ActiveRun",
    "ConversationDetail",
    "ConversationPage",
    "ConversationSummary",
    "DisplayMessage",
    "DisplayStatus",
    "DisplayToolCall",
    "isoformat_z",
]

DisplayStatus = Literal["complete", "interrupted", "failed"]


def attachment_json(attachment: Attachment) -> dict[str, Any]:
    """An attachment as every API shows it (the answer to its upload, a message's list)."""
    return {
        "id": attachment.id,
        "name": attachment.name,
        "media_type": attachment.media_type,
        "size": attachment.size,
        "sha256": attachment.sha256,
    }


def isoformat_z(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationSummary:
    """A conversation as listed: id, title, timestamps and the model it last used."""

    id: str
    title: str
    created_at: datetime
    updated_at: datetime
    model: str | None

    @classmethod
    def from_row(cls, row: ConversationRow) -> ConversationSummary:
        return cls(
            id=row.id,
            title=row.title,
            created_at=row.created_at,
            updated_at=row.updated_at,
            model=row.model,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "created_at": isoformat_z(self.created_at),
            "updated_at": isoformat_z(self.updated_at),
            "model": self.model,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationPage:
    """One page of a user's conversations, newest first; pass ``next_cursor`` for the next."""

    items: tuple[ConversationSummary, ...]
    next_cursor: str | None

    def to_json(self) -> dict[str, Any]:
        return {"items": [item.to_json() for item in self.items], "next_cursor": self.next_cursor}


@dataclass(frozen=True, slots=True, kw_only=True)
class DisplayToolCall:
    """One tool call of an answer, as its card shows it."""

    index: int
    call_id: str
    tool_name: str
    input: dict[str, Any]
    output: Any
    is_error: bool
    duration_ms: float | None
    """None when the run did not finish: durations come with its final answer."""
    text_offset: int
    display: str | None = None
    """The tool's friendly text for the call, when it has one."""
    outcome: ToolOutcome = "ok"
    """How the call ended (:data:`~agentstream.messages.ToolOutcome`)."""
    attachments: tuple[Attachment, ...] = ()
    """Files the tool made, shown in its card."""

    @property
    def stopped(self) -> bool:
        """The run was stopped while the call ran: it has no result (not a failure)."""
        return self.outcome == "interrupted"

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "index": self.index,
            "call_id": self.call_id,
            "tool_name": self.tool_name,
            "input": self.input,
            "output": self.output,
            "is_error": self.is_error,
            "duration_ms": self.duration_ms,
            "text_offset": self.text_offset,
            "stopped": self.stopped,
            "outcome": self.outcome,
        }
        if self.display:
            shown["display"] = self.display
        if self.attachments:
            shown["attachments"] = [attachment_json(a) for a in self.attachments]
        return shown


@dataclass(frozen=True, slots=True, kw_only=True)
class DisplayPendingCall:
    """A tool call the answer stopped at, still waiting: for a person's approval
    (``waiting_for="approval"``) or for the client's result (``"client"``). A client that
    opens the conversation (after a reload) shows it to be answered."""

    call_id: str
    tool_name: str
    input: dict[str, Any]
    waiting_for: str
    display: str | None = None
    """The tool's friendly text for the call, when it has one."""

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "call_id": self.call_id,
            "tool_name": self.tool_name,
            "input": self.input,
            "waiting_for": self.waiting_for,
        }
        if self.display:
            shown["display"] = self.display
        return shown


@dataclass(frozen=True, slots=True, kw_only=True)
class DisplayMessage:
    """A message as shown to the user: an answer's text with its tool calls, not the model's
    wire history."""

    id: str
    """The user message's id, or for an answer the id of the run that produced it."""
    role: Literal["user", "assistant"]
    content: str
    created_at: datetime
    status: DisplayStatus = "complete"
    run_id: str | None = None
    reasoning: str | None = None
    error: str | None = None
    tool_history: tuple[DisplayToolCall, ...] = ()
    suggested_values: list[Any] = field(default_factory=list)
    suggested_actions: list[Any] = field(default_factory=list)
    custom_payload: Any = None
    payloads: list[Any] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    pending_calls: tuple[DisplayPendingCall, ...] = ()
    """The calls this answer stopped at that no later run has answered yet (only the
    conversation's last answer can have them)."""
    attachments: tuple[Attachment, ...] = ()
    """The files a user message carried (in the JSON only when there are some)."""
    stop_reason: str | None = None
    """Why the model's last turn of this answer ended
    (:data:`~agentstream.events.StopReason`): ``max_tokens`` and ``refusal`` mean it was cut
    off. ``None`` for an answer that did not complete (or was stored before it was kept)."""
    siblings: tuple[str, ...] = ()
    """The ids of this message and of the others in its place on other branches (edited
    questions beside a question, answers given again beside an answer), oldest first: what a
    UI needs to draw ``< 2 / 3 >``. In the JSON only when there are several."""
    context: dict[str, Any] | None = None
    """On an answer: how full the model's window was at its last model call
    (:class:`~agentstream.events.ContextReport`). In the JSON only when known."""
    summarized: int | None = None
    """On the user message the latest summary of the path stands before: the model reads
    the conversation before it as a summary of that many exchanges (see
    :mod:`agentstream.agent.summaries`). In the JSON only when set."""

    def to_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "id": self.id,
            "role": self.role,
            "content": self.content,
            "reasoning": self.reasoning,
            "status": self.status,
            "created_at": isoformat_z(self.created_at),
            "run_id": self.run_id,
            "error": self.error,
            "tool_history": [call.to_json() for call in self.tool_history],
            "suggested_values": self.suggested_values,
            "suggested_actions": self.suggested_actions,
            "custom_payload": self.custom_payload,
            "payloads": self.payloads,
            "usage": self.usage,
            "pending_calls": [call.to_json() for call in self.pending_calls],
            "stop_reason": self.stop_reason,
        }
        if self.attachments:  # only then: answers and old clients see what they saw
            shown["attachments"] = [attachment_json(a) for a in self.attachments]
        if len(self.siblings) > 1:  # the same: a conversation without branches reads as before
            shown["siblings"] = list(self.siblings)
        if self.context is not None:
            shown["context"] = self.context
        if self.summarized is not None:
            shown["summarized"] = self.summarized
        return shown


@dataclass(frozen=True, slots=True, kw_only=True)
class ActiveRun:
    """The conversation's latest run while the store has it as still running: what a client
    that opens the conversation (a reload, a second tab) follows through
    ``GET /api/runs/{id}/stream``. The store cannot tell a run in progress from one whose
    server died before it finished; that endpoint can (404, 204 or a ``run_failed``), so a
    client treats this as "try to follow", never as a promise that more is coming."""

    id: str
    status: Literal["running"] = "running"
    started_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "status": self.status, "started_at": isoformat_z(self.started_at)}


_TOKEN_COUNTS = (
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationDetail:
    """A conversation with its messages as clients show them (``GET /api/conversations/{id}``)."""

    summary: ConversationSummary
    metadata: dict[str, Any]
    messages: tuple[DisplayMessage, ...]
    active_run: ActiveRun | None = None
    """The run still going, if the latest one is (see :class:`ActiveRun`)."""
    state: dict[str, Any] | None = None
    """The shared state as stored (:mod:`agentstream.state`; ``None``: it has none)."""

    @property
    def id(self) -> str:
        return self.summary.id

    def usage(self) -> dict[str, Any]:
        """The tokens and cost of every answer so far (however each ended), summed:
        ``cost_usd`` is ``None`` when no answer has a price, ``estimated`` says whether
        any count is an estimate (see :class:`~agentstream.events.RunUsage`)."""
        summed: dict[str, Any] = dict.fromkeys(_TOKEN_COUNTS, 0)
        cost: float | None = None
        estimated = False
        for message in self.messages:
            used = message.usage or {}
            for name in _TOKEN_COUNTS:
                count = used.get(name)
                if isinstance(count, int):
                    summed[name] += count
            if isinstance(used.get("cost_usd"), int | float):
                cost = (cost or 0.0) + used["cost_usd"]
            estimated = estimated or used.get("estimated") is True
        return {**summed, "cost_usd": cost, "estimated": estimated}

    def to_json(self) -> dict[str, Any]:
        return {
            **self.summary.to_json(),
            "metadata": self.metadata,
            "messages": [message.to_json() for message in self.messages],
            "active_run": None if self.active_run is None else self.active_run.to_json(),
            "usage": self.usage(),
            "context": self.context(),
            "state": self.state,
        }

    def context(self) -> dict[str, Any] | None:
        """How full the model's window was for the latest answer that says (None: none
        does), which is where the conversation stands for its next message."""
        for message in reversed(self.messages):
            if message.context is not None:
                return message.context
        return None

    def to_agent_conversation(self) -> dict[str, Any]:
        """The ops agent's ``conversation`` object."""
        return {
            "id": self.summary.id,
            "title": self.summary.title,
            "updated_at": isoformat_z(self.summary.updated_at),
            "conversation": [_agent_message(message) for message in self.messages],
        }


def _agent_message(message: DisplayMessage) -> dict[str, Any]:
    """A message of the ops agent's ``conversation`` object; a user message's files only when
    it has some, so a client that knows nothing of files sees what it always saw."""
    shown: dict[str, Any] = {
        "role": message.role,
        "content": message.content,
        "created_at": isoformat_z(message.created_at),
    }
    if message.attachments:
        shown["attachments"] = [attachment_json(a) for a in message.attachments]
    return shown
