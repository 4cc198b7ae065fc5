"""What the store shows: conversations and their messages as a chat UI renders them.

The provider history has one row per model turn (assistant text and tool calls, then the tool
results). A person reads a conversation differently: their message, then *one* answer per run
with the tool round-trips folded into it. :func:`display_messages` does that fold:

* ``content`` is the run's answer text without ``[[tool:N]]`` markers (the cleaned message of
  the run's ``RunCompleted`` when there is one, else the text of its turns joined);
* ``tool_history`` lists the tool calls that finished, each with the ``text_offset`` where its
  marker belongs in ``content``; a call that never got a result (the run was interrupted while
  it ran) is left out;
* ``status`` is ``complete``, ``failed`` (the run ended with an error) or ``interrupted``
  (cancelled, the client went away, or the worker died: the run is marked ``interrupted``
  once another worker proves it, and shown so while still ``running`` before that).

Timestamps are ISO-8601 UTC ending in ``Z`` with millisecond precision, as the ops agent expects.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from agentstream.agent.loop import INTERRUPTED_MESSAGE, TURN_SEPARATOR
from agentstream.chat.markers import strip_tool_markers
from agentstream.store.models import ConversationRow

__all__ = [
    "ConversationDetail",
    "ConversationPage",
    "ConversationSummary",
    "DisplayMessage",
    "DisplayToolCall",
    "display_messages",
    "isoformat_z",
    "strip_markers",
]

DisplayStatus = Literal["complete", "interrupted", "failed"]
_RUN_STATUS: dict[str, DisplayStatus] = {
    "completed": "complete",
    "failed": "failed",
    "cancelled": "interrupted",
    "interrupted": "interrupted",
    "running": "interrupted",
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
    stopped: bool = False
    """The run was stopped while the call ran: it has no result (not a failure)."""
    display: str | None = None
    """The tool's friendly text for the call, when it has one."""

    def to_json(self) -> dict[str, Any]:
        shown = {
            "index": self.index,
            "call_id": self.call_id,
            "tool_name": self.tool_name,
            "input": self.input,
            "output": self.output,
            "is_error": self.is_error,
            "duration_ms": self.duration_ms,
            "text_offset": self.text_offset,
            "stopped": self.stopped,
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

    def to_json(self) -> dict[str, Any]:
        return {
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
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationDetail:
    """A conversation with its messages as clients show them (``GET /api/conversations/{id}``)."""

    summary: ConversationSummary
    metadata: dict[str, Any]
    messages: tuple[DisplayMessage, ...]

    @property
    def id(self) -> str:
        return self.summary.id

    def to_json(self) -> dict[str, Any]:
        return {
            **self.summary.to_json(),
            "metadata": self.metadata,
            "messages": [message.to_json() for message in self.messages],
        }

    def to_agent_conversation(self) -> dict[str, Any]:
        """The ops agent's ``conversation`` object."""
        return {
            "id": self.summary.id,
            "title": self.summary.title,
            "updated_at": isoformat_z(self.summary.updated_at),
            "conversation": [
                {
                    "role": message.role,
                    "content": message.content,
                    "created_at": isoformat_z(message.created_at),
                }
                for message in self.messages
            ],
        }


class StoredRun(Protocol):
    """What display reads of a run row (an ORM ``RunRow`` or a Core row). ``result`` and
    ``usage`` are read only for details."""

    @property
    def id(self) -> str: ...
    @property
    def ordinal(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def answer(self) -> str | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def result(self) -> dict[str, Any] | None: ...
    @property
    def usage(self) -> dict[str, Any] | None: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def finished_at(self) -> datetime | None: ...


class StoredMessage(Protocol):
    """What display reads of a message row. ``body`` and ``reasoning`` are read only for
    details."""

    @property
    def id(self) -> str: ...
    @property
    def run_id(self) -> str: ...
    @property
    def seq(self) -> int: ...
    @property
    def role(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def reasoning(self) -> str | None: ...
    @property
    def body(self) -> dict[str, Any]: ...
    @property
    def created_at(self) -> datetime: ...


def display_messages(
    runs: Sequence[StoredRun], messages: Iterable[StoredMessage], *, details: bool = True
) -> tuple[DisplayMessage, ...]:
    """Fold stored rows into what a person reads: per run, the user message and one answer.
    Without ``details`` only role, content, status and times are filled, and the rows' JSON
    columns (message bodies, run results) are never read, so callers may leave them unloaded
    (the ops agent's ``conversation`` object needs no more)."""
    by_run: dict[str, list[StoredMessage]] = {run.id: [] for run in runs}
    for row in messages:
        if row.run_id in by_run:  # a run committed after ``runs`` was read: next time
            by_run[row.run_id].append(row)
    shown: list[DisplayMessage] = []
    for run in sorted(runs, key=lambda r: r.ordinal):
        rows = sorted(by_run[run.id], key=lambda r: r.seq)
        shown.extend(
            DisplayMessage(
                id=row.id, role="user", content=row.text, created_at=row.created_at, run_id=run.id
            )
            for row in rows
            if row.role == "user"
        )
        answer = _answer(run, [row for row in rows if row.role != "user"], details)
        if answer is not None:
            shown.append(answer)
    return tuple(shown)


def _answer(run: StoredRun, rows: list[StoredMessage], details: bool) -> DisplayMessage | None:
    if run.status == "running" and not rows:
        return None  # still streaming, or died before saying anything
    if run.answer is not None:
        content = run.answer
    else:
        content = TURN_SEPARATOR.join(
            row.text for row in rows if row.role == "assistant" and row.text
        )
    created = rows[-1].created_at if rows else (run.finished_at or run.started_at)
    answer = DisplayMessage(
        id=run.id,
        role="assistant",
        content=content,
        created_at=created,
        status=_RUN_STATUS.get(run.status, "interrupted"),
        run_id=run.id,
        error=run.error,
    )
    if not details:
        return answer
    result = run.result or {}
    stored_history = result.get("tool_history")
    tools = (
        tuple(_tool_from_result(entry) for entry in stored_history)
        if isinstance(stored_history, list) and stored_history
        else _tools_from_rows(rows)
    )
    reasoning = "\n\n".join(row.reasoning for row in rows if row.reasoning)
    return replace(
        answer,
        reasoning=reasoning or None,
        tool_history=tools,
        suggested_values=list(result.get("suggested_values") or []),
        suggested_actions=list(result.get("suggested_actions") or []),
        custom_payload=result.get("custom_payload"),
        payloads=list(result.get("payloads") or []),
        usage=run.usage,
    )


def strip_markers(text: str) -> str:
    """``text`` without ``[[tool:N]]`` markers, exactly as the loop wrote it (so each tool's
    ``text_offset`` still points where it did): the UI places tool cards by offset."""
    return strip_tool_markers(text)


def _tool_from_result(entry: dict[str, Any]) -> DisplayToolCall:
    duration = entry.get("duration_ms")
    return DisplayToolCall(
        index=int(entry.get("index", 0)),
        call_id=str(entry.get("call_id", "")),
        tool_name=str(entry.get("tool_name", "")),
        input=dict(entry.get("input") or {}),
        output=entry.get("output"),
        is_error=bool(entry.get("is_error", False)),
        duration_ms=float(duration) if isinstance(duration, int | float) else None,
        text_offset=int(entry.get("text_offset", 0)),
        display=entry["display"] if isinstance(entry.get("display"), str) else None,
    )


_STOPPED = json.dumps({"error": INTERRUPTED_MESSAGE})


def _tools_from_rows(rows: list[StoredMessage]) -> tuple[DisplayToolCall, ...]:
    """Tool history rebuilt from the stored turns, for runs without a final answer: each call
    that got a result, placed after the text of the turn that made it."""
    offset = 0
    pending: dict[str, tuple[str, dict[str, Any], int]] = {}
    calls: list[DisplayToolCall] = []
    for row in rows:
        if row.role == "assistant":
            if row.text:  # the answer so far, as the loop joins it (see ``_answer``)
                offset += len(row.text) + (len(TURN_SEPARATOR) if offset else 0)
            for call in row.body.get("tool_calls") or []:
                pending[call["id"]] = (call["name"], dict(call.get("arguments") or {}), offset)
        elif row.role == "tool":
            for part in row.body.get("results") or []:
                made = pending.pop(part["tool_call_id"], None)
                if made is None:
                    continue
                name, arguments, at = made
                content = part.get("content")
                calls.append(
                    DisplayToolCall(
                        index=len(calls),
                        call_id=part["tool_call_id"],
                        tool_name=name,
                        input=arguments,
                        output=content,
                        is_error=bool(part.get("is_error", False)),
                        duration_ms=None,
                        text_offset=at,
                        stopped=content == _STOPPED,
                    )
                )
    return tuple(calls)
