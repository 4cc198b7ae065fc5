"""Pending tool calls: calls a run leaves open for the client or for a person.

Two kinds of tool call are not run by the run that received them:

* a **frontend tool** (:class:`ClientTool`): declared by the client for one request, offered
  to the model beside the server's tools, and run by the client (a browser that opens a
  dialog, changes the page, reads a local file);
* a server tool that **requires approval** (``@tool(requires_approval=...)``): a person must
  say yes before it runs.

When a model turn calls either, the server calls of that turn still run; then the run ends
with ``run_completed`` whose ``pending_calls`` lists the open calls, and the stored history
keeps the turn open: the assistant message with its calls, and a
:class:`~agentstream.messages.ToolResultsMessage` holding the results so far and a
:class:`~agentstream.messages.PendingToolCall` for each open call. That state is in the store,
so any worker can continue it, after a reload too.

The next run carries :class:`Answers` for every open call: a :class:`ClientToolResult` per
frontend call, an :class:`ApprovalDecision` per approval. Its start stores the results the
answers give (client results, denials; see :func:`answered_message`); the loop runs the
approved calls, and the model is called with the turn complete. A denial reaches the model as
an ordinary result saying the user declined (not as an error). A run that starts with a new
user message and no answers abandons the open calls: each gets a result saying it was not
answered, so the history stays one a vendor accepts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentstream.messages import (
    AssistantMessage,
    Message,
    PendingToolCall,
    ToolResultPart,
    ToolResultsMessage,
)

__all__ = [
    "INTERRUPTED_TOOL_RESULT",
    "NOT_ANSWERED_TOOL_RESULT",
    "Answers",
    "ApprovalDecision",
    "ClientTool",
    "ClientToolResult",
    "InvalidAnswers",
    "answered_message",
    "check_answers",
    "denial_result",
    "open_calls",
    "provider_history",
]

INTERRUPTED_TOOL_RESULT = '{"error": "The tool call was interrupted before it returned a result."}'
"""What the model reads for a call that never returned, in the shape of every tool error."""

NOT_ANSWERED_TOOL_RESULT = (
    '{"error": "The call was not answered: the conversation went on without its result."}'
)
"""What the model reads for a pending call the conversation moved on from."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientTool:
    """A tool the client declares for one request and runs itself (a frontend tool).

    ``parameters`` is the JSON Schema the model is shown; the client checks the arguments it
    receives (the server does not run the tool, so it does not validate them)."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientToolResult:
    """The client's result for a frontend tool call: ``content`` is the text the model reads."""

    call_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalDecision:
    """A person's answer to a call waiting for approval; ``reason`` reaches the model with a
    denial."""

    call_id: str
    approved: bool
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Answers:
    """What a request brings for the calls its conversation's last run left open."""

    results: tuple[ClientToolResult, ...] = ()
    decisions: tuple[ApprovalDecision, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.results or self.decisions)


class InvalidAnswers(ValueError):
    """The answers do not fit the open calls (an unknown or already answered call id, a result
    for a call waiting for approval, a call left unanswered). The message is safe to show."""


def open_calls(history: Sequence[Message]) -> tuple[PendingToolCall, ...]:
    """The calls the last turn of ``history`` (as :func:`provider_history` gives it) waits
    on: empty unless the history ends with an open turn."""
    if history and isinstance(history[-1], ToolResultsMessage):
        return tuple(p for p in history[-1].pending if p.waiting_for != "approved")
    return ()


def check_answers(waiting: Sequence[PendingToolCall], answers: Answers) -> None:
    """Raise :class:`InvalidAnswers` unless ``answers`` answers each call of ``waiting``
    exactly once, in the way it waits for."""
    by_id = {p.call_id: p for p in waiting}
    seen: set[str] = set()
    given = [(r.call_id, "client") for r in answers.results]
    given += [(d.call_id, "approval") for d in answers.decisions]
    for call_id, kind in given:
        call = by_id.get(call_id)
        if call is None:
            raise InvalidAnswers(f"no tool call {call_id!r} is waiting for an answer")
        if call_id in seen:
            raise InvalidAnswers(f"tool call {call_id!r} is answered twice")
        if call.waiting_for != kind:
            wanted = "a result from the client" if call.waiting_for == "client" else "approval"
            raise InvalidAnswers(f"tool call {call_id!r} ({call.name}) waits for {wanted}")
        seen.add(call_id)
    missing = [p.call_id for p in waiting if p.call_id not in seen]
    if seen and missing:
        raise InvalidAnswers("tool calls still waiting for an answer: " + ", ".join(missing))


def denial_result(reason: str | None) -> str:
    """What the model reads for a call a person declined: a result, not an error, so the
    model treats it as the user's decision rather than a failure to retry."""
    body: dict[str, Any] = {"denied": True, "message": "The user did not approve this call."}
    if reason:
        body["reason"] = reason
    return json.dumps(body)


def answered_message(waiting: Sequence[PendingToolCall], answers: Answers) -> ToolResultsMessage:
    """The message that records ``answers`` (already checked against ``waiting``): the
    client's results and a denial result per declined call; approved calls stay pending as
    ``approved`` until the run that answered them has run them."""
    by_id = {p.call_id: p for p in waiting}
    results = [
        ToolResultPart(
            tool_call_id=r.call_id,
            name=by_id[r.call_id].name,
            content=r.content,
            outcome="error" if r.is_error else "ok",
        )
        for r in answers.results
    ]
    approved: list[PendingToolCall] = []
    for decision in answers.decisions:
        call = by_id[decision.call_id]
        if decision.approved:
            approved.append(replace(call, waiting_for="approved"))
        else:
            results.append(
                ToolResultPart(
                    tool_call_id=call.call_id,
                    name=call.name,
                    content=denial_result(decision.reason),
                    outcome="denied",
                )
            )
    return ToolResultsMessage(results=tuple(results), pending=tuple(approved))


def provider_history(messages: Sequence[Message], *, keep_open: bool = True) -> list[Message]:
    """``messages`` made safe to send to a provider.

    * The results of one turn stored in several messages (a turn that waited for answers)
      are joined into one, in the order of the calls.
    * A call without a result gets an error result: "interrupted" when its run stopped while
      it ran, "not answered" when it waited for the client or a person and the conversation
      went on. Only the last turn of ``messages`` may stay open (``keep_open``): it then ends
      with a results message whose ``pending`` names the calls still waiting.
    * An assistant message with no text, reasoning or tool calls (cancelled before the first
      token) is dropped, and so are tool results that answer no call of the turn before them.
    """
    repaired: list[Message] = []
    position = 0
    while position < len(messages):
        message = messages[position]
        position += 1
        if isinstance(message, ToolResultsMessage):
            continue  # results whose tool calls are not in the history: a vendor refuses them
        if not isinstance(message, AssistantMessage):
            repaired.append(message)
            continue
        if not (message.text or message.reasoning or message.tool_calls):
            continue
        repaired.append(message)
        if not message.tool_calls:
            continue
        called = {call.id for call in message.tool_calls}
        results: dict[str, ToolResultPart] = {}
        waiting: dict[str, PendingToolCall] = {}
        while position < len(messages):
            following = messages[position]
            if not isinstance(following, ToolResultsMessage):
                break
            position += 1
            for part in following.results:
                if part.tool_call_id in called:
                    results.setdefault(part.tool_call_id, part)
            for pending in following.pending:
                if pending.call_id in called:
                    waiting[pending.call_id] = pending
        still = tuple(
            p
            for call_id, p in waiting.items()
            if call_id not in results and p.waiting_for != "approved"
        )
        if keep_open and position == len(messages) and still:
            answered = tuple(results[c.id] for c in message.tool_calls if c.id in results)
            repaired.append(ToolResultsMessage(results=answered, pending=still))
            continue
        complete = tuple(
            results.get(call.id)
            or ToolResultPart(
                tool_call_id=call.id,
                name=call.name,
                content=(
                    NOT_ANSWERED_TOOL_RESULT
                    if call.id in waiting and waiting[call.id].waiting_for != "approved"
                    else INTERRUPTED_TOOL_RESULT
                ),
                outcome="interrupted",
            )
            for call in message.tool_calls
        )
        repaired.append(ToolResultsMessage(results=complete))
    return repaired
