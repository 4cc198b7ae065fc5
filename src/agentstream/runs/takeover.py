"""Runs taken over from a worker that died: what another worker needs to go on with one.

A run whose worker dies (its lease in Redis lapses, or the worker handed it over as it
stopped) is claimed by exactly one live worker (:meth:`RedisBroker.claimed
<agentstream.runs.redis_broker.RedisBroker>`), which rebuilds the run and continues it
under the same id, appending to the same event log. Two things are needed for that:

- The request, kept beside the run's log when it opens (:func:`request_record`): the agent's
  options, the caller, the conversation, the protocol's limits.
- Where the run stands (:func:`resumption`), read from two places, each the truth for part of
  the run:

  The **store** holds the run's messages up to its last tool round that was committed
  (``append_messages`` after each round): exactly as the vendor needs them back, reasoning
  signatures and vendor data included. It is the truth for those rounds, and the model is
  asked again from there. But the store lags: a round is committed after it ended, while the
  next model turn already streams.

  The **event log** in Redis is the truth for what happened after that: every tool call's
  arguments reach it before any tool of the round starts (the loop waits for it:
  ``RunInput.durable``), and each result as the call ends. So a round that the log shows and
  the store does not is rebuilt from the log (its text and calls; not its reasoning, which
  the log does not carry), its finished calls keep their results, and a call that may have
  been running is run again only if its tool is idempotent. The log also holds the numbers a
  continuation goes on from (events, turns, parts, call indexes), the tool history and the
  usage so far. The text of a model turn cut short is in the log but is not an answer: the
  model writes that turn again, and only the store's and the rebuilt rounds' text counts.

Why not the log alone: it does not hold messages as the vendor needs them, and it is trimmed
and expires. Why not the store alone: it would have to commit every call before its tool
starts (a database write per round on the run's path, where the log's append is already
being made and costs one round trip to Redis).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import TypeAdapter
from pydantic_core import PydanticSerializationError

from agentstream.agent.resumption import Resumption, Round
from agentstream.agent.turns import PendingCall
from agentstream.events import (
    PartEnded,
    PartStarted,
    Payload,
    PayloadEvent,
    RunEvent,
    RunResumed,
    TextDelta,
    ToolCallArgs,
    ToolCallFinished,
    ToolCallStarted,
    ToolHistoryEntry,
    TurnFinished,
    TurnStarted,
    Usage,
    UsageEvent,
)
from agentstream.messages import (
    TURN_SEPARATOR,
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultsMessage,
)
from agentstream.runs.request import RunRequest

__all__ = ["CannotResume", "request_from_record", "request_record", "resumption"]

_REQUEST = TypeAdapter(RunRequest)


class CannotResume(Exception):
    """The run cannot be continued (its log is incomplete, its request is not kept): it
    ends as interrupted."""


def request_record(request: RunRequest) -> str | None:
    """The request as JSON, kept beside the run's log so another worker can rebuild it
    (the caller's token with it: tools of the continued run act for the same caller).
    ``None`` for a request JSON cannot hold (a ``context`` object of the application's own):
    such a run is not taken over, it ends as interrupted as before."""
    try:
        return _REQUEST.dump_json(request).decode()
    except (PydanticSerializationError, TypeError, ValueError):
        return None


def request_from_record(record: str) -> RunRequest:
    return _REQUEST.validate_json(record)


@dataclass(slots=True)
class _Turn:
    """One turn as the log shows it."""

    number: int
    text: list[str] = field(default_factory=list)
    args: dict[str, ToolCallArgs] = field(default_factory=dict)
    finished: dict[str, ToolCallFinished] = field(default_factory=dict)
    offset: int = 0
    """How long the answer's streamed text was when the turn's round began."""
    ended: bool = False


def resumption(stored: Sequence[Message], events: Sequence[RunEvent]) -> Resumption:
    """Where the run stands, from its messages in the store (``stored``: its own, question
    first) and its event log (see the module docstring). Raises :class:`CannotResume` for a
    log that does not start with the run's first event (trimmed, or expired)."""
    if events and events[0].seq != 0:
        raise CannotResume("the run's log does not start with its first event")
    answering = _Turn(-1)  # the approved calls a run answering a person runs first
    turns: list[_Turn] = []
    parts, open_part, calls = 0, None, 0
    usage = Usage()
    payloads: list[Payload] = []
    streamed = 0  # characters of answer text streamed in turns that count
    for event in events:
        match event:
            case TurnStarted(turn=number):
                turns.append(_Turn(number))
            case TextDelta(text=text) if turns:
                turns[-1].text.append(text)
                streamed += len(text)
            case PartStarted(part=part, kind=kind):
                parts, open_part = part + 1, kind
            case PartEnded():
                open_part = None
            case ToolCallStarted(index=index):
                calls = max(calls, index + 1)
            case ToolCallArgs(call_id=call_id, index=index):
                calls = max(calls, index + 1)
                current = turns[-1] if turns else answering
                if not current.args:
                    current.offset = streamed
                current.args.setdefault(call_id, event)
            case ToolCallFinished(call_id=call_id, index=index):
                calls = max(calls, index + 1)
                (turns[-1] if turns else answering).finished[call_id] = event
            case TurnFinished() if turns:
                turns[-1].ended = True
            case UsageEvent(usage=used):
                usage = usage + used
            case PayloadEvent(payload=payload):
                payloads.append(payload)
            case RunResumed() if turns and not turns[-1].args:
                # An earlier takeover: the turn cut short then is written again after it.
                streamed -= sum(len(text) for text in turns[-1].text)
                turns[-1].text.clear()
            case _:
                pass
    stored_calls = {
        call.id
        for message in stored
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls
    }
    segments = [m.text for m in stored if isinstance(m, AssistantMessage)]
    rounds: list[Round] = []
    said = any(segments)  # the answer has text before the round (then a separator begins it)
    for logged in turns:
        if logged.args and not stored_calls.issuperset(logged.args):
            rounds.append(_round(logged, said))
            said = said or bool(rounds[-1].assistant and rounds[-1].assistant.text)
    approvals = _approvals(stored, answering, calls)
    if approvals is not None:
        rounds.insert(0, approvals)
        calls = max(calls, *(call.index + 1 for call in approvals.calls))
    last = turns[-1] if turns else None
    if last is None:
        turn, turn_open = 0, False
    elif last.args or last.ended:
        turn, turn_open = last.number + 1, False
    else:
        turn, turn_open = last.number, True
    return Resumption(
        seq=events[-1].seq + 1 if events else 0,
        turn=turn,
        turn_open=turn_open,
        parts=parts,
        open_part=open_part,
        calls=calls,
        segments=tuple(segments),
        usage=usage,
        tool_history=tuple(_history([answering, *turns])),
        payloads=tuple(payloads),
        rounds=tuple(rounds),
    )


def _round(turn: _Turn, after_text: bool) -> Round:
    """A round the store does not hold, rebuilt from its turn in the log."""
    text = "".join(turn.text)
    if after_text and text.startswith(TURN_SEPARATOR):
        text = text[len(TURN_SEPARATOR) :]  # the loop adds it back when it joins the turns
    calls = []
    for args in turn.args.values():
        raw = args.raw_arguments if args.raw_arguments is not None else json.dumps(args.arguments)
        calls.append(PendingCall(args.call_id, args.name, args.index, fragments=[raw]))
    assistant = AssistantMessage(
        text=text,
        tool_calls=tuple(
            ToolCall(id=a.call_id, name=a.name, arguments=a.arguments) for a in turn.args.values()
        ),
    )
    return Round(
        turn=turn.number,
        assistant=assistant,
        calls=tuple(calls),
        started=frozenset(turn.args),
        finished=dict(turn.finished),
        ended=turn.ended,
    )


def _approvals(stored: Sequence[Message], answering: _Turn, calls: int) -> Round | None:
    """The round of approved calls a run answering a person runs before its first turn,
    if their results are not stored: the run's first stored message records the answers,
    with the approved calls still pending (:func:`~agentstream.pending.answered_message`)."""
    opened = stored[0] if stored and isinstance(stored[0], ToolResultsMessage) else None
    if opened is None:
        return None
    approved = [p for p in opened.pending if p.waiting_for == "approved"]
    answered = {
        part.tool_call_id
        for message in stored[1:]
        if isinstance(message, ToolResultsMessage)
        for part in message.results
    }
    if not approved or any(p.call_id in answered for p in approved):
        return None
    pending = []
    for p in approved:
        logged = answering.args.get(p.call_id)
        if logged is not None:
            index = logged.index
        else:
            index, calls = calls, calls + 1
        pending.append(PendingCall(p.call_id, p.name, index, fragments=[json.dumps(p.arguments)]))
    return Round(
        turn=-1,
        assistant=None,
        calls=tuple(pending),
        started=frozenset(answering.args),
        finished=dict(answering.finished),
        ended=True,
    )


def _history(turns: Sequence[_Turn]) -> list[ToolHistoryEntry]:
    """The tool history of the calls that finished, as the loop keeps it."""
    entries = []
    for turn in turns:
        for call_id, done in turn.finished.items():
            args = turn.args.get(call_id)
            entries.append(
                ToolHistoryEntry(
                    index=done.index,
                    call_id=call_id,
                    tool_name=done.name,
                    input=args.arguments if args is not None else {},
                    output=done.output,
                    is_error=done.is_error,
                    duration_ms=done.duration_ms,
                    text_offset=turn.offset,
                    display=args.display if args is not None else None,
                    outcome=done.outcome,
                    attachments=done.attachments,
                )
            )
    return entries
