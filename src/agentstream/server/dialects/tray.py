"""``tray``, the chat tray protocol: ``POST /api/chat/stream``, ``data: {json}`` frames by ``type``.

``status {message: "Thinking...", run_id}`` first (``run_id`` is additive: the stop button
posts it to ``POST /api/chat/runs/{run_id}/cancel``), ``text_delta {text}``, ``tool_start
{tool, input, tool_use_id, display?}`` (``display``: the tool's friendly text, additive),
``tool_progress {tool, stage, message, progress, data}``,
``tool_complete {tool, index, is_error, duration_ms, view?}`` (``view``: the call's
interactive view payload, for a tool drawn by one, additive) followed by a ``text_delta``
carrying the ``[[tool:N]]`` marker, then ``complete {payload}``, ``error {message}`` or
``cancelled``. A run of a conversation with shared state sends ``state_snapshot {state}``
after ``status``, and ``state_delta {patch}`` (JSON Patch, RFC 6902) just before the
``tool_complete`` of a tool that changed it; the request's ``state`` (a JSON object)
replaces the stored state. With
``include_reasoning: true`` the model's reasoning streams as ``thinking {text}`` frames (an
opt-in extension for the web UI; other clients never see them).

The ``complete`` payload serves every tray client: ``message`` (the answer with its tool
markers placed where each call's ``text_offset`` says, set off by blank lines),
``suggested_values``, ``suggested_actions``, ``custom_payload``, ``tool_history`` (top level,
for clients that read it there), ``conversation_id``, ``payloads``, ``usage`` and
``diagnostics`` when the run has them, and ``pending_approvals`` (``[{call_id, tool_name,
input, display?}]``) when the run stopped at tools that wait for a person's approval: the next
request answers them in ``approvals: [{call_id, approved, reason?}]``, its ``message`` may
then be empty; ``stop_reason`` (``max_tokens`` or ``refusal``) when the answer was cut off at
the model's output limit or by its content filter. When no custom payload was produced and
tools ran,
``custom_payload`` is the tool history ``{"type": "tool_history", "data": [...]}``, so tray
clients that read ``custom_payload`` as tool history work as well as those that read the
top-level ``tool_history``; with neither it is left out (``custom_payload`` is optional, not
nullable).

Reference: ``docs/protocols/tray.md``.
"""

# No ``from __future__ import annotations``: FastAPI reads the route annotations at runtime.

from collections.abc import Sequence
from typing import Annotated, Any, assert_never

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel, Field

from agentstream.chat.markers import insert_tool_markers, tool_history_entry, tool_marker
from agentstream.conversation import attachment_json
from agentstream.errors import RunNotFound
from agentstream.events import (
    AnswerShaped,
    ContextSummarized,
    ConversationSaved,
    PartEnded,
    PartStarted,
    Payload,
    PayloadEvent,
    ReasoningDelta,
    RunCancelled,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunResumed,
    RunStarted,
    RunWarning,
    StateDelta,
    StateSnapshot,
    TextDelta,
    ToolCallArgs,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    TurnFinished,
    TurnStarted,
    UsageEvent,
)
from agentstream.messages import PendingToolCall
from agentstream.principal import Principal
from agentstream.runs import ActionRequest, ProtocolOptions, RunRequest
from agentstream.server.dialects.approvals import (
    MAX_APPROVALS,
    Approval,
    CallId,
    answers,
    waiting_for_approval,
)
from agentstream.server.dialects.base import (
    DoubleTextingRequest,
    Frame,
    RequestModel,
    choose_model,
    dumps,
    page_state,
    quote,
    stream_run,
)
from agentstream.server.dialects.branching import BranchingRequest, branched
from agentstream.server.dialects.declaration import Dialect, StreamOptions
from agentstream.server.direct import DirectRoute
from agentstream.server.settings import DisconnectPolicy
from agentstream.server.sse import SSE_DATA, Encoder, WireFormat
from agentstream.server.state import ServerContext
from agentstream.tools.views import VIEW_PAYLOAD

__all__ = [
    "CANCEL_PATH",
    "PROTOCOL",
    "PATH",
    "ChatAction",
    "TrayApproval",
    "TrayChatRequest",
    "TrayEncoder",
    "DIALECT",
    "router",
    "to_run_request",
]

PATH = "/api/chat/stream"
CANCEL_PATH = "/api/chat/runs/{run_id}/cancel"
PROTOCOL = ProtocolOptions(max_turns=5)


class ChatAction(RequestModel):
    action: str = Field(min_length=1)
    data: Any = None


class TrayApproval(Approval):
    """``{call_id, approved, reason?}``: the answer to a call of ``pending_approvals``."""

    call_id: CallId

    def call(self) -> str:
        return self.call_id


class TrayChatRequest(BranchingRequest, DoubleTextingRequest):
    """The chat tray's request (``message``, ``context``, ``interaction_type``,
    ``conversation_id``), plus ``state``, ``model``, ``action``, ``include_reasoning``, ``detach``,
    ``approvals`` and the branch fields (``parent_message_id``, ``regenerate``)."""

    context: dict[str, Any] = Field(default_factory=dict)
    state: Any = None
    """The page's shared state (a JSON object): it replaces the one stored with the
    conversation, and the run starts from it (absent: from the stored one)."""
    interaction_type: str = "text_input"
    conversation_id: str | int | None = None
    model: str | None = None
    action: ChatAction | None = None
    include_reasoning: bool = False
    detach: bool = False
    """Keep the run going if this connection drops (the web UI asks for it, then follows the
    run again from ``X-Run-Id`` after a reload); by default a client that hangs up stops it.
    A deployment's ``AGENTSTREAM_ON_DISCONNECT`` overrides both."""
    approvals: list[TrayApproval] = Field(default_factory=list, max_length=MAX_APPROVALS)
    """Answers to the calls the last answer's ``pending_approvals`` named (all of them)."""


def to_run_request(
    body: TrayChatRequest, principal: Principal, *, model: str | None, diagnostics: bool
) -> RunRequest:
    conversation_id = None if body.conversation_id is None else str(body.conversation_id)
    action = body.action
    given = answers(body.approvals)
    return RunRequest(
        message=body.new_message(given),
        attachments=tuple(body.attachments),
        answers=given,
        principal=principal,
        double_texting=body.double_texting,
        conversation_id=conversation_id or None,
        context=body.context,
        state=page_state(body.state, "state"),
        model=model,
        protocol=PROTOCOL,
        interaction_type=body.interaction_type,
        action=None if action is None else ActionRequest(action=action.action, data=action.data),
        diagnostics=diagnostics,
    )


def _payload(payload: Payload) -> dict[str, Any]:
    """A payload as ``{payload_id, type, data, summary}``; an unset id or summary is left out
    (the tool history payload is just ``{type, data}``)."""
    shown: dict[str, Any] = {"payload_id": payload.payload_id} if payload.payload_id else {}
    shown["type"] = payload.kind
    shown["data"] = payload.data
    if payload.summary is not None:
        shown["summary"] = payload.summary
    return shown


class TrayEncoder:
    """Frames in the order tray clients expect: for each tool, ``tool_start``, its
    ``tool_progress``, then ``tool_complete`` and its marker, one tool after another. The loop
    runs a turn's tools concurrently, so the frames of a call that is not the oldest one still
    open are held back until the calls before it have completed; the tools themselves are
    never delayed."""

    def __init__(self, *, include_reasoning: bool = False) -> None:
        self.include_reasoning = include_reasoning
        self.conversation_id: str | None = None
        self._open: list[str] = []  # calls started and not yet shown complete, in call order
        self._held: dict[str, list[Frame]] = {}  # frames of calls behind the oldest open one
        self._finished: set[str] = set()  # held calls whose complete frames are held too
        self._shown: AnswerShaped | None = None  # the answer as shown, for ``complete``

    def encode(self, event: RunEvent) -> Sequence[Frame]:
        match event:
            case TextDelta(text=text):  # first: the per-delta path
                return (_text_delta(text),)
            case ToolCallArgs(call_id=call_id):
                self._open.append(call_id)
                return self._in_order(call_id, self._encode(event))
            case ToolProgress(call_id=call_id) | StateDelta(call_id=str() as call_id):
                return self._in_order(call_id, self._encode(event))
            case ToolCallFinished(call_id=call_id):
                return self._in_order(call_id, self._encode(event), finished=True)
            case RunCompleted() | RunFailed() | RunCancelled():
                return self.encode_end(event)
            case _:
                return self._encode(event)

    def encode_end(self, event: RunEvent) -> Sequence[Frame]:
        """The last frames: any tool frames still held, then the terminal frame."""
        if self._held:
            return (*self._release_all(), *self._encode(event))
        return self._encode(event)

    def _in_order(
        self, call_id: str, frames: Sequence[Frame], *, finished: bool = False
    ) -> Sequence[Frame]:
        """``frames`` now if ``call_id`` is the oldest open call, else held; when the oldest
        call completes, the held frames of the calls after it follow, in call order."""
        open_calls = self._open
        if call_id in open_calls[1:]:
            self._held.setdefault(call_id, []).extend(frames)
            if finished:
                self._finished.add(call_id)
            return ()
        if not (finished and open_calls and open_calls[0] == call_id):
            return frames
        open_calls.pop(0)
        out = list(frames)
        while open_calls:
            head = open_calls[0]
            out.extend(self._held.pop(head, ()))
            if head not in self._finished:
                break
            self._finished.discard(head)
            open_calls.pop(0)
        return out

    def _release_all(self) -> list[Frame]:
        """Everything held, in call order (the run ended while an earlier call was open)."""
        out = [frame for call_id in self._open for frame in self._held.pop(call_id, ())]
        self._open.clear()
        self._finished.clear()
        return out

    def _encode(self, event: RunEvent) -> Sequence[Frame]:
        match event:
            case TextDelta(text=text):
                return (_text_delta(text),)
            case RunResumed():  # no parts to restart: the notice, as text
                return (_text_delta(event.as_text().text),)
            case RunStarted(run_id=run_id, conversation_id=conversation_id):
                self.conversation_id = conversation_id
                status = {
                    "type": "status",
                    "message": "Thinking...",
                    "run_id": run_id,  # additive: lets a client stop the run
                    "conversation_id": conversation_id,  # and keep a stopped new chat's id
                }
                return (("status", dumps(status)),)
            case ReasoningDelta(text=text):
                if not self.include_reasoning:
                    return ()
                return (("thinking", dumps({"type": "thinking", "text": text})),)
            case ToolCallArgs(call_id=call_id, name=name, arguments=arguments, display=display):
                start = {
                    "type": "tool_start",
                    "tool": name,
                    "input": arguments,
                    "tool_use_id": call_id,
                }
                if display:  # additive: the tool's friendly text, for its card
                    start["display"] = display
                return (("tool_start", dumps(start)),)
            case ToolProgress(name=name, stage=stage, message=message, fraction=f, data=data):
                progress = {
                    "type": "tool_progress",
                    "tool": name,
                    "stage": stage,
                    "message": message,
                    "progress": f,
                    "data": data,
                }
                return (("tool_progress", dumps(progress)),)
            case ToolCallFinished(
                name=name,
                index=index,
                is_error=failed,
                duration_ms=ms,
                attachments=files,
                payload=payload,
            ):
                marker = {"type": "text_delta", "text": tool_marker(index)}
                # ``is_error``, ``duration_ms`` and the files the tool made go beyond the
                # protocol's {tool, index}, so a live card can show what a reloaded one shows;
                # other clients ignore them.
                complete: dict[str, Any] = {
                    "type": "tool_complete",
                    "tool": name,
                    "index": index,
                    "is_error": failed,
                    "duration_ms": round(ms),
                }
                if files:
                    complete["attachments"] = [attachment_json(a) for a in files]
                if payload is not None and payload.kind == VIEW_PAYLOAD:
                    # A call drawn by its interactive view: the view is shown as the call
                    # ends, not when the answer does (it is in ``complete``'s payloads too).
                    complete["view"] = _payload(payload)
                return (("tool_complete", dumps(complete)), ("text_delta", dumps(marker)))
            case RunCompleted():
                return (("complete", dumps({"type": "complete", "payload": self.payload(event)})),)
            case AnswerShaped():
                self._shown = event
                return ()
            case StateSnapshot(state=state):
                return (("state_snapshot", dumps({"type": "state_snapshot", "state": state})),)
            case StateDelta(patch=patch):
                delta = {"type": "state_delta", "patch": list(patch)}
                return (("state_delta", dumps(delta)),)
            case RunFailed(message=message):
                return self.fail(message)
            case RunCancelled():
                return (("cancelled", '{"type":"cancelled"}'),)
            case (
                TurnFinished()
                | PartStarted()
                | PartEnded()
                | TurnStarted()
                | ToolCallStarted()
                | ToolCallDelta()
                | PayloadEvent()
                | UsageEvent()
                | RunWarning()
                | ContextSummarized()
                | ConversationSaved()
            ):
                return ()
            case _:
                assert_never(event)

    def fail(self, message: str) -> Sequence[Frame]:
        return (("error", dumps({"type": "error", "message": message})),)

    def payload(self, done: RunCompleted) -> dict[str, Any]:
        shown = self._shown
        text, calls = done.message, done.tool_history
        if shown is not None:
            text, calls = shown.message, shown.tool_history or calls
        # The tray's [[tool:N]] markers, each where its call's text_offset says.
        message = insert_tool_markers(text, calls)
        history = [tool_history_entry(entry) for entry in done.tool_history]
        custom: dict[str, Any] | None = None
        if shown is not None:
            # The hooks chose it (the tool history, unless configured otherwise).
            if shown.custom_payload is not None:
                custom = _payload(shown.custom_payload)
        elif history:
            custom = {"type": "tool_history", "data": history}
        payload: dict[str, Any] = {
            "message": message,
            "suggested_values": [_plain(v) for v in shown.suggested_values] if shown else [],
            "suggested_actions": [_plain(a) for a in shown.suggested_actions] if shown else [],
        }
        if custom is not None:  # ``custom_payload?: CustomPayload``, never null
            payload["custom_payload"] = custom
        payload |= {
            "tool_history": history,
            "conversation_id": self.conversation_id,
            "payloads": [_payload(p) for p in (shown or done).payloads],
            "usage": {
                "input_tokens": done.usage.input_tokens,
                "output_tokens": done.usage.output_tokens,
                "reasoning_tokens": done.usage.reasoning_tokens,
                "cache_read_tokens": done.usage.cache_read_tokens,
            },
        }
        if shown is not None and shown.diagnostics is not None:
            payload["diagnostics"] = shown.diagnostics
        if done.cut_off:  # additive: only an answer cut off has it
            payload["stop_reason"] = done.stop_reason
        waiting = waiting_for_approval(done)
        if waiting:  # additive: only a run that stopped for a person has it
            payload["pending_approvals"] = [self._approval(call) for call in waiting]
        return payload

    @staticmethod
    def _approval(call: PendingToolCall) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "call_id": call.call_id,
            "tool_name": call.name,
            "input": call.arguments,
        }
        if call.display:
            shown["display"] = call.display
        return shown


def _text_delta(text: str) -> Frame:
    return ("text_delta", '{"type":"text_delta","text":' + quote(text) + "}")


def _plain(value: Any) -> dict[str, Any]:
    """A suggested value/action as JSON, without the unset optional fields."""
    fields = {name: getattr(value, name) for name in value.__dataclass_fields__}
    return {k: v for k, v in fields.items() if v is not None}


class CancelAnswer(BaseModel):
    run_id: str
    status: str


def router(server: ServerContext) -> APIRouter:
    api = APIRouter(tags=[DIALECT.title], route_class=DirectRoute)
    CurrentPrincipal = Annotated[Principal, Depends(server.principal(allow_cookie=True))]

    @api.post(
        PATH,
        summary="Chat tray stream: data-only SSE events",
        response_class=Response,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def chat_stream(body: TrayChatRequest, principal: CurrentPrincipal) -> Response:
        run_request = to_run_request(
            body,
            principal,
            model=await choose_model(server, body.model),
            diagnostics=server.settings.diagnostics_on,
        )
        run_request = await branched(body, server.runner.store, run_request)
        options = {"include_reasoning": body.include_reasoning}
        policy: DisconnectPolicy | None = "detach" if body.detach else None
        return await stream_run(
            server, run_request, DIALECT, options, answers_field="approvals", on_disconnect=policy
        )

    @api.post(
        CANCEL_PATH,
        summary="Cancel a run in progress (the stream then ends with cancelled)",
        status_code=202,
        responses={404: {"description": "No such run in progress for this caller"}},
    )
    async def cancel_run(run_id: str, principal: CurrentPrincipal) -> CancelAnswer:
        if not await server.stop_run(run_id, principal, reason="user_cancelled"):
            raise RunNotFound(run_id)
        return CancelAnswer(run_id=run_id, status="cancelling")

    return api


def _stream(options: StreamOptions) -> tuple[Encoder, WireFormat]:
    return TrayEncoder(include_reasoning=bool(options.get("include_reasoning"))), SSE_DATA


DIALECT = Dialect(
    name="tray",
    title="chat tray",
    summary="The chat tray protocol, which the built-in web UI speaks",
    reference="protocols/tray.md",
    prefixes=("/api/chat/stream", "/api/chat/runs"),
    routes=router,
    stream=_stream,
)
"""The chat tray protocol: a client that hangs up stops its run, unless the request asks
for ``detach`` (the web UI does, so a reload resumes the answer instead of losing it)."""
