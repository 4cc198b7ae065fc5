"""Canonical run events: the one stream every consumer reads.

A *run* answers one user message, possibly over many model turns. The agent loop yields these
events in order; wire dialects, the store, the broker and the terminal renderer all consume the
same stream and nothing else. Each event is a small frozen dataclass with a literal ``type``
discriminator, the ``run_id`` it belongs to, and ``seq``: a per-run counter that starts at 0 and
increases by one with every event, so a consumer can detect gaps and resume after a reconnect.

Dataclasses (not pydantic models) keep construction in the sub-microsecond range on the hot
path; :data:`RUN_EVENT_ADAPTER` gives validation and JSON when an event crosses a process
boundary. Consumers ``match`` on the classes and end with ``assert_never`` so that adding an
event type is a type error everywhere it is not yet handled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from agentstream.attachments.types import Attachment
from agentstream.conversation import ConversationDetail
from agentstream.messages import PendingToolCall, ToolOutcome

__all__ = [
    "RUN_EVENT_ADAPTER",
    "AnswerShaped",
    "ContextReport",
    "ContextSummarized",
    "ConversationSaved",
    "TERMINAL_EVENTS",
    "ToolOutcome",
    "Payload",
    "PayloadEvent",
    "ReasoningDelta",
    "RunCancelled",
    "RunResumed",
    "RunCompleted",
    "RunEvent",
    "RunFailed",
    "RunStarted",
    "RunUsage",
    "RunWarning",
    "StateDelta",
    "StateSnapshot",
    "CUT_OFF",
    "StopReason",
    "SuggestedAction",
    "SuggestedValue",
    "TextDelta",
    "ToolCallArgs",
    "ToolCallDelta",
    "ToolCallStarted",
    "ToolCallFinished",
    "ToolError",
    "ToolHistoryEntry",
    "ToolProgress",
    "PartEnded",
    "PartKind",
    "PartStarted",
    "TurnFinished",
    "TurnStarted",
    "Usage",
    "UsageEvent",
    "event_from_json",
    "event_to_dict",
    "event_to_json",
]


# --- values carried by events ---------------------------------------------------------------


StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"]
"""Why a model turn ended, in every vendor's terms at once: it answered (``end_turn``), asked
for tools (``tool_use``), reached its output limit (``max_tokens``; a context window that
filled up counts as one), wrote a stop sequence, was stopped by the vendor's content filter
or safety system (``refusal``), or something else the vendor named."""

CUT_OFF: frozenset[StopReason] = frozenset({"max_tokens", "refusal"})
"""The stop reasons of an answer that did not end where the model meant it to: a client says
it was cut off (and may offer to continue)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token counts. Vendors differ in what they report; absent counts are 0."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def counts(self) -> dict[str, int]:
        """Every count by its name, as the store and the REST API show them."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RunUsage:
    """What a whole run used, as it is billed, however it ended: its tokens (the vendors'
    counts, with estimates where a vendor gave none: ``estimated``, see
    :mod:`agentstream.agent.usage`), the model they were spent on and, once priced, their
    cost in US dollars (``None``: nobody gave the model a price)."""

    usage: Usage
    estimated: bool = False
    model: str | None = None
    cost_usd: float | None = None

    def to_json(self) -> dict[str, Any]:
        """As the store keeps it and the conversations API shows it."""
        return {**self.usage.counts(), "estimated": self.estimated, "cost_usd": self.cost_usd}


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolError:
    """Why a tool call failed. ``kind`` is one of a small vocabulary callers act on:
    ``unknown_tool``, ``invalid_arguments``, ``timeout``, ``exception`` (the tool raised),
    ``cancelled``."""

    kind: str
    message: str
    exception_type: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Payload:
    """Structured data for the client (a preview, a schema proposal, search results).

    ``kind`` names the payload type; ``payload_id`` is assigned when the payload is emitted so
    later turns and the UI can refer to it.
    """

    kind: str
    data: Any
    summary: str | None = None
    payload_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SuggestedValue:
    label: str
    value: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SuggestedAction:
    label: str
    action: str
    handler: Literal["client", "server"] = "client"
    data: Any = None
    style: Literal["primary", "secondary", "warning"] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolHistoryEntry:
    """One finished tool call, as the final answer reports it (the chat tray's ``tool_history``).

    ``text_offset`` is the length of the run's text when the call finished, in code points:
    where its card (the chat tray's ``[[tool:N]]`` marker) belongs in the answer's text.
    """

    index: int
    call_id: str
    tool_name: str
    input: dict[str, Any]
    output: Any
    is_error: bool = False
    """The model read the result as a failure (``outcome`` is ``error`` or ``interrupted``)."""
    duration_ms: float = 0.0
    text_offset: int = 0
    display: str | None = None
    """The tool's friendly text for this call (``Tool.display``), for clients' tool cards."""
    outcome: ToolOutcome = "ok"
    """How the call ended (:data:`~agentstream.messages.ToolOutcome`)."""
    attachments: tuple[Attachment, ...] = ()
    """Files the tool made (a chart it drew), which its card shows."""


# --- the events -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted:
    run_id: str
    seq: int
    conversation_id: str | None = None
    conversation_title: str | None = None
    user_id: str | None = None
    model: str | None = None
    tool_names: tuple[str, ...] = ()
    type: Literal["run_started"] = "run_started"


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted:
    """A model turn begins (the workflow assistant's ``message_start``). ``turn`` is zero-based."""

    run_id: str
    seq: int
    turn: int
    type: Literal["turn_started"] = "turn_started"


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnFinished:
    """A model turn ended, after the tools it asked for (if any) finished. ``reason`` is
    ``tool_calls`` when the model asked for tools, ``stop`` when it answered. A turn cut short
    (the run failed or was cancelled) has no ``turn_finished``: the terminal event ends it."""

    run_id: str
    seq: int
    turn: int
    reason: Literal["stop", "tool_calls"]
    type: Literal["turn_finished"] = "turn_finished"


PartKind = Literal["text", "reasoning"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PartStarted:
    """A run of text or reasoning deltas begins. Every ``text_delta`` and ``reasoning_delta``
    falls between a ``part_started`` and a ``part_ended`` of its kind; parts do not nest, and
    ``part`` counts them across the run (protocols that give each text message or reasoning
    block an id derive it from this). Protocols without parts ignore both events."""

    run_id: str
    seq: int
    part: int
    kind: PartKind
    type: Literal["part_started"] = "part_started"


@dataclass(frozen=True, slots=True, kw_only=True)
class PartEnded:
    """The text or reasoning part ``part`` is complete (the model moved on to something else,
    finished its turn, or the run ended)."""

    run_id: str
    seq: int
    part: int
    kind: PartKind
    type: Literal["part_ended"] = "part_ended"


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    run_id: str
    seq: int
    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta:
    run_id: str
    seq: int
    text: str
    type: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStarted:
    """The model asked for a tool; its arguments may still be streaming (the workflow assistant's
    ``tool_call_start``).

    ``index`` counts tool calls across the whole run, in the order the model made them.
    """

    run_id: str
    seq: int
    call_id: str
    name: str
    index: int
    type: Literal["tool_call_started"] = "tool_call_started"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallDelta:
    """A piece of a tool call's JSON arguments as the model streams them (after its
    ``tool_call_started``, before its ``tool_call_args``). The pieces of one call join to the
    JSON text the model sent; a vendor that sends a call whole sends one piece. For protocols
    that show arguments as they are written; the others ignore it."""

    run_id: str
    seq: int
    call_id: str
    delta: str
    type: Literal["tool_call_delta"] = "tool_call_delta"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallArgs:
    """The arguments are complete and the call is about to run.

    ``arguments`` are what the tool receives, after injection hooks. When the model sent JSON
    that does not parse, ``arguments`` is empty and ``raw_arguments`` holds what was sent.
    """

    run_id: str
    seq: int
    call_id: str
    name: str
    index: int
    arguments: dict[str, Any]
    raw_arguments: str | None = None
    display: str | None = None
    started_at: float = 0.0
    type: Literal["tool_call_args"] = "tool_call_args"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolProgress:
    run_id: str
    seq: int
    call_id: str
    name: str
    stage: str | None = None
    message: str | None = None
    fraction: float | None = None
    data: Any = None
    type: Literal["tool_progress"] = "tool_progress"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallFinished:
    """A tool call ended. ``result`` is the text the model receives; ``output`` is the value the
    tool returned (JSON-able) for clients that show it; ``payload`` is client-only data.
    ``outcome`` says how it ended (``ok``, ``error``, ``interrupted``, ``denied``: a person
    declined it); ``is_error`` is whether the model reads it as a failure."""

    run_id: str
    seq: int
    call_id: str
    name: str
    index: int
    is_error: bool
    result: str
    output: Any = None
    error: ToolError | None = None
    payload: Payload | None = None
    duration_ms: float = 0.0
    display: str | None = None
    finished_at: float = 0.0
    outcome: ToolOutcome = "ok"
    attachments: tuple[Attachment, ...] = ()
    """Files the tool made (``ToolContext.attach``), read by the model beside ``result``."""
    type: Literal["tool_call_finished"] = "tool_call_finished"


@dataclass(frozen=True, slots=True, kw_only=True)
class PayloadEvent:
    """Structured data for the client (the workflow assistant's
    ``workflow_preview``, the chat tray's custom payloads)."""

    run_id: str
    seq: int
    payload: Payload
    call_id: str | None = None
    type: Literal["payload"] = "payload"


@dataclass(frozen=True, slots=True, kw_only=True)
class StateSnapshot:
    """The shared state the run starts from (see :mod:`agentstream.state`): what the page
    sent with the message, or the state its conversation has stored. Right after
    ``run_started``, and only in runs that have a state; AG-UI's ``STATE_SNAPSHOT``."""

    run_id: str
    seq: int
    state: dict[str, Any]
    type: Literal["state_snapshot"] = "state_snapshot"


@dataclass(frozen=True, slots=True, kw_only=True)
class StateDelta:
    """A tool changed the shared state: ``patch`` (JSON Patch, RFC 6902) turns the state as
    it stood into the state as it now is. Just before the ``tool_call_finished`` of the call
    that made the change; AG-UI's ``STATE_DELTA``."""

    run_id: str
    seq: int
    patch: tuple[dict[str, Any], ...]
    call_id: str | None = None
    type: Literal["state_delta"] = "state_delta"


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageEvent:
    """A model call ended: its token usage as the vendor reported it, why it stopped
    (``stop_reason``) and the model that answered, as the vendor named it (``model``, when it
    said)."""

    run_id: str
    seq: int
    usage: Usage
    turn: int = 0
    stop_reason: StopReason | None = None
    model: str | None = None
    type: Literal["usage"] = "usage"


@dataclass(frozen=True, slots=True, kw_only=True)
class RunWarning:
    """Something went wrong and the run continues (the ops agent's ``warning``, e.g.
    ``tool_fallback``)."""

    run_id: str
    seq: int
    code: str
    message: str
    type: Literal["warning"] = "warning"


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextSummarized:
    """The earlier part of the conversation no longer fits the model's window and was
    summarized by the model: from now on it reads ``summary`` in place of those exchanges
    (see :mod:`agentstream.agent.summaries`). ``exchanges`` is how many exchanges the summary
    covers in all (earlier summaries included); ``covered``, how many exchanges of the run's
    ``RunInput.history`` it covers, which is what whoever keeps the conversation needs to
    store it against the right message (the question after them). The conversation itself
    is unchanged."""

    run_id: str
    seq: int
    summary: str
    exchanges: int
    covered: int
    type: Literal["context_summarized"] = "context_summarized"


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResumed:
    """The worker writing the answer died and another one took the run over: it continues
    from the run's last completed tool round, so the text streamed since then is written
    again. Protocols with parts start a new one (the interrupted part has ended just before
    this event); the others show ``notice`` (:meth:`as_text`) before the continuation. See
    ``docs/guides/durable-runs.md``."""

    run_id: str
    seq: int
    notice: str = "(The server writing this answer stopped; another one continues it.)"
    type: Literal["run_resumed"] = "run_resumed"

    def as_text(self) -> TextDelta:
        """The notice as text, for protocols that cannot start a new part: on a line of its
        own, so the continuation does not run on from the interrupted sentence."""
        return TextDelta(run_id=self.run_id, seq=self.seq, text=f"\n\n{self.notice}\n\n")


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerShaped:
    """The answer as a chat client shows it, made by the response layer above the loop
    (``agentstream.chat``) just before ``run_completed``: ``message`` with the marker blocks
    taken out (the rest exactly as streamed), the tool calls with each ``text_offset``
    pointing into it, the payloads completed by their types, suggested values and actions, the
    payload to show last, and diagnostics when asked for. Where tool markers go is each
    presenter's to say (the chat tray's ``[[tool:N]]``), from the offsets. Runs without chat
    hooks have none; protocols without these notions ignore it."""

    run_id: str
    seq: int
    message: str
    tool_history: tuple[ToolHistoryEntry, ...] = ()
    """The run's finished tool calls, offsets into ``message`` (empty: as in
    ``run_completed``)."""
    payloads: tuple[Payload, ...] = ()
    suggested_values: tuple[SuggestedValue, ...] = ()
    suggested_actions: tuple[SuggestedAction, ...] = ()
    custom_payload: Payload | None = None
    diagnostics: dict[str, Any] | None = None
    type: Literal["answer_shaped"] = "answer_shaped"


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationSaved:
    """The store has committed the run's answer: the conversation as it now stands (for
    protocols that send it back with the answer). Only runs kept in a store have it, just
    before ``run_completed``."""

    run_id: str
    seq: int
    conversation: ConversationDetail
    type: Literal["conversation_saved"] = "conversation_saved"


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextReport:
    """How full the model's window was at a run's last model call, in the server's estimate
    (:mod:`agentstream.agent.tokens`): the request's ``tokens`` in all, made of the system
    prompt, the tool definitions, the summary of earlier exchanges and the history sent, and
    the ``max_tokens`` kept for the answer. ``window`` is None for a model whose window is
    not known. ``left_out`` counts the earlier exchanges the request did not carry (whether
    summarized or not), ``summarized`` those the summary covers."""

    window: int | None
    tokens: int
    system: int
    tools: int
    summary: int
    history: int
    max_tokens: int
    left_out: int = 0
    summarized: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCompleted:
    """The run answered: what the loop knows. ``message`` is the model's text, turns joined
    by a blank line; ``tool_history`` the calls that finished; ``payloads`` those tools
    sent. How a chat client shows the answer comes before it, in ``answer_shaped``.

    ``pending_calls`` is not empty when the run stopped at tool calls it does not run itself:
    frontend tools (``waiting_for="client"``) and calls that need a person's approval
    (``"approval"``). The conversation continues with the run that answers them (see
    :mod:`agentstream.pending`).

    ``stop_reason`` is why the last model turn ended: ``max_tokens`` (the output limit) or
    ``refusal`` (a content filter) mean the answer is cut off (:attr:`cut_off`), and each
    protocol says so its own way."""

    run_id: str
    seq: int
    message: str
    usage: Usage = field(default_factory=Usage)
    tool_history: tuple[ToolHistoryEntry, ...] = ()
    payloads: tuple[Payload, ...] = ()
    pending_calls: tuple[PendingToolCall, ...] = ()
    stop_reason: StopReason = "end_turn"
    context: ContextReport | None = None
    """How full the model's window was at the run's last model call."""
    type: Literal["run_completed"] = "run_completed"

    @property
    def cut_off(self) -> bool:
        """The answer stopped before the model meant it to (see :data:`CUT_OFF`)."""
        return self.stop_reason in CUT_OFF


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFailed:
    """The run ended with an error. ``message`` is safe to show a user: it never carries
    credentials, request bodies or stack traces. ``kind`` is the provider error kind
    (``auth``, ``rate_limited``, ...) or ``max_turns`` or ``internal``."""

    run_id: str
    seq: int
    kind: str
    message: str
    type: Literal["run_failed"] = "run_failed"


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCancelled:
    run_id: str
    seq: int
    reason: str = "cancelled"
    type: Literal["run_cancelled"] = "run_cancelled"


RunEvent = Annotated[
    RunStarted
    | TurnStarted
    | TurnFinished
    | PartStarted
    | PartEnded
    | TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolCallDelta
    | ToolCallArgs
    | ToolProgress
    | ToolCallFinished
    | PayloadEvent
    | StateSnapshot
    | StateDelta
    | UsageEvent
    | RunWarning
    | ContextSummarized
    | RunResumed
    | AnswerShaped
    | ConversationSaved
    | RunCompleted
    | RunFailed
    | RunCancelled,
    Field(discriminator="type"),
]
"""Every canonical event. A run's last event is exactly one of :data:`TERMINAL_EVENTS`."""

TERMINAL_EVENTS = (RunCompleted, RunFailed, RunCancelled)

RUN_EVENT_ADAPTER: TypeAdapter[RunEvent] = TypeAdapter(RunEvent)


def event_to_dict(event: RunEvent) -> dict[str, Any]:
    """The event as JSON-compatible Python data."""
    data: dict[str, Any] = RUN_EVENT_ADAPTER.dump_python(event, mode="json")
    return data


def event_to_json(event: RunEvent) -> bytes:
    """The canonical JSON of an event: what run logs store and ``/api/runs/{id}/events`` sends."""
    return RUN_EVENT_ADAPTER.dump_json(event)


def event_from_json(data: str | bytes) -> RunEvent:
    """The event :func:`event_to_json` wrote, as its own class (the ``type`` field picks it)."""
    return RUN_EVENT_ADAPTER.validate_json(data)
