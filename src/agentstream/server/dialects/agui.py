"""``agui``, the AG-UI protocol (CopilotKit's): ``POST /ag-ui``, typed ``data: {json}`` frames.

An AG-UI client (``HttpAgent`` of ``@ag-ui/client``) posts a ``RunAgentInput`` and reads the
run as SSE ``data:`` frames whose JSON is the protocol's events, built with the models of the
official ``ag-ui-protocol`` package (``ag_ui.core``) and framed as its ``EventEncoder`` frames
them; each frame group also carries ``id: <seq>`` so the run can be followed again with
``GET /api/runs/{id}/stream`` (the TypeScript client ignores ``id:`` lines).

The request:

* ``threadId`` names the conversation: owner-scoped (two callers' thread ``1`` are two
  conversations), created on first use. The server's stored history is what the model sees;
  from ``messages`` what follows the last assistant message is read: the new user message,
  and ``tool`` messages that answer the frontend tool calls the previous run left open. The
  user messages before it are compared with the stored conversation's active path: where
  they differ, or stop short of it (a client that edited a message or asks for another
  answer), the run starts a branch there (see ``docs/guides/branches.md``).
* ``tools`` are frontend tools: offered to the model; a call to one ends the run (its
  ``RUN_FINISHED`` names it in ``outcome.pendingToolCallIds``) and the client's next run
  brings the result as a ``tool`` message.
* ``resume`` answers approvals: a server tool that needs approval ends the run with
  ``outcome: {type: "interrupt", interrupts: [{id: <tool call id>, reason: "tool_approval",
  toolCallId, ...}]}``; the next run carries ``{interruptId, status: "resolved", payload:
  {approved: true|false, reason?}}`` (``payload`` may be a bare boolean; ``cancelled`` denies).
* ``context`` reaches tools as ``ToolContext.context`` (a list of ``{description, value}``);
  ``state`` is the thread's shared state (a JSON object; ``{}`` leaves the stored one be):
  it replaces the state stored with the conversation, the run starts from it and tools read
  and change it (``ToolContext.state``, see ``docs/guides/shared-state.md``);
  ``forwardedProps.onDisconnect`` may be ``"cancel"`` (stop the run when the client aborts)
  or ``"detach"`` (the default: the run goes on to completion and to the store);
  ``forwardedProps.doubleTexting`` (``"reject"``, ``"queue"`` or ``"interrupt"``) says what the
  run does if the thread is still answering an earlier one (default: the server's).

Events: RUN_STARTED; STATE_SNAPSHOT (the state the run starts from, when the thread has
one) and STATE_DELTA (a JSON Patch, when a tool changed it); STEP_STARTED / STEP_FINISHED
around each model turn (``turn-N``); TEXT_MESSAGE_START / CONTENT / END per text part;
REASONING_START, REASONING_MESSAGE_START / CONTENT / END, REASONING_END per reasoning part;
TOOL_CALL_START / ARGS / END as the model writes a call, TOOL_CALL_RESULT when a server tool
returns; CUSTOM ``payload``, ``tool_progress`` and ``warning``; RUN_FINISHED (``success``,
``interrupt`` or ``cancelled``; its ``result`` is ``{message, stopReason?}``, ``stopReason``
being ``max_tokens`` or ``refusal`` when the answer was cut off) or RUN_ERROR last.

Reference: ``docs/protocols/ag-ui.md``.
"""

# No ``from __future__ import annotations``: FastAPI reads the route annotations at runtime.

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Annotated, Any, assert_never

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    DataSource,
    DocumentPart,
    ImagePart,
    Interrupt,
    ReasoningEndEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TextPart,
    TokenUsage,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    UrlSource,
)
from fastapi import APIRouter, Depends, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from agentstream.events import (
    AnswerShaped,
    ContextSummarized,
    ConversationSaved,
    PartEnded,
    PartStarted,
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
from agentstream.pending import Answers, ApprovalDecision, ClientTool, ClientToolResult
from agentstream.principal import Principal
from agentstream.runs import ProtocolOptions, RunRequest
from agentstream.runs.request import DOUBLE_TEXTING_POLICIES, DoubleTexting
from agentstream.server.dialects.base import (
    Frame,
    client_conversation_id,
    page_state,
    quote,
    stream_run,
)
from agentstream.server.dialects.branching import active_path, diverging
from agentstream.server.dialects.declaration import Dialect, StreamOptions
from agentstream.server.dialects.files import SentFile, attachment_ids, from_base64, from_url
from agentstream.server.direct import DirectRoute
from agentstream.server.errors import bad_request
from agentstream.server.limits import check_body
from agentstream.server.settings import DisconnectPolicy
from agentstream.server.sse import SSE_DATA, Encoder, WireFormat
from agentstream.server.state import ServerContext

__all__ = ["APPROVAL_SCHEMA", "DIALECT", "PATH", "AgUiEncoder", "router", "to_run_request"]

PATH = "/ag-ui"

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean"},
        "reason": {"type": "string", "description": "Why, when declined: the model reads it."},
    },
    "required": ["approved"],
}
"""The answer an approval interrupt expects (``Interrupt.responseSchema``)."""

_DISCONNECT_POLICIES: tuple[DisconnectPolicy, ...] = ("cancel", "detach")


def _frame(event: BaseEvent) -> Frame:
    """An event as the package's ``EventEncoder`` writes its ``data:`` line (camelCase,
    absent fields left out)."""
    return (event.type.value, event.model_dump_json(by_alias=True, exclude_none=True))


def _content_frame(kind: str, key: str, ident: str) -> tuple[str, str]:
    """The fixed start of a per-delta frame (``...,"delta":`` follows), built once per part:
    the per-delta path is one string join."""
    return kind, f'{{"type":"{kind}","{key}":{quote(ident)},"delta":'


class AgUiEncoder:
    """Canonical events to AG-UI events. Tracks what is open (the step, tool calls) so that
    every start has its end before ``RUN_FINISHED``, as the client's event verification
    requires, however the run ended."""

    __slots__ = ("_calls", "_delta", "_message", "_model", "_options", "_part", "_step")

    def __init__(self, options: StreamOptions) -> None:
        self._options = options
        self._step: str | None = None
        self._part: str | None = None  # the id of the text or reasoning part in progress
        self._message: str | None = None  # the turn's latest text message (tool call parent)
        self._delta: tuple[str, str] = ("", "")
        self._calls: dict[str, bool] = {}  # call id -> started in this stream and still open
        self._model: str | None = None  # "provider:model", for RUN_FINISHED's usage

    def encode(self, event: RunEvent) -> Sequence[Frame]:
        if isinstance(event, TextDelta | ReasoningDelta):  # the per-delta path
            kind, head = self._delta
            return ((kind, head + quote(event.text) + "}"),)
        match event:
            case ToolCallDelta(call_id=call_id, delta=delta):
                data = '{"type":"TOOL_CALL_ARGS","toolCallId":' + quote(call_id)
                return (("TOOL_CALL_ARGS", data + ',"delta":' + quote(delta) + "}"),)
            case RunStarted(model=model):
                self._model = model
                return (_frame(RunStartedEvent(thread_id=self._thread, run_id=self._run)),)
            case StateSnapshot(state=state):
                return (_frame(StateSnapshotEvent(snapshot=state)),)
            case StateDelta(patch=patch):
                return (_frame(StateDeltaEvent(delta=list(patch))),)
            case TurnStarted(turn=turn):
                self._step, self._message = f"turn-{turn}", None
                return (_frame(StepStartedEvent(step_name=self._step)),)
            case TurnFinished():
                return self._end_step()
            case PartStarted(part=part, kind=kind):
                ident = self._part = f"{event.run_id}-{part}"
                if kind == "text":
                    self._message = ident
                    self._delta = _content_frame("TEXT_MESSAGE_CONTENT", "messageId", ident)
                    return (_frame(TextMessageStartEvent(message_id=ident, role="assistant")),)
                self._delta = _content_frame("REASONING_MESSAGE_CONTENT", "messageId", ident)
                return (
                    _frame(ReasoningStartEvent(message_id=ident)),
                    _frame(ReasoningMessageStartEvent(message_id=ident, role="reasoning")),
                )
            case PartEnded(kind=kind):
                ident, self._part = self._part or "", None
                if kind == "text":
                    return (_frame(TextMessageEndEvent(message_id=ident)),)
                return (
                    _frame(ReasoningMessageEndEvent(message_id=ident)),
                    _frame(ReasoningEndEvent(message_id=ident)),
                )
            case ToolCallStarted(call_id=call_id, name=name):
                self._calls[call_id] = True
                start = ToolCallStartEvent(
                    tool_call_id=call_id, tool_call_name=name, parent_message_id=self._message
                )
                return (_frame(start),)
            case ToolCallArgs(call_id=call_id):
                # A call approved in an earlier run was started there: nothing to end here.
                return self._end_call(call_id)
            case ToolCallFinished():
                result = ToolCallResultEvent(
                    message_id=_result_id(event.call_id),
                    tool_call_id=event.call_id,
                    content=event.result,
                    role="tool",
                )
                return (*self._end_call(event.call_id), _frame(result))
            case ToolProgress():
                value = {
                    "toolCallId": event.call_id,
                    "toolName": event.name,
                    "stage": event.stage,
                    "message": event.message,
                    "fraction": event.fraction,
                    "data": event.data,
                }
                return (_frame(CustomEvent(name="tool_progress", value=value)),)
            case PayloadEvent(payload=payload, call_id=call_id):
                value = {
                    "kind": payload.kind,
                    "data": payload.data,
                    "summary": payload.summary,
                    "payloadId": payload.payload_id,
                    "toolCallId": call_id,
                }
                return (_frame(CustomEvent(name="payload", value=value)),)
            case RunResumed(notice=notice):
                # The interrupted message has ended; the continuation is a new message.
                return (_frame(CustomEvent(name="run_resumed", value={"message": notice})),)
            case RunWarning(code=code, message=message):
                warning = CustomEvent(name="warning", value={"code": code, "message": message})
                return (_frame(warning),)
            case ContextSummarized(exchanges=exchanges):
                summarized = CustomEvent(name="context_summarized", value={"exchanges": exchanges})
                return (_frame(summarized),)
            case RunCompleted():
                return (*self._close(), _frame(self._finished(event)))
            case RunCancelled():
                cancelled = RunFinishedEvent(
                    thread_id=self._thread,
                    run_id=self._run,
                    outcome=RunFinishedCancelledOutcome(),
                )
                return (*self._close(), _frame(cancelled))
            case RunFailed(message=message, kind=kind):
                return (*self._close(), _frame(RunErrorEvent(message=message, code=kind)))
            case UsageEvent() | AnswerShaped() | ConversationSaved():
                return ()
            case _:
                assert_never(event)

    def fail(self, message: str) -> Sequence[Frame]:
        return (*self._close(), _frame(RunErrorEvent(message=message, code="internal")))

    @property
    def _thread(self) -> str:
        return str(self._options["thread_id"])

    @property
    def _run(self) -> str:
        return str(self._options["run_id"])

    def _end_step(self) -> Sequence[Frame]:
        step, self._step = self._step, None
        return () if step is None else (_frame(StepFinishedEvent(step_name=step)),)

    def _end_call(self, call_id: str) -> Sequence[Frame]:
        if self._calls.get(call_id):
            self._calls[call_id] = False
            return (_frame(ToolCallEndEvent(tool_call_id=call_id)),)
        return ()

    def _close(self) -> Sequence[Frame]:
        """End what is still open (a call cut off by the turn limit or a stop, the step)."""
        open_calls = [call_id for call_id, is_open in self._calls.items() if is_open]
        ends = [frame for call_id in open_calls for frame in self._end_call(call_id)]
        return (*ends, *self._end_step())

    def _finished(self, event: RunCompleted) -> RunFinishedEvent:
        approvals = [p for p in event.pending_calls if p.waiting_for == "approval"]
        outcome: RunFinishedSuccessOutcome | RunFinishedInterruptOutcome
        if approvals:
            interrupts = [
                Interrupt(
                    id=p.call_id,
                    reason="tool_approval",
                    message=f"Allow {p.name} to run with {json.dumps(p.arguments)}?",
                    tool_call_id=p.call_id,
                    response_schema=APPROVAL_SCHEMA,
                )
                for p in approvals
            ]
            outcome = RunFinishedInterruptOutcome(interrupts=interrupts)
        else:
            waiting = [p.call_id for p in event.pending_calls] or None
            outcome = RunFinishedSuccessOutcome(pending_tool_call_ids=waiting)
        result: dict[str, Any] = {"message": event.message} if event.message else {}
        if event.cut_off:
            result["stopReason"] = event.stop_reason
        return RunFinishedEvent(
            thread_id=self._thread,
            run_id=self._run,
            result=result or None,
            outcome=outcome,
            usage=self._usage(event),
        )

    def _usage(self, event: RunCompleted) -> list[TokenUsage] | None:
        """The run's token counts, one entry for its model (absent when none were reported)."""
        usage = event.usage
        if not usage.total_tokens:
            return None
        provider, _, model = (self._model or "").partition(":")
        return [
            TokenUsage(
                provider=provider or None,
                model=model or None,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                total_tokens=usage.total_tokens,
                reasoning_tokens=usage.reasoning_tokens or None,
                cached_input_tokens=usage.cache_read_tokens or None,
                cache_write_input_tokens=usage.cache_write_tokens or None,
            )
        ]


def _result_id(call_id: str) -> str:
    """The message id of the tool message a ``TOOL_CALL_RESULT`` creates in the client."""
    return f"{call_id}-result"


def parse_input(data: Any) -> RunAgentInput:
    """The request body as the package's ``RunAgentInput``; a 400 naming the field if not."""
    check_body(data)
    try:
        return RunAgentInput.model_validate(data)
    except ValidationError as exc:
        raise RequestValidationError(
            [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False)]
        ) from None


PROTOCOL = ProtocolOptions(suggestions=False)
"""AG-UI clients show text, tools and custom events: the model is not asked for suggestion
lines they would never see."""


def to_run_request(body: RunAgentInput, principal: Principal) -> tuple[RunRequest, list[SentFile]]:
    """What the run needs from the input: the new user message (and the files it carries,
    to keep before the run), the answers to open tool calls, the frontend tools and the
    context."""
    message, files, results = _new_messages(body)
    decisions = tuple(_decision(i, entry) for i, entry in enumerate(body.resume or ()))
    answers = Answers(results=results, decisions=decisions)
    if not message and not files and not answers:
        raise bad_request(
            "messages",
            "nothing to answer: expected a user message after the last assistant "
            "message, tool results for its frontend calls, or resume entries",
        )
    tools = tuple(
        ClientTool(
            name=t.name,
            description=t.description,
            parameters=t.parameters or {"type": "object", "properties": {}},
        )
        for t in body.tools or ()
    )
    context = [{"description": c.description, "value": c.value} for c in body.context or ()]
    request = RunRequest(
        message=message,
        principal=principal,
        double_texting=_double_texting(body),
        conversation_id=client_conversation_id(principal, body.thread_id, "threadId"),
        create_conversation=True,
        metadata={"client_conversation_id": body.thread_id},
        answers=answers or None,
        client_tools=tools,
        context=context or None,
        # HttpAgent sends {} when the app keeps no state: that leaves the stored one be.
        state=page_state(body.state, "state") if body.state != {} else None,
        protocol=PROTOCOL,
    )
    return request, files


def _new_messages(
    body: RunAgentInput,
) -> tuple[str, list[SentFile], tuple[ClientToolResult, ...]]:
    """The user's text and files, and the tool results, that follow the last assistant
    message."""
    text: list[str] = []
    files: list[SentFile] = []
    results: list[ClientToolResult] = []
    start = len(body.messages)
    while start and body.messages[start - 1].role != "assistant":
        start -= 1
    for position in range(start, len(body.messages)):
        found = body.messages[position]
        if found.role == "user":  # several in a row (sent while a run streamed) are one turn
            said, sent = _user_content(found.content, f"messages.{position}.content")
            text.append(said)
            files.extend(sent)
        elif found.role == "tool" and found.id != _result_id(found.tool_call_id):
            # (a tool message the server streamed itself is a result it already has)
            content = _text(found.content, f"messages.{position}.content")
            error = getattr(found, "error", None)
            results.append(
                ClientToolResult(
                    call_id=found.tool_call_id,
                    content=content if content or not error else json.dumps({"error": error}),
                    is_error=bool(error),
                )
            )
    return "\n\n".join(t for t in text if t), files, tuple(results)


def questions(body: RunAgentInput) -> list[str]:
    """The user's turns before the new one (consecutive user messages are one turn, as the
    server stored them), as text."""
    turns: list[list[str]] = []
    start = len(body.messages)
    while start and body.messages[start - 1].role != "assistant":
        start -= 1
    previous = None
    for position, found in enumerate(body.messages[:start]):
        if found.role == "user":
            said, _ = _user_content(found.content, f"messages.{position}.content")
            if previous != "user":
                turns.append([])
            turns[-1].append(said)
        previous = found.role if found.role in ("user", "assistant") else previous
    return ["\n\n".join(t for t in turn if t) for turn in turns]


def _user_content(content: Any, field: str) -> tuple[str, list[SentFile]]:
    """A user message's text, and the files of its image and document parts."""
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    files: list[SentFile] = []
    for position, part in enumerate(content or ()):
        match part:
            case TextPart(text=said):
                texts.append(said)
            case ImagePart() | DocumentPart():
                files.append(_sent(part, f"{field}.{position}"))
            case _:
                raise bad_request(field, "only text, image and document content is supported")
    return "".join(texts), files


def _sent(part: ImagePart | DocumentPart, field: str) -> SentFile:
    """A media part's file: its base64 data, or the URL of an upload of the caller's."""
    metadata = part.metadata if isinstance(part.metadata, dict) else {}
    given = metadata.get("filename") or metadata.get("name")
    name = given if isinstance(given, str) and given else part.type
    match part.source:
        case DataSource(value=value, mime_type=declared):
            return from_base64(value, field=f"{field}.source.value", name=name, declared=declared)
        case UrlSource(value=url, mime_type=declared):
            return from_url(url, field=f"{field}.source.value", name=name, declared=declared)
        case _:
            raise bad_request(
                f"{field}.source", "a file handle of a model vendor cannot be read here"
            )


def _text(content: Any, field: str) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content or ():
        if getattr(part, "type", None) != "text":
            raise bad_request(field, "only text content is supported")
        parts.append(part.text)
    return "".join(parts)


def _decision(position: int, entry: Any) -> ApprovalDecision:
    field = f"resume.{position}.payload"
    if entry.status == "cancelled":
        return ApprovalDecision(call_id=entry.interrupt_id, approved=False)
    payload = entry.payload
    if isinstance(payload, bool):
        return ApprovalDecision(call_id=entry.interrupt_id, approved=payload)
    if isinstance(payload, dict) and isinstance(payload.get("approved"), bool):
        reason = payload.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise bad_request(field, "reason must be a string")
        return ApprovalDecision(
            call_id=entry.interrupt_id, approved=payload["approved"], reason=reason
        )
    raise bad_request(field, 'expected true, false or {"approved": true|false, "reason"?: "..."}')


def _double_texting(body: RunAgentInput) -> DoubleTexting | None:
    props = body.forwarded_props
    chosen = props.get("doubleTexting") if isinstance(props, dict) else None
    if chosen is None:
        return None
    if chosen not in DOUBLE_TEXTING_POLICIES:
        raise bad_request(
            "forwardedProps.doubleTexting", 'expected "reject", "queue" or "interrupt"'
        )
    return chosen  # type: ignore[no-any-return]


def _on_disconnect(body: RunAgentInput) -> DisconnectPolicy | None:
    props = body.forwarded_props
    chosen = props.get("onDisconnect") if isinstance(props, dict) else None
    if chosen is None:
        return None
    if chosen not in _DISCONNECT_POLICIES:
        raise bad_request("forwardedProps.onDisconnect", 'expected "cancel" or "detach"')
    return chosen  # type: ignore[no-any-return]


def router(server: ServerContext) -> APIRouter:
    api = APIRouter(tags=[DIALECT.title], route_class=DirectRoute)
    CurrentPrincipal = Annotated[Principal, Depends(server.principal(allow_cookie=True))]

    @api.post(
        PATH,
        summary="AG-UI: RunAgentInput in, AG-UI events as data-only SSE out",
        response_class=Response,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def ag_ui(request: Request, principal: CurrentPrincipal) -> Response:
        try:
            data = await request.json()
        except ValueError:
            raise bad_request("body", "expected a JSON RunAgentInput") from None
        body = parse_input(data)
        options: dict[str, Any] = {"thread_id": body.thread_id, "run_id": body.run_id}
        run_request, files = to_run_request(body, principal)
        if run_request.message:
            shown = await active_path(server.runner.store, principal, run_request.conversation_id)
            branch = diverging(shown, questions(body), run_request.message)
            run_request = replace(run_request, branch=branch)
            if branch is not None and branch.again:
                files = []  # the question is answered as stored, files included
        if files:
            ids = await attachment_ids(server.intake, principal, files)
            run_request = replace(run_request, attachments=ids)
        return await stream_run(
            server,
            run_request,
            DIALECT,
            options,
            conversation_field="threadId",
            answers_field="resume" if body.resume else "messages",
            on_disconnect=_on_disconnect(body),
        )

    return api


def _stream(options: StreamOptions) -> tuple[Encoder, WireFormat]:
    return AgUiEncoder(options), SSE_DATA


DIALECT = Dialect(
    name="agui",
    title="AG-UI",
    summary="The AG-UI protocol (CopilotKit's HttpAgent)",
    reference="protocols/ag-ui.md",
    prefixes=("/ag-ui",),
    routes=router,
    stream=_stream,
    on_disconnect="detach",
)
"""AG-UI; a client that hangs up leaves its run going to completion (``HttpAgent`` has no
reconnect, and the run's answer is in the thread's history for its next run), unless the
input's ``forwardedProps.onDisconnect`` is ``"cancel"``."""
