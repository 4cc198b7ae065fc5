"""The ops agent protocol: ``POST /agent/stream``, ``data: {json}`` frames by ``type``.

``start {user_id, conversation_id, conversation_title, tools_enabled, tool_names}``, ``token
{content}``, ``tool_start {tool_call_id, tool_name, args, ts, display?}``, ``tool_end {...,
status: "success", duration_ms, result, ts, display?}``, ``tool_error {..., status: "error",
error {message, kind}}``, ``conversation {conversation}`` (when a store recorded the run),
``warning {code, message}`` (``code: "max_tokens"`` or ``"refusal"`` just before ``done`` when
the answer was cut off at the model's output limit or by its content filter),
``approval_required {tool_call_id, tool_name, args, display?}`` per call the run stopped at
for a person's approval (additive: the next request answers with
``approvals: [{tool_call_id, approved, reason?}]`` and may leave ``message`` empty), ``error
{message}`` and ``done`` last, whatever happened.
Authenticated by the session cookie (or a bearer token).

Reference: ``docs/protocols/ops.md``.
"""

# No ``from __future__ import annotations``: FastAPI reads the route annotations at runtime.

import json
import uuid
from collections.abc import Sequence
from typing import Annotated, Any, assert_never

from fastapi import APIRouter, Depends, Response
from pydantic import Field

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
from agentstream.principal import Principal
from agentstream.runs import ProtocolOptions, RunRequest
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
    cut_off_notice,
    dumps,
    iso_ms,
    quote,
    stream_run,
)
from agentstream.server.dialects.branching import BranchingRequest, branched
from agentstream.server.dialects.declaration import Dialect, StreamOptions
from agentstream.server.direct import DirectRoute
from agentstream.server.sse import SSE_DATA, Encoder, WireFormat
from agentstream.server.state import ServerContext

__all__ = [
    "PROTOCOL",
    "DIALECT",
    "PATH",
    "OpsApproval",
    "OpsEncoder",
    "OpsStreamRequest",
    "router",
    "to_run_request",
]

PATH = "/agent/stream"
PROTOCOL = ProtocolOptions(suggestions=False, conversation_snapshot=True)
_DONE: Frame = ("done", '{"type":"done"}')


class OpsApproval(Approval):
    """``{tool_call_id, approved, reason?}``: the answer to an ``approval_required`` event."""

    tool_call_id: CallId

    def call(self) -> str:
        return self.tool_call_id


class OpsStreamRequest(BranchingRequest, DoubleTextingRequest):
    """The ops agent's request body (``approvals`` and the branch fields are additive)."""

    context: str | None = None
    conversation_id: uuid.UUID | None = None
    approvals: list[OpsApproval] = Field(default_factory=list, max_length=MAX_APPROVALS)


def to_run_request(body: OpsStreamRequest, principal: Principal) -> RunRequest:
    given = answers(body.approvals)
    return RunRequest(
        message=body.new_message(given),
        attachments=tuple(body.attachments),
        answers=given,
        principal=principal,
        double_texting=body.double_texting,
        context=body.context,
        conversation_id=None if body.conversation_id is None else str(body.conversation_id),
        protocol=PROTOCOL,
    )


class OpsEncoder:
    def encode(self, event: RunEvent) -> Sequence[Frame]:
        match event:
            case TextDelta(text=text):
                return (("token", '{"type":"token","content":' + quote(text) + "}"),)
            case RunStarted():
                start = {
                    "type": "start",
                    "user_id": event.user_id,
                    "conversation_id": event.conversation_id,
                    "conversation_title": event.conversation_title,
                    "tools_enabled": bool(event.tool_names),
                    "tool_names": list(event.tool_names),
                }
                return (("start", dumps(start)),)
            case ToolCallArgs():
                data: dict[str, Any] = {
                    "type": "tool_start",
                    "tool_call_id": event.call_id,
                    "tool_name": event.name,
                    "args": event.arguments,
                    "ts": iso_ms(event.started_at),
                }
                if event.display:
                    data["display"] = event.display
                return (("tool_start", dumps(data)),)
            case ToolCallFinished():
                return (self._tool_finished(event),)
            case RunWarning(code=code, message=message):
                return (("warning", dumps({"type": "warning", "code": code, "message": message})),)
            case RunResumed():  # no parts to restart: the notice, as text
                return self.encode(event.as_text())
            case ConversationSaved(conversation=conversation):
                update = {
                    "type": "conversation",
                    "conversation": conversation.to_agent_conversation(),
                }
                return (("conversation", dumps(update)),)
            case RunCompleted(stop_reason=stop):
                if event.cut_off:  # never a cut answer that looks whole
                    warning = {"type": "warning", "code": stop, "message": cut_off_notice(stop)}
                    return (*_approvals(event), ("warning", dumps(warning)), _DONE)
                return (*_approvals(event), _DONE)
            case RunFailed(message=message):
                return self.fail(message)
            case RunCancelled():
                return (_DONE,)
            case (
                AnswerShaped()
                | TurnFinished()
                | PartStarted()
                | PartEnded()
                | TurnStarted()
                | ReasoningDelta()
                | ToolCallStarted()
                | ToolCallDelta()
                | ToolProgress()
                | PayloadEvent()
                | UsageEvent()
                | ContextSummarized()
                | StateSnapshot()
                | StateDelta()
            ):
                return ()
            case _:
                assert_never(event)

    def fail(self, message: str) -> Sequence[Frame]:
        return (("error", dumps({"type": "error", "message": message})), _DONE)

    def _tool_finished(self, event: ToolCallFinished) -> Frame:
        data: dict[str, Any] = {
            "type": "tool_error" if event.is_error else "tool_end",
            "tool_call_id": event.call_id,
            "tool_name": event.name,
            "status": "error" if event.is_error else "success",
            "duration_ms": round(event.duration_ms),
        }
        if event.is_error:
            error = event.error
            data["error"] = {
                "message": error.message if error else event.result,
                "kind": (error.exception_type or error.kind) if error else "error",
            }
        else:
            data["result"] = _result(event.output if event.output is not None else event.result)
        data["ts"] = iso_ms(event.finished_at)
        if event.display:
            data["display"] = event.display
        return (data["type"], dumps(data))


def _approvals(event: RunCompleted) -> list[Frame]:
    """An ``approval_required`` frame per call waiting for a person."""
    frames: list[Frame] = []
    for call in waiting_for_approval(event):
        data: dict[str, Any] = {
            "type": "approval_required",
            "tool_call_id": call.call_id,
            "tool_name": call.name,
            "args": call.arguments,
        }
        if call.display:
            data["display"] = call.display
        frames.append(("approval_required", dumps(data)))
    return frames


def router(server: ServerContext) -> APIRouter:
    api = APIRouter(tags=[DIALECT.title], route_class=DirectRoute)
    CurrentPrincipal = Annotated[Principal, Depends(server.principal(allow_cookie=True))]

    @api.post(
        PATH,
        summary="Ops agent stream: data-only SSE events",
        response_class=Response,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def agent_stream(body: OpsStreamRequest, principal: CurrentPrincipal) -> Response:
        run_request = to_run_request(body, principal)
        run_request = await branched(body, server.runner.store, run_request)
        return await stream_run(server, run_request, DIALECT, answers_field="approvals")

    return api


def _result(value: Any) -> Any:
    """A tool's result as the client should get it: a tool that returned JSON text (an API
    response passed through) gives an object, not a JSON string inside a string."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if isinstance(parsed, dict | list):
            return parsed
    return value


def _stream(options: StreamOptions) -> tuple[Encoder, WireFormat]:
    return OpsEncoder(), SSE_DATA


DIALECT = Dialect(
    name="agent",  # as stored with its runs since before the module was named for the product
    title="ops agent",
    summary="The ops agent protocol",
    reference="protocols/ops.md",
    prefixes=("/agent",),
    routes=router,
    stream=_stream,
)
"""The ops agent protocol; a client that hangs up stops its run."""
