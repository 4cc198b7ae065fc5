"""``ai-sdk``, the Vercel AI SDK's UI message stream (protocol v1, what ``useChat`` speaks).

``POST /ai-sdk/chat`` takes what the SDK's ``DefaultChatTransport`` posts: ``id`` (the
conversation, the client's own id), ``messages`` (UI messages with ``parts``), ``trigger``
(``submit-message`` or ``regenerate-message``) and ``messageId``. The server's stored
conversation is the history; of ``messages`` only the last one is read: the user's new message
(its text parts), or the assistant message whose tool parts carry approval responses
(``addToolApprovalResponse``), which the answer then continues. The conversation is a tree
(see ``docs/guides/branches.md``): ``regenerate-message`` (``regenerate()``) answers the
question the client's list ends with again, a new answer beside the stored one, and a
``submit-message`` whose ``messageId`` names the user message it ends with
(``sendMessage({text, messageId})``) edits that question: a new branch where it was, the old
one kept. Both find the stored question by its place among the user messages the client
sends (its ids are its own), or by id when only ``message`` is sent. The answer is ``data: {json}``
SSE with the header ``x-vercel-ai-ui-message-stream: v1``, ending with ``data: [DONE]``:

``start {messageId}`` (the run's id, or the message an approval answer continues),
``start-step``/``finish-step`` around each model turn and its tools, ``text-start/-delta/-end``
and ``reasoning-start/-delta/-end`` (ids ``text-N``/``reasoning-N``), ``tool-input-start``,
``tool-input-delta`` (the arguments' JSON as the model writes it), ``tool-input-available`` (or
``tool-input-error`` for arguments that are not JSON), ``tool-output-available``,
``tool-output-error`` or ``tool-output-denied``, ``file`` after a tool's output for each file
it made (``url`` here, ``mediaType``, ``filename``), ``tool-approval-request`` for a call that
waits for a person, ``data-<kind>`` for payloads (``id``: the payload's id),
``data-tool-progress`` (one part per call, updated in place), a transient ``data-warning``,
``message-metadata {usage}`` after each model turn, then ``finish {finishReason,
messageMetadata}`` (``length`` or ``content-filter`` for an answer cut off at the model's
output limit or by its content filter) or ``error {errorText}`` + ``finish {finishReason:
"error"}`` or ``abort {reason}``.

A client that hangs up leaves the run going (it is stored when it ends):
``GET /ai-sdk/chat/{id}/stream`` (the transport's ``reconnectToStream``) replays the
conversation's run in progress from its start and follows it, ``204`` when there is none;
``POST /ai-sdk/chat/{id}/stop`` stops it on whichever worker runs it, and its stream ends with
``abort``; the partial answer is kept. ``GET /ai-sdk/chat/{id}/messages`` gives the stored
chat as UI messages (see :mod:`~agentstream.server.dialects.aisdk_history`).

Reference: ``docs/protocols/ai-sdk.md``.
"""

# No ``from __future__ import annotations``: FastAPI reads the route annotations at runtime.

from collections.abc import Sequence
from dataclasses import replace
from typing import Annotated, Any, Literal, assert_never

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel, Field

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
from agentstream.pending import Answers, ApprovalDecision, open_calls
from agentstream.principal import Principal
from agentstream.runs import (
    Branch,
    ConversationNotFound,
    ProtocolOptions,
    RunNotFound,
    RunRequest,
)
from agentstream.runs.store import ConversationReader, ConversationStore
from agentstream.server.dialects.aisdk_history import file_part, ui_messages
from agentstream.server.dialects.base import (
    DoubleTextingRequest,
    Frame,
    RequestModel,
    client_conversation_id,
    continue_stream,
    dumps,
    quote,
    stream_run,
)
from agentstream.server.dialects.branching import active_path, answer_again, edit, question_at
from agentstream.server.dialects.declaration import Dialect, StreamOptions
from agentstream.server.dialects.files import SentFile, attachment_ids, from_url
from agentstream.server.direct import DirectRoute
from agentstream.server.errors import ApiError, bad_request
from agentstream.server.sse import SSE_DATA, Encoder, WireFormat
from agentstream.server.state import ServerContext

__all__ = [
    "DIALECT",
    "MESSAGES_PATH",
    "PATH",
    "RESUME_PATH",
    "STOP_PATH",
    "AiSdkChatRequest",
    "AiSdkEncoder",
    "UIMessage",
    "router",
    "to_run_request",
]

PATH = "/ai-sdk/chat"
RESUME_PATH = "/ai-sdk/chat/{id}/stream"
MESSAGES_PATH = "/ai-sdk/chat/{id}/messages"
STOP_PATH = "/ai-sdk/chat/{id}/stop"
HEADERS = {"x-vercel-ai-ui-message-stream": "v1"}
PROTOCOL = ProtocolOptions(suggestions=False)

_DONE: Frame = ("done", "[DONE]")
_FINISH = {"max_tokens": "length", "refusal": "content-filter"}
"""The SDK's ``finishReason`` of an answer cut off (the rest finish with ``stop``)."""
_START_STEP: Frame = ("start-step", '{"type":"start-step"}')
_FINISH_STEP: Frame = ("finish-step", '{"type":"finish-step"}')


class UIMessage(RequestModel):
    """A message as ``useChat`` keeps it: ``parts`` of any type (text and file parts are
    read)."""

    id: str = ""
    role: Literal["system", "user", "assistant"]
    parts: list[dict[str, Any]]


class AiSdkChatRequest(DoubleTextingRequest):
    """The body ``DefaultChatTransport`` posts (fields an app adds with ``body`` are ignored),
    or with ``message`` alone instead of ``messages``: what the SDK's docs suggest
    (``prepareSendMessagesRequest``) when the server keeps the chat."""

    id: str = Field(min_length=1)
    messages: list[UIMessage] = Field(default_factory=list)
    message: UIMessage | None = None
    trigger: Literal["submit-message", "regenerate-message"] = "submit-message"
    messageId: str | None = None  # noqa: N815 (the SDK's name)

    def last(self) -> tuple[UIMessage, str]:
        """The message to read and where it is in the body (for errors naming the field)."""
        if self.message is not None:
            return self.message, "message"
        if not self.messages:
            raise bad_request("messages", "expected at least one message (or send `message`)")
        return self.messages[-1], f"messages.{len(self.messages) - 1}"


def new_message(body: AiSdkChatRequest) -> tuple[str, list[SentFile]]:
    """The user's new message: the last message's text parts, joined, and its file parts
    (``sendMessage({text, files})``)."""
    message, field = body.last()
    texts = [
        part["text"]
        for part in message.parts
        if part.get("type") == "text" and isinstance(part.get("text"), str)
    ]
    files = [
        _file(part, f"{field}.parts.{position}")
        for position, part in enumerate(message.parts)
        if part.get("type") == "file"
    ]
    text = "".join(texts)
    if not text.strip() and not files:
        raise bad_request(f"{field}.parts", "expected a text part with some text")
    return text, files


def _file(part: dict[str, Any], field: str) -> SentFile:
    """A ``file`` part: ``{type, mediaType, filename?, url}``."""
    url, name = part.get("url"), part.get("filename")
    if not isinstance(url, str) or not url:
        raise bad_request(f"{field}.url", "expected the file's URL")
    declared = part.get("mediaType")
    return from_url(
        url,
        field=f"{field}.url",
        name=name if isinstance(name, str) and name else "file",
        declared=declared if isinstance(declared, str) else None,
    )


def approval_responses(body: AiSdkChatRequest) -> tuple[ApprovalDecision, ...]:
    """The answers ``addToolApprovalResponse`` put in the last (assistant) message: its tool
    parts in state ``approval-responded``."""
    message, last = body.last()
    decisions = []
    for position, part in enumerate(message.parts):
        kind = part.get("type")
        if not (isinstance(kind, str) and kind.startswith(("tool-", "dynamic-tool"))):
            continue
        if part.get("state") != "approval-responded":
            continue
        field = f"{last}.parts.{position}"
        approval, call_id = part.get("approval"), part.get("toolCallId")
        if not isinstance(call_id, str) or not call_id:
            raise bad_request(f"{field}.toolCallId", "expected the tool call's id")
        if not (isinstance(approval, dict) and isinstance(approval.get("approved"), bool)):
            raise bad_request(f"{field}.approval", 'expected {"approved": true|false, ...}')
        reason = approval.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise bad_request(f"{field}.approval.reason", "expected a string")
        decisions.append(
            ApprovalDecision(call_id=call_id, approved=approval["approved"], reason=reason)
        )
    if not decisions:
        raise bad_request(
            f"{last}.role",
            "the last message must be the user's, or the assistant's with tool approval responses",
        )
    return tuple(decisions)


def to_run_request(
    body: AiSdkChatRequest, principal: Principal
) -> tuple[RunRequest, list[SentFile]]:
    """A user message (and the files it carries, to keep before the run), or (the last
    message is the assistant's) the approval responses that continue its answer."""
    answers = None
    files: list[SentFile] = []
    last, field = body.last()
    if last.role == "user":
        message, files = new_message(body)
    elif body.trigger == "regenerate-message":
        raise bad_request(
            f"{field}.role", "to answer again, the user's message must be the last one"
        )
    else:
        message, answers = "", Answers(decisions=approval_responses(body))
    request = RunRequest(
        message=message,
        principal=principal,
        double_texting=body.double_texting,
        conversation_id=client_conversation_id(principal, body.id, "id"),
        create_conversation=True,
        answers=answers,
        metadata={"client_conversation_id": body.id},
        protocol=PROTOCOL,
    )
    return request, files


async def branch_of(
    body: AiSdkChatRequest, request: RunRequest, store: ConversationStore | None
) -> Branch | None:
    """Where ``regenerate()`` or ``sendMessage({text, messageId})`` branches the stored
    chat; None for a new message (or a chat with nothing stored to branch)."""
    last, _ = body.last()
    again = body.trigger == "regenerate-message"
    if not again and not (body.messageId is not None and last.role == "user"):
        return None
    shown = await active_path(store, request.principal, request.conversation_id)
    if body.messages:
        number = sum(message.role == "user" for message in body.messages)
        index = question_at(shown, number)
    else:  # ``message`` alone: its id is the stored one (a chat loaded from the server)
        wanted = body.messageId if not again else None
        questions = [i for i, m in enumerate(shown) if m.role == "user" and wanted in (None, m.id)]
        index = questions[-1] if questions else None
    if index is None:
        if again or not shown:
            return None
        raise bad_request("messageId", "no stored message of this chat has this id")
    return answer_again(shown, index) if again else edit(shown, index)


def stream_options(body: AiSdkChatRequest, request: RunRequest) -> dict[str, Any]:
    """What the encoder needs to continue an answer after approval responses: the client's
    message (the stream adds to it) and which of its calls were answered."""
    if request.answers is None:
        return {}
    return {
        "message_id": body.messageId or body.last()[0].id or None,
        "answered": [d.call_id for d in request.answers.decisions],
    }


def _usage(usage: Usage) -> dict[str, int]:
    """Token counts under the SDK's names (``LanguageModelUsage``)."""
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.total_tokens,
        "reasoningTokens": usage.reasoning_tokens,
        "cachedInputTokens": usage.cache_read_tokens,
    }


class AiSdkEncoder:
    """Canonical events as UI message chunks. The text and reasoning delta frames are a
    prefix built once per part (its id is in it) and the delta's JSON string."""

    def __init__(self, options: StreamOptions | None = None) -> None:
        options = options or {}
        self._delta_prefix = ""  # '{"type":"text-delta","id":"text-N","delta":' of the open part
        self._text_open = False
        self._step_open = False
        self._usage = Usage()
        self._message_id: str | None = options.get("message_id")
        self._started: set[str] = set()  # calls whose tool-input-start went out
        # Calls this request answers (approved or denied): the client's message has them.
        self._answered: frozenset[str] = frozenset(options.get("answered") or ())

    def encode(self, event: RunEvent) -> Sequence[Frame]:
        match event:
            case TextDelta(text=text):  # first: the per-delta path
                if self._text_open:
                    return (("delta", self._delta_prefix + quote(text) + "}"),)
                return self._text_after_its_part(event)
            case ReasoningDelta(text=text):
                return (("delta", self._delta_prefix + quote(text) + "}"),)
            case PartStarted(part=part, kind=kind):
                part_id = quote(f"{kind}-{part}")
                self._delta_prefix = '{"type":"' + kind + '-delta","id":' + part_id + ',"delta":'
                self._text_open = kind == "text"
                return ((kind, '{"type":"' + kind + '-start","id":' + part_id + "}"),)
            case PartEnded(part=part, kind=kind):
                self._text_open = False
                return ((kind, '{"type":"' + kind + '-end","id":' + quote(f"{kind}-{part}") + "}"),)
            case RunStarted(run_id=run_id):
                start = {"type": "start", "messageId": self._message_id or run_id}
                return (("start", dumps(start)),)
            case TurnStarted():
                self._step_open = True
                return (_START_STEP,)
            case TurnFinished():
                self._step_open = False
                return (_FINISH_STEP,)
            case ToolCallStarted(call_id=call_id, name=name):
                self._started.add(call_id)
                start = {"type": "tool-input-start", "toolCallId": call_id, "toolName": name}
                return (("tool", dumps(start)),)
            case ToolCallDelta(call_id=call_id, delta=delta):
                data = {"type": "tool-input-delta", "toolCallId": call_id, "inputTextDelta": delta}
                return (("tool", dumps(data)),)
            case ToolCallArgs():
                return self._tool_input(event)
            case ToolCallFinished():
                return self._tool_output(event)
            case ToolProgress():
                progress = {
                    "toolCallId": event.call_id,
                    "toolName": event.name,
                    "stage": event.stage,
                    "message": event.message,
                    "fraction": event.fraction,
                    "data": event.data,
                }
                chunk = {"type": "data-tool-progress", "id": event.call_id, "data": progress}
                return (("data", dumps(chunk)),)
            case PayloadEvent(payload=payload):
                shown: dict[str, Any] = {"type": f"data-{payload.kind}"}
                if payload.payload_id is not None:
                    shown["id"] = payload.payload_id
                shown["data"] = payload.data
                return (("data", dumps(shown)),)
            case UsageEvent(usage=usage):
                self._usage = self._usage + usage
                metadata = {"type": "message-metadata", "messageMetadata": self._metadata()}
                return (("metadata", dumps(metadata)),)
            case RunResumed(notice=notice):
                # The interrupted part has ended; the continuation comes in new ones.
                resumed = {"type": "data-resumed", "data": {"message": notice}, "transient": True}
                return (("data", dumps(resumed)),)
            case RunWarning(code=code, message=message):
                warning = {
                    "type": "data-warning",
                    "data": {"code": code, "message": message},
                    "transient": True,
                }
                return (("data", dumps(warning)),)
            case ContextSummarized(exchanges=exchanges):
                summarized = {
                    "type": "data-context-summarized",
                    "data": {"exchanges": exchanges},
                    "transient": True,
                }
                return (("data", dumps(summarized)),)
            case RunCompleted(pending_calls=pending, stop_reason=stop):
                # Calls waiting for a person: the client shows them for approval.
                requests = [
                    (
                        "tool",
                        dumps(
                            {
                                "type": "tool-approval-request",
                                "approvalId": p.call_id,
                                "toolCallId": p.call_id,
                            }
                        ),
                    )
                    for p in pending
                    if p.waiting_for == "approval"
                ]
                finish = {
                    "type": "finish",
                    "finishReason": "tool-calls" if requests else _FINISH.get(stop, "stop"),
                    "messageMetadata": self._metadata(),
                }
                return (*self._close_step(), *requests, ("finish", dumps(finish)), _DONE)
            case RunFailed(message=message):
                return (*self._close_step(), *self.fail(message))
            case RunCancelled(reason=reason):
                abort = {"type": "abort", "reason": reason}
                return (*self._close_step(), ("abort", dumps(abort)), _DONE)
            case AnswerShaped() | ConversationSaved() | StateSnapshot() | StateDelta():
                return ()
            case _:
                assert_never(event)

    def fail(self, message: str) -> Sequence[Frame]:
        error = {"type": "error", "errorText": message}
        finish = {"type": "finish", "finishReason": "error"}
        return (("error", dumps(error)), ("finish", dumps(finish)), _DONE)

    def _text_after_its_part(self, event: TextDelta) -> Sequence[Frame]:
        """Text shown after its part ended (a line held back as a possible marker, released
        when the answer ended): a text part of its own, since the SDK refuses deltas of a
        part that has ended."""
        part_id = quote(f"text-{event.seq}")
        return (
            ("text", '{"type":"text-start","id":' + part_id + "}"),
            (
                "delta",
                '{"type":"text-delta","id":' + part_id + ',"delta":' + quote(event.text) + "}",
            ),
            ("text", '{"type":"text-end","id":' + part_id + "}"),
        )

    def _metadata(self) -> dict[str, Any]:
        return {"usage": _usage(self._usage)}

    def _close_step(self) -> Sequence[Frame]:
        """A turn cut short has no ``turn_finished``: its step is closed before the end."""
        if not self._step_open:
            return ()
        self._step_open = False
        return (_FINISH_STEP,)

    def _tool_input(self, event: ToolCallArgs) -> Sequence[Frame]:
        if event.call_id in self._answered:
            return ()  # an approved call about to run: the client has its input
        frames: list[Frame] = []
        if event.call_id not in self._started:  # a call the model did not stream
            self._started.add(event.call_id)
            start = {
                "type": "tool-input-start",
                "toolCallId": event.call_id,
                "toolName": event.name,
            }
            frames.append(("tool", dumps(start)))
        data: dict[str, Any] = {"toolCallId": event.call_id, "toolName": event.name}
        if event.raw_arguments is not None:
            data = {
                "type": "tool-input-error",
                **data,
                "input": event.raw_arguments,
                "errorText": "The arguments are not valid JSON",
            }
        else:
            data = {"type": "tool-input-available", **data, "input": event.arguments}
        if event.display:
            data["title"] = event.display
        frames.append(("tool", dumps(data)))
        return frames

    def _tool_output(self, event: ToolCallFinished) -> Sequence[Frame]:
        self._started.discard(event.call_id)
        if event.outcome == "denied":
            return (("tool", dumps({"type": "tool-output-denied", "toolCallId": event.call_id})),)
        if event.is_error:
            error = event.error.message if event.error is not None else event.result
            data = {"type": "tool-output-error", "toolCallId": event.call_id, "errorText": error}
        else:
            output = event.output if event.output is not None else event.result
            data = {"type": "tool-output-available", "toolCallId": event.call_id, "output": output}
        files = [("file", dumps(file_part(attachment))) for attachment in event.attachments]
        return (("tool", dumps(data)), *files)  # its payload follows as its own event


class StopAnswer(BaseModel):
    id: str
    status: str


def router(server: ServerContext) -> APIRouter:
    api = APIRouter(tags=[DIALECT.title], route_class=DirectRoute)
    CurrentPrincipal = Annotated[Principal, Depends(server.principal(allow_cookie=True))]

    @api.post(
        PATH,
        summary="AI SDK chat: the UI message stream useChat reads",
        response_class=Response,
        responses={
            200: {"content": {"text/event-stream": {}}},
            409: {
                "description": "A message while an answer is in progress in the chat (under "
                "double_texting reject; a regenerate unless it interrupts)"
            },
        },
    )
    async def chat(body: AiSdkChatRequest, principal: CurrentPrincipal) -> Response:
        request, files = to_run_request(body, principal)
        branch = await branch_of(body, request, server.runner.store)
        if branch is not None and branch.again:
            files = []  # the question is answered as stored, files included
        request = replace(request, branch=branch)
        if files:
            ids = await attachment_ids(server.intake, principal, files)
            request = replace(request, attachments=ids)
        return await stream_run(
            server,
            request,
            DIALECT,
            stream_options(body, request),
            conversation_field="id",
            answers_field=f"{body.last()[1]}.parts",
        )

    async def active_run(chat_id: str, principal: Principal) -> str | None:
        conversation_id = client_conversation_id(principal, chat_id, "id")
        return await server.runner.broker.active_run(conversation_id, principal)

    @api.get(
        RESUME_PATH,
        summary="Resume the chat's answer in progress from its start (reconnectToStream)",
        response_class=Response,
        responses={
            200: {"content": {"text/event-stream": {}}},
            204: {"description": "No answer is in progress in this chat"},
        },
    )
    async def resume(id: str, principal: CurrentPrincipal) -> Response:
        run_id = await active_run(id, principal)
        if run_id is None:
            return Response(status_code=204)
        try:
            reader = await server.runner.broker.reader_of(run_id, principal)
        except RunNotFound:  # it ended and expired in between
            return Response(status_code=204)
        options = (reader or {}).get("options") or {}
        return await continue_stream(server, run_id, principal, -1, DIALECT, options)

    @api.get(
        MESSAGES_PATH,
        summary="The chat as UI messages, for useChat's initial messages after a reload",
        responses={
            200: {"description": "UI messages, oldest first (none for a chat not started)"},
            404: {"description": "This server keeps no conversations"},
        },
    )
    async def messages(id: str, principal: CurrentPrincipal) -> list[dict[str, Any]]:
        conversation_id = client_conversation_id(principal, id, "id")
        store = server.runner.store
        if not isinstance(store, ConversationReader):
            raise ApiError(404, "This server keeps no conversations")
        try:
            detail = await store.get_conversation(principal, conversation_id)
            waiting = open_calls(list(await store.history(principal, conversation_id)))
        except ConversationNotFound:
            return []  # not started yet (ids are the caller's own: nobody else's is found)
        return ui_messages(detail.messages, waiting)

    @api.post(
        STOP_PATH,
        summary="Stop the chat's answer in progress (its stream ends with abort)",
        status_code=202,
        responses={404: {"description": "No answer is in progress in this chat"}},
    )
    async def stop(id: str, principal: CurrentPrincipal) -> StopAnswer:
        run_id = await active_run(id, principal)
        if run_id is None or not await server.stop_run(run_id, principal, reason="user_cancelled"):
            raise ApiError(404, "No answer is in progress in this chat")
        return StopAnswer(id=id, status="cancelling")

    return api


def _stream(options: StreamOptions) -> tuple[Encoder, WireFormat]:
    return AiSdkEncoder(options), SSE_DATA


DIALECT = Dialect(
    name="ai-sdk",
    title="AI SDK",
    summary="The Vercel AI SDK UI message stream (useChat)",
    reference="protocols/ai-sdk.md",
    prefixes=("/ai-sdk",),
    routes=router,
    stream=_stream,
    on_disconnect="detach",
    headers=HEADERS,
)
"""The AI SDK's UI message stream: a client that hangs up leaves its run going, to be resumed
(``reconnectToStream``) or stopped (``POST /ai-sdk/chat/{id}/stop``)."""
