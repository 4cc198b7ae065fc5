"""The workflow assistant protocol: ``POST /v1/agent/chat``, named SSE events.

``message_start {turn}`` per model turn, ``content_chunk {chunk}``, ``tool_call_start`` and
``tool_call_result`` with the call's id and name only (tool inputs and results never reach
the client), ``workflow_preview`` from a ``workflow_preview`` payload, ``approval_required
{tool_use_id, name}`` per call the run stopped at for a person's approval (additive; like the
other tool events it carries no input), ``error {message}`` and ``message_complete {}``
(``{stop_reason}``, ``max_tokens`` or ``refusal``, when the answer was cut off at the model's
output limit or by its content filter). The next request answers with ``approvals:
[{tool_use_id, approved, reason?}]`` and may leave ``message`` empty. A cancelled run (the
client left) just ends the stream.
``context_type`` selects the tool scope and prompt (through the run hooks), ``context`` is
injected into the system prompt, and the caller's bearer token reaches tools verbatim.
Bearer auth only: no cookie, since CORS callers on other origins post here.

Reference: ``docs/protocols/workflow.md``.
"""

# No ``from __future__ import annotations``: FastAPI reads the route annotations at runtime.

from collections.abc import Sequence
from typing import Annotated, Any, Literal, assert_never

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
from agentstream.messages import PendingToolCall
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
    client_conversation_id,
    dumps,
    quote,
    stream_run,
)
from agentstream.server.dialects.branching import BranchingRequest, branched
from agentstream.server.dialects.declaration import Dialect, StreamOptions
from agentstream.server.direct import DirectRoute
from agentstream.server.sse import SSE_NAMED, Encoder, WireFormat
from agentstream.server.state import ServerContext

__all__ = [
    "PROTOCOL",
    "DIALECT",
    "PATH",
    "WorkflowApproval",
    "WorkflowChatRequest",
    "WorkflowEncoder",
    "router",
    "to_run_request",
]

PATH = "/v1/agent/chat"
PROTOCOL = ProtocolOptions(max_turns=20, suggestions=False, response_language="English")
PREVIEW_KINDS = frozenset({"workflow_preview"})


class WorkflowApproval(Approval):
    """``{tool_use_id, approved, reason?}``: the answer to an ``approval_required`` event."""

    tool_use_id: CallId

    def call(self) -> str:
        return self.tool_use_id


class WorkflowChatRequest(BranchingRequest, DoubleTextingRequest):
    """The workflow assistant's request body (``approvals`` and the branch fields are
    additive)."""

    context_type: Literal["workflow", "tables"]
    context: dict[str, Any] | None = None
    conversation_id: str | None = None
    approvals: list[WorkflowApproval] = Field(default_factory=list, max_length=MAX_APPROVALS)


def to_run_request(body: WorkflowChatRequest, principal: Principal) -> RunRequest:
    # conversation_id is the client's tracking id: its conversation is created on
    # first use and continued after, under an id scoped to the caller.
    client_id = body.conversation_id
    given = answers(body.approvals)
    return RunRequest(
        message=body.new_message(given),
        attachments=tuple(body.attachments),
        answers=given,
        principal=principal,
        double_texting=body.double_texting,
        context=body.context,
        context_type=body.context_type,
        conversation_id=(
            None
            if client_id is None
            else client_conversation_id(principal, client_id, "conversation_id")
        ),
        create_conversation=client_id is not None,
        metadata={} if client_id is None else {"client_conversation_id": client_id},
        protocol=PROTOCOL,
    )


_EMPTY: tuple[Frame, ...] = ()
_COMPLETE: tuple[Frame, ...] = (("message_complete", "{}"),)


class WorkflowEncoder:
    def encode(self, event: RunEvent) -> Sequence[Frame]:
        match event:
            case TextDelta(text=text):
                return (("content_chunk", '{"chunk":' + quote(text) + "}"),)
            case RunResumed():  # no parts to restart: the notice, as text
                return self.encode(event.as_text())
            case TurnStarted(turn=turn):
                return (("message_start", f'{{"turn":{turn}}}'),)
            case ToolCallStarted(call_id=call_id, name=name):
                return (("tool_call_start", dumps({"tool_use_id": call_id, "name": name})),)
            case ToolCallFinished(call_id=call_id, name=name, is_error=is_error):
                data = {"tool_use_id": call_id, "name": name, "is_error": is_error}
                return (("tool_call_result", dumps(data)),)
            case PayloadEvent(payload=payload) if payload.kind in PREVIEW_KINDS:
                return ((payload.kind, dumps(payload.data)),)
            case RunCompleted():
                complete = _COMPLETE
                if event.cut_off:  # additive: only an answer cut off says why it stopped
                    complete = (("message_complete", dumps({"stop_reason": event.stop_reason})),)
                waiting = waiting_for_approval(event)
                return (*(_approval_required(call) for call in waiting), *complete)
            case RunFailed(message=message):
                return self.fail(message)
            case (
                AnswerShaped()
                | ConversationSaved()
                | TurnFinished()
                | PartStarted()
                | PartEnded()
                | RunStarted()
                | ReasoningDelta()
                | ToolCallDelta()
                | ToolCallArgs()
                | ToolProgress()
                | PayloadEvent()
                | UsageEvent()
                | RunWarning()
                | ContextSummarized()
                | RunCancelled()
                | StateSnapshot()
                | StateDelta()
            ):
                return _EMPTY
            case _:
                assert_never(event)

    def fail(self, message: str) -> Sequence[Frame]:
        return (("error", dumps({"message": message})),)


def _approval_required(call: PendingToolCall) -> Frame:
    return ("approval_required", dumps({"tool_use_id": call.call_id, "name": call.name}))


def router(server: ServerContext) -> APIRouter:
    api = APIRouter(tags=[DIALECT.title], route_class=DirectRoute)
    CurrentPrincipal = Annotated[Principal, Depends(server.principal(allow_cookie=False))]

    @api.post(
        PATH,
        summary="Workflow assistant chat: named SSE events",
        response_class=Response,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def agent_chat(body: WorkflowChatRequest, principal: CurrentPrincipal) -> Response:
        run_request = to_run_request(body, principal)
        run_request = await branched(body, server.runner.store, run_request)
        return await stream_run(server, run_request, DIALECT, answers_field="approvals")

    @api.options(PATH, include_in_schema=False)
    async def agent_chat_options() -> Response:
        # Preflights with an allowed Origin are answered by the CORS middleware before they
        # get here; this answers plain OPTIONS (and preflights when CORS is not configured).
        return Response(status_code=204, headers={"Allow": "POST, OPTIONS"})

    return api


def _stream(options: StreamOptions) -> tuple[Encoder, WireFormat]:
    return WorkflowEncoder(), SSE_NAMED


DIALECT = Dialect(
    name="ichor",  # as stored with its runs since before the module was named for the product
    title="workflow assistant",
    summary="The workflow assistant protocol",
    reference="protocols/workflow.md",
    prefixes=("/v1",),
    routes=router,
    stream=_stream,
)
"""The workflow assistant protocol; its clients expect a request that hangs up to stop."""
