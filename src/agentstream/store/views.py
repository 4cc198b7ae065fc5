"""What the store shows: conversations and their messages as a chat UI renders them.

The provider history has one row per model turn (assistant text and tool calls, then the tool
results). A person reads a conversation differently: their message, then *one* answer per run
with the tool round-trips folded into it. :func:`display_messages` does that fold:

* ``content`` is the run's answer text exactly as its client streamed it (the shaped message
  of a run that answered, else the text of its turns joined), without tool markers:
  presenters place them;
* ``tool_history`` lists the tool calls that finished, each with the ``text_offset`` where its
  marker belongs in ``content``; a call that never got a result (the run was interrupted while
  it ran) is left out;
* ``pending_calls`` lists, on the conversation's last answer only, the tool calls its run
  stopped at (waiting for approval or for the client): a later run answers them;
* ``status`` is ``complete``, ``failed`` (the run ended with an error) or ``interrupted``
  (cancelled, the client went away, or the worker died: the run is marked ``interrupted``
  once another worker proves it, and shown so while still ``running`` before that).

What is folded is one path of the conversation's tree, the active one (see
:mod:`agentstream.store.tree`): an answer given again replaces the first one on the path, as
the question it answers is followed by the new answer there.

Timestamps are ISO-8601 UTC ending in ``Z`` with millisecond precision, as the ops agent expects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol

from pydantic import TypeAdapter

from agentstream.attachments.types import Attachment
from agentstream.conversation import (
    ActiveRun,
    ConversationDetail,
    ConversationPage,
    ConversationSummary,
    DisplayMessage,
    DisplayPendingCall,
    DisplayStatus,
    DisplayToolCall,
    isoformat_z,
)
from agentstream.messages import ERROR_OUTCOMES, TURN_SEPARATOR, UserMessage
from agentstream.store.history import load_messages, result_outcome

__all__ = [
    "ActiveRun",
    "ConversationDetail",
    "ConversationPage",
    "ConversationSummary",
    "DisplayMessage",
    "DisplayPendingCall",
    "DisplayToolCall",
    "active_run",
    "display_messages",
    "isoformat_z",
]

_RUN_STATUS: dict[str, DisplayStatus] = {
    "completed": "complete",
    "failed": "failed",
    "cancelled": "interrupted",
    "interrupted": "interrupted",
    "running": "interrupted",
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
    """What display reads of a message row. ``reasoning``, and ``body`` but a user
    message's, are read only for details."""

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
    @property
    def parent_id(self) -> str | None: ...


def display_messages(
    runs: Sequence[StoredRun],
    messages: Sequence[StoredMessage],
    *,
    details: bool = True,
    asked_again: bool = False,
) -> tuple[DisplayMessage, ...]:
    """Fold stored rows (a path of the conversation's tree, in order) into what a person
    reads: per run, the user message and one answer. Without ``details`` only role, content,
    status, times and a user message's files are filled, and the answers' JSON columns (their
    messages' bodies, run results) are never read, so callers may leave them unloaded (the ops
    agent's ``conversation`` object needs no more). ``asked_again``: the path ends with a
    question another run is answering again, so the answer its own run gave is not on this
    path."""
    by_run: dict[str, list[StoredMessage]] = {run.id: [] for run in runs}
    for row in messages:
        if row.run_id in by_run:  # a run committed after ``runs`` was read: next time
            by_run[row.run_id].append(row)
    answered_again = _answered_again(messages)
    if asked_again and messages:
        answered_again.add(messages[-1].run_id)
    shown: list[DisplayMessage] = []
    ordered = sorted(runs, key=lambda r: r.ordinal)
    for run in ordered:
        rows = sorted(by_run[run.id], key=lambda r: r.seq)
        shown.extend(
            DisplayMessage(
                id=row.id,
                role="user",
                content=row.text,
                created_at=row.created_at,
                run_id=run.id,
                attachments=_attachments(row),
            )
            for row in rows
            if row.role == "user"
        )
        answer_rows = [row for row in rows if row.role != "user"]
        if not answer_rows and run.id in answered_again:
            continue  # its answer is on another branch: the path goes on to a new one
        answer = _answer(run, answer_rows, details, latest=run is ordered[-1])
        if answer is not None:
            shown.append(answer)
    return tuple(shown)


def _answered_again(path: Sequence[StoredMessage]) -> set[str]:
    """The runs whose question the path goes on to answer with another run's answer (an
    answer given again): their own answer, if any, is on another branch."""
    return {
        asked.run_id
        for asked, then in zip(path, path[1:], strict=False)
        if then.run_id != asked.run_id and then.role != "user"
    }


def _attachments(row: StoredMessage) -> tuple[Attachment, ...]:
    found = row.body.get("attachments")
    if not found:
        return ()
    message = load_messages([row.body])[0]
    return message.attachments if isinstance(message, UserMessage) else ()


def active_run(runs: Sequence[StoredRun]) -> ActiveRun | None:
    """The latest run if the store has it as running. Only the latest: a conversation's runs
    follow one another, so an older run still marked running was left by a server that died."""
    if not runs:
        return None
    latest = max(runs, key=lambda run: run.ordinal)
    if latest.status != "running":
        return None
    return ActiveRun(id=latest.id, started_at=latest.started_at)


def _answer(
    run: StoredRun, rows: list[StoredMessage], details: bool, *, latest: bool
) -> DisplayMessage | None:
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
        pending_calls=_pending(result) if latest else (),
        stop_reason=result.get("stop_reason"),
        context=result.get("context") if isinstance(result.get("context"), dict) else None,
    )


def _pending(result: dict[str, Any]) -> tuple[DisplayPendingCall, ...]:
    """The calls a run's stored result says it stopped at."""
    calls = result.get("pending_calls")
    if not isinstance(calls, list):
        return ()
    return tuple(
        DisplayPendingCall(
            call_id=str(call.get("call_id", "")),
            tool_name=str(call.get("name", "")),
            input=dict(call.get("arguments") or {}),
            waiting_for=str(call.get("waiting_for", "client")),
            display=call["display"] if isinstance(call.get("display"), str) else None,
        )
        for call in calls
        if isinstance(call, dict) and call.get("waiting_for") != "approved"
    )


def _tool_from_result(entry: dict[str, Any]) -> DisplayToolCall:
    duration = entry.get("duration_ms")
    outcome = entry.get("outcome")
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
        # A run's history from before outcomes were kept: its calls all finished.
        outcome=result_outcome({"outcome": outcome, "is_error": entry.get("is_error")}),
        attachments=_files(entry.get("attachments")),
    )


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
                outcome = result_outcome(part)
                calls.append(
                    DisplayToolCall(
                        index=len(calls),
                        call_id=part["tool_call_id"],
                        tool_name=name,
                        input=arguments,
                        output=part.get("content"),
                        is_error=outcome in ERROR_OUTCOMES,
                        duration_ms=None,
                        text_offset=at,
                        outcome=outcome,
                        attachments=_files(part.get("attachments")),
                    )
                )
    return tuple(calls)


def _files(stored: Any) -> tuple[Attachment, ...]:
    """Attachments as the store keeps them in JSON (nothing for rows from before files)."""
    if not isinstance(stored, list):
        return ()
    return tuple(_ATTACHMENTS.validate_python(stored))


_ATTACHMENTS = TypeAdapter(list[Attachment])
