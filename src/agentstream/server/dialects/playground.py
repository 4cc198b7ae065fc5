"""``playground``, the data playground protocol: ``POST /api/chat/agent-chat/stream`` and
``GET /api/chat/models``.

The client owns the conversation: ``history`` is the context for this run (the store, when
configured, still records the run under ``metadata.conversationId``). A ``history`` whose
questions differ from the stored conversation's active path, or stop short of it (the
client edited a message, or asks for another answer), starts a branch of the stored
conversation there, so what is stored follows what the client shows (see
``docs/guides/branches.md``). ``brandRef`` in the
query and the body must agree; when tenants are configured the token must grant it (403).
``model`` must be one :class:`~agentstream.server.models.ModelCatalog` offers.

Events: ``status {executionId, state}`` first and last (``started``, then ``completed`` or
``failed``), ``message {delta}``, ``thinking {text}``, ``tool_call {toolName, input}`` (input
as a JSON string), ``tool_result {toolName, output}`` (a string; ``isError: true`` is added
when the tool failed), ``metadata {tokensUsed, promptTokens, completionTokens, model}`` before
``final {type: "text", content: {message}, tokenBreakdown}`` (with ``stopReason: "max_tokens"``
or ``"refusal"`` when the answer was cut off at the model's output limit or by its content
filter), and ``error {message}``.

Choices the data playground protocol leaves open:

* Markdown is requested with ``"format": "markdown"`` in the body (or ``metadata.format``):
  deltas become ``{delta: {format: "markdown", text}}`` and ``final`` gains ``format``.
* ``Accept: application/x-ndjson`` selects ``<eventName>{json}`` lines; anything else SSE.
* ``stream: false`` answers one JSON document: ``{executionId, state, type, format?,
  content: {message}, tokenBreakdown, thinking, toolCalls: [{toolName, input, output,
  isError}], error?}`` with status 200 (``state: "failed"`` and ``error`` when the run failed).
* ``reasoningMode``: ``off``/``none`` disables reasoning, ``on`` enables it, ``low``/
  ``medium``/``high`` set an effort; ``default`` leaves the model's own setting.
* ``ragEnabled`` (default true) reaches tools as ``ToolContext.options["rag_enabled"]``, the
  brand as ``options["brand_ref"]`` (and ``options["structure"]`` when given), so a tool reads
  only that tenant's data.

Reference: ``docs/protocols/playground.md``.
"""

# No ``from __future__ import annotations``: FastAPI reads the route annotations at runtime.

from collections.abc import Sequence
from dataclasses import replace
from typing import Annotated, Any, Literal, assert_never

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import JSONResponse
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
    Usage,
    UsageEvent,
)
from agentstream.messages import AssistantMessage, Message, UserMessage
from agentstream.principal import Principal
from agentstream.runs import ProtocolOptions, RunRequest
from agentstream.server.auth import for_tenant
from agentstream.server.dialects.base import (
    AttachingRequest,
    DoubleTextingRequest,
    Frame,
    NonEmptyText,
    RequestModel,
    as_text,
    begin_run,
    choose_model,
    client_conversation_id,
    disconnect_policy,
    dumps,
    fold_run,
    quote,
    stream_run,
)
from agentstream.server.dialects.branching import active_path, diverging
from agentstream.server.dialects.declaration import Dialect, StreamOptions
from agentstream.server.direct import DirectRoute
from agentstream.server.errors import bad_request
from agentstream.server.models import OfferedModel
from agentstream.server.sse import NDJSON, SSE_NAMED, Encoder, WireFormat
from agentstream.server.state import ServerContext

__all__ = [
    "PROTOCOL",
    "MODELS_PATH",
    "PATH",
    "AgentChatRequest",
    "PlaygroundDocument",
    "PlaygroundEncoder",
    "DIALECT",
    "router",
    "to_run_request",
]

PATH = "/api/chat/agent-chat/stream"
MODELS_PATH = "/api/chat/models"
PROTOCOL = ProtocolOptions(suggestions=False)
REASONING_MODES: dict[str, bool | str | None] = {
    "default": None,
    "off": False,
    "none": False,
    "on": True,
    "low": "low",
    "medium": "medium",
    "high": "high",
}


class HistoryMessage(RequestModel):
    role: Literal["user", "assistant"]
    content: str


class AgentChatRequest(AttachingRequest, DoubleTextingRequest):
    """The data playground's request body."""

    brandRef: str = Field(min_length=1)
    structure: str | None = None
    model: str = Field(min_length=1)
    content: NonEmptyText
    history: list[HistoryMessage] = Field(default_factory=list)
    temperature: float | None = Field(default=None, ge=0, le=2)
    ragEnabled: bool = True
    stream: bool = True
    metadata: dict[str, Any] = Field(default_factory=dict)
    reasoningMode: str = "default"
    format: Literal["text", "markdown"] | None = None

    @property
    def markdown(self) -> bool:
        return (self.format or self.metadata.get("format")) == "markdown"


def to_run_request(
    body: AgentChatRequest,
    principal: Principal,
    *,
    model: str | None,
    structure: str | None = None,
) -> RunRequest:
    conversation_id = body.metadata.get("conversationId")
    if conversation_id is not None and not isinstance(conversation_id, str):
        raise bad_request("metadata.conversationId", "expected a string")
    mode = body.reasoningMode.lower()
    if mode not in REASONING_MODES:
        raise bad_request("reasoningMode", f"expected one of {', '.join(REASONING_MODES)}")
    reasoning = REASONING_MODES[mode]
    metadata = {"brandRef": body.brandRef}
    if conversation_id:
        metadata["conversationId"] = conversation_id
    chosen_structure = body.structure or structure
    if chosen_structure:
        metadata["structure"] = chosen_structure
    history: list[Message] = [
        UserMessage(content=m.content) if m.role == "user" else AssistantMessage(text=m.content)
        for m in body.history
    ]
    return RunRequest(
        message=body.content,
        attachments=tuple(body.attachments),
        principal=principal,
        double_texting=body.double_texting,
        conversation_id=(
            client_conversation_id(principal, conversation_id, "metadata.conversationId")
            if conversation_id
            else None
        ),
        create_conversation=bool(conversation_id),
        history=history,
        model=model,
        temperature=body.temperature,
        protocol=PROTOCOL,
        model_options={} if reasoning is None else {"reasoning": reasoning},
        tool_options={
            "rag_enabled": body.ragEnabled,
            "brand_ref": body.brandRef,
            **({"structure": chosen_structure} if chosen_structure else {}),
        },
        metadata=metadata,
    )


class PlaygroundEncoder:
    def __init__(self, *, markdown: bool = False) -> None:
        self.markdown = markdown
        self.execution_id = ""
        self.model: str | None = None
        self.usage = Usage()
        self.shown: str | None = None
        """The answer as shown (marker blocks taken out), when the run's hooks shaped it."""

    def encode(self, event: RunEvent) -> Sequence[Frame]:
        match event:
            case RunResumed():  # no parts to restart: the notice, as text
                return self.encode(event.as_text())
            case TextDelta(text=text):
                if self.markdown:
                    delta = '{"format":"markdown","text":' + quote(text) + "}"
                    return (("message", '{"delta":' + delta + "}"),)
                return (("message", '{"delta":' + quote(text) + "}"),)
            case RunStarted(run_id=run_id, model=model):
                self.execution_id, self.model = run_id, model
                return (self._status("started"),)
            case ReasoningDelta(text=text):
                return (("thinking", dumps({"text": text})),)
            case ToolCallArgs(name=name, arguments=arguments, raw_arguments=raw):
                shown = raw if raw is not None else dumps(arguments)
                return (("tool_call", dumps({"toolName": name, "input": shown})),)
            case ToolCallFinished(name=name, output=output, result=result, is_error=is_error):
                data: dict[str, Any] = {
                    "toolName": name,
                    "output": as_text(output if output is not None else result),
                }
                if is_error:
                    data["isError"] = True
                return (("tool_result", dumps(data)),)
            case UsageEvent(usage=usage):
                self.usage = self.usage + usage
                return ()
            case AnswerShaped(message=shown):
                self.shown = shown
                return ()
            case RunCompleted(message=message, usage=usage):
                message = message if self.shown is None else self.shown
                return (
                    ("metadata", dumps(self._metadata(usage))),
                    ("final", dumps(self._final(message, event))),
                    self._status("completed"),
                )
            case RunFailed(message=message):
                return self.fail(message)
            case RunCancelled():
                return self.fail("The run was cancelled.")
            case (
                ConversationSaved()
                | TurnFinished()
                | PartStarted()
                | PartEnded()
                | TurnStarted()
                | ToolCallStarted()
                | ToolCallDelta()
                | ToolProgress()
                | PayloadEvent()
                | RunWarning()
                | ContextSummarized()
                | StateSnapshot()
                | StateDelta()
            ):
                return ()
            case _:
                assert_never(event)

    def fail(self, message: str) -> Sequence[Frame]:
        return (("error", dumps({"message": message})), self._status("failed"))

    def _status(self, state: str) -> Frame:
        return ("status", dumps({"executionId": self.execution_id, "state": state}))

    def _metadata(self, usage: Usage) -> dict[str, Any]:
        return {
            "tokensUsed": usage.total_tokens,
            "promptTokens": usage.input_tokens,
            "completionTokens": usage.output_tokens,
            "model": self.model,
        }

    def _final(self, message: str, done: RunCompleted) -> dict[str, Any]:
        usage = done.usage
        breakdown = {
            "promptTokens": usage.input_tokens,
            "completionTokens": usage.output_tokens,
            "totalTokens": usage.total_tokens,
        }
        if usage.reasoning_tokens:
            breakdown["reasoningTokens"] = usage.reasoning_tokens
        if usage.cache_read_tokens:
            breakdown["cachedTokens"] = usage.cache_read_tokens
        final: dict[str, Any] = {"type": "text"}
        if self.markdown:
            final["format"] = "markdown"
        final["content"] = {"message": message}
        final["tokenBreakdown"] = breakdown
        if done.cut_off:  # additive: only an answer cut off has it
            final["stopReason"] = done.stop_reason
        return final


class PlaygroundDocument:
    """The one JSON answer of ``stream: false``, folded from the run's canonical events. Tool
    results are paired with their calls by call id (two parallel calls of one tool keep their
    own inputs and outputs); the final answer and usage come from the same
    :class:`PlaygroundEncoder` pieces the stream uses, so both answers agree."""

    def __init__(self, *, markdown: bool = False) -> None:
        self._encoder = PlaygroundEncoder(markdown=markdown)
        self._doc: dict[str, Any] = {"executionId": None, "state": "failed"}
        self._thinking: list[str] = []
        self._calls: dict[str, dict[str, Any]] = {}

    def add(self, event: RunEvent) -> None:
        doc, encoder = self._doc, self._encoder
        match event:
            case RunStarted(run_id=run_id):
                encoder.encode(event)
                doc["executionId"], doc["state"] = run_id, "started"
            case ReasoningDelta(text=text):
                self._thinking.append(text)
            case ToolCallArgs(call_id=call_id, name=name, arguments=arguments, raw_arguments=raw):
                shown = raw if raw is not None else dumps(arguments)
                self._calls[call_id] = {"toolName": name, "input": shown}
            case ToolCallFinished(
                call_id=call_id, name=name, output=output, result=result, is_error=is_error
            ):
                entry = self._calls.setdefault(call_id, {"toolName": name})
                entry["output"] = as_text(output if output is not None else result)
                entry["isError"] = is_error
            case AnswerShaped():
                encoder.encode(event)
            case RunCompleted(message=message, usage=usage):
                message = message if encoder.shown is None else encoder.shown
                doc["metadata"] = encoder._metadata(usage)
                doc.update(encoder._final(message, event))
                doc["state"] = "completed"
            case RunFailed(message=message):
                doc["error"], doc["state"] = {"message": message}, "failed"
            case RunCancelled():
                doc["error"], doc["state"] = {"message": "The run was cancelled."}, "failed"
            case _:
                pass

    def result(self) -> dict[str, Any]:
        return {
            **self._doc,
            "thinking": "".join(self._thinking),
            "toolCalls": list(self._calls.values()),
        }


def _wants_ndjson(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "application/x-ndjson" in accept and "text/event-stream" not in accept


def router(server: ServerContext) -> APIRouter:
    api = APIRouter(tags=[DIALECT.title], route_class=DirectRoute)
    CurrentPrincipal = Annotated[Principal, Depends(server.principal(allow_cookie=True))]

    @api.post(
        PATH,
        summary="Data playground chat stream: SSE or NDJSON, or one JSON document",
        response_class=Response,
        responses={
            200: {
                "content": {
                    "text/event-stream": {},
                    "application/x-ndjson": {},
                    "application/json": {},
                }
            }
        },
    )
    async def agent_chat_stream(
        request: Request,
        body: AgentChatRequest,
        principal: CurrentPrincipal,
        brand_ref: Annotated[str, Query(alias="brandRef", min_length=1)],
        structure: Annotated[str | None, Query()] = None,
    ) -> Response:
        if body.brandRef != brand_ref:
            raise bad_request("brandRef", "the query and the body name different brands")
        principal = for_tenant(principal, brand_ref, server.settings)
        model = await choose_model(server, body.model)
        run_request = to_run_request(body, principal, model=model, structure=structure)
        shown = await active_path(server.runner.store, principal, run_request.conversation_id)
        asked = [m.content for m in body.history if m.role == "user"]
        branch = diverging(shown, asked, run_request.message)
        run_request = replace(run_request, branch=branch)
        field = "metadata.conversationId"
        options = {"markdown": body.markdown, "ndjson": _wants_ndjson(request)}
        if not body.stream:
            run_request = replace(run_request, reader=DIALECT.reader(options))
            session = await begin_run(server, run_request, conversation_field=field)
            answer = PlaygroundDocument(markdown=body.markdown)
            policy = disconnect_policy(server, DIALECT.on_disconnect)
            if not await fold_run(session, answer.add, request.receive, on_disconnect=policy):
                return Response(status_code=499)  # nobody is left to read it
            return JSONResponse(answer.result())
        return await stream_run(server, run_request, DIALECT, options, conversation_field=field)

    @api.get(MODELS_PATH, summary="The models this deployment offers (the playground's listModels)")
    async def list_models(principal: CurrentPrincipal) -> dict[str, list[OfferedModel]]:
        return {"models": await server.models.models()}

    return api


def _stream(options: StreamOptions) -> tuple[Encoder, WireFormat]:
    wire = NDJSON if options.get("ndjson") else SSE_NAMED
    return PlaygroundEncoder(markdown=bool(options.get("markdown"))), wire


DIALECT = Dialect(
    name="playground",
    title="data playground",
    summary="The data playground protocol",
    reference="protocols/playground.md",
    prefixes=("/api/chat/agent-chat", "/api/chat/models"),
    routes=router,
    stream=_stream,
)
"""The data playground protocol; a client that hangs up stops its run."""
