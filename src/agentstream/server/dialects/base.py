"""What the dialects share: request-model base, JSON encoding, starting and streaming a run.

A dialect module holds its request model and conversion to :class:`RunRequest` (its
options are a :class:`~agentstream.runs.ProtocolOptions` value, not branches in the loop),
its encoder (a small state machine from canonical events to frames) and its route.
Everything they have in common lives here once: how a run begins and maps its failures to
HTTP errors, how a stream is answered, and the little formatting helpers (compact JSON, ISO
timestamps, text values).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from starlette.responses import Response
from starlette.types import Receive

from agentstream.chat.markers import MarkerLineFilter
from agentstream.errors import (
    Draining,
    InvalidBranch,
    InvalidConversationId,
    ModelUnavailable,
    RefusedRequest,
    TooLarge,
)
from agentstream.events import TERMINAL_EVENTS, RunEvent, StopReason, TextDelta, TurnStarted
from agentstream.pending import InvalidAnswers
from agentstream.principal import Principal
from agentstream.runs import BrokerUnavailable, RunNotFound, RunRequest, RunSession
from agentstream.runs.broker import Handoff
from agentstream.runs.request import DoubleTexting
from agentstream.server.dialects.declaration import Dialect, StreamOptions
from agentstream.server.errors import bad_request
from agentstream.server.limits import validate_body
from agentstream.server.settings import DisconnectPolicy
from agentstream.server.sse import Encoder, EventStream, Frame, WireFormat
from agentstream.server.state import ServerContext
from agentstream.state import InvalidState, check_state

__all__ = [
    "MAX_ATTACHMENT_IDS",
    "AttachingRequest",
    "DoubleTextingRequest",
    "client_conversation_id",
    "continue_stream",
    "follow",
    "Dialect",
    "Encoder",
    "Frame",
    "NonEmptyText",
    "RequestModel",
    "as_text",
    "begin_run",
    "choose_model",
    "cut_off_notice",
    "disconnect_policy",
    "fold_run",
    "dumps",
    "event_stream",
    "iso_ms",
    "page_state",
    "quote",
    "stream_run",
]

NonEmptyText = Annotated[str, StringConstraints(min_length=1, pattern=r"\S")]
"""A message: at least one non-space character."""


class RequestModel(BaseModel):
    """Request bodies: unknown fields are ignored (clients send extra keys), known ones are
    validated; the app turns validation errors into a 400 naming the field."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _checked(cls, data: Any) -> Any:
        # A 400 for absurd nesting or text that is not text, not a failure later.
        return validate_body(data)


MAX_ATTACHMENT_IDS = 100
"""Ids a request may list at most (the deployment's own, smaller limit is checked with the
caller's attachments: ``AGENTSTREAM_MAX_ATTACHMENTS_PER_MESSAGE``)."""


class AttachingRequest(RequestModel):
    """A request whose message may carry files: the ``attachments`` extension of the chat
    tray, ops, workflow and playground protocols, the ids of the caller's uploads
    (``POST /api/attachments``)."""

    attachments: list[Annotated[str, StringConstraints(min_length=1, max_length=64)]] = Field(
        default_factory=list,
        max_length=MAX_ATTACHMENT_IDS,
        description="Ids of the caller's uploads (POST /api/attachments) the message carries "
        "(an extension of this protocol)",
    )


class DoubleTextingRequest(RequestModel):
    """A request that may say what its message does while its conversation's answer is still
    streaming (an extension of the protocols with room for it in their body)."""

    double_texting: DoubleTexting | None = Field(
        default=None,
        description="reject (409 naming the answer in progress), queue (answered after it) "
        "or interrupt (it is stopped, this message answered next); default: the server's "
        "AGENTSTREAM_DOUBLE_TEXTING (an extension of this protocol)",
    )


_CLIENT_IDS = uuid.UUID("1b7f0c56-5a8e-4a0e-9a57-6d7a1e0c2f41")
CLIENT_ID_LENGTH = 512
"""The longest conversation id a client may choose (any text: an e-mail, a path, a UUID)."""


def client_conversation_id(principal: Principal, client_id: str, field: str) -> str:
    """The stored id of a conversation the client names itself (the workflow assistant's
    ``conversation_id``, the data playground's ``metadata.conversationId``).

    It is derived from the tenant, the user and the client's id (a UUIDv5), so ids chosen by
    different callers never meet: two tenants whose apps both number conversations 1, 2, 3
    keep separate conversations, and nobody can claim another caller's id first or learn
    that it exists. The client keeps using its own id; it is also kept in the conversation's
    metadata.
    """
    if not 1 <= len(client_id) <= CLIENT_ID_LENGTH:
        raise bad_request(field, f"expected 1 to {CLIENT_ID_LENGTH} characters")
    name = f"{principal.owner}\x1f{client_id}"
    return str(uuid.uuid5(_CLIENT_IDS, name))


dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
"""Compact JSON for frames; values tools return that JSON cannot hold become strings."""

quote = json.encoder.encode_basestring
"""A string as a JSON string literal, the same as ``dumps(text)`` for text but without the
encoder object: the per-delta frames are built from it around a fixed prefix."""


_CUT_OFF_NOTICES = {
    "max_tokens": "The answer was cut off: the model reached its output limit.",
    "refusal": "The answer was cut off by the model's content filter.",
}


def page_state(value: Any, field: str) -> dict[str, Any] | None:
    """The shared state a page sent (:mod:`agentstream.state`): ``None`` for none, else a
    JSON object within :data:`~agentstream.state.STATE_LIMIT_BYTES` (a 400 naming ``field``
    for anything else, a 413 for one too large)."""
    if value is None:
        return None
    try:
        return check_state(value)
    except InvalidState as exc:
        if exc.too_large:
            raise TooLarge(f"{field}: {exc}", limit="state_bytes") from None
        raise RefusedRequest(field, str(exc)) from None


def cut_off_notice(stop_reason: StopReason) -> str:
    """What to tell a user whose answer stopped for ``stop_reason`` (one of
    :data:`~agentstream.events.CUT_OFF`), for protocols that say it in words."""
    return _CUT_OFF_NOTICES.get(stop_reason, "The answer was cut off.")


def as_text(value: Any) -> str:
    """A tool's output as text for dialects that carry strings (the data playground's
    ``output``, the chat tray's tool history)."""
    return value if isinstance(value, str) else dumps(value)


def iso_ms(timestamp: float) -> str:
    """``2023-10-27T10:00:00.123Z`` (the ops agent's ``ts``)."""
    moment = datetime.fromtimestamp(timestamp, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


async def choose_model(
    server: ServerContext, model: str | None, field: str = "model"
) -> str | None:
    """The model for the run request (``None``: the agent's own); raises
    :class:`~agentstream.errors.ModelUnavailable` naming ``field`` (a 400)."""
    try:
        return await server.models.choose(model)
    except ModelUnavailable as exc:
        exc.field = field
        raise


async def begin_run(
    server: ServerContext,
    request: RunRequest,
    *,
    conversation_field: str = "conversation_id",
    answers_field: str = "answers",
    branch_field: str = "parent_message_id",
) -> RunSession:
    """Start ``request`` while its errors can still be HTTP statuses: the library's
    refusals (:mod:`agentstream.errors`) propagate to the app's handlers, a 400 naming the
    field (the conversation id as this dialect calls it, ``conversation_field``; answers that
    do not fit the conversation's pending tool calls, ``answers_field``; a branch the
    conversation cannot start, ``branch_field``) or a 404."""
    # The runner asks the hooks to refuse what they cannot serve (an unknown server action,
    # a context value out of its choices) before it stores anything: those are 400s too.
    try:
        return await server.runner.begin(request)
    except InvalidAnswers as exc:
        raise RefusedRequest(answers_field, str(exc)) from None
    except InvalidConversationId as exc:  # the SQL store rejects ids it could never hold
        exc.field = conversation_field
        raise
    except InvalidBranch as exc:
        exc.field = branch_field
        raise


async def stream_run(
    server: ServerContext,
    request: RunRequest,
    dialect: Dialect,
    options: StreamOptions | None = None,
    *,
    conversation_field: str = "conversation_id",
    answers_field: str = "answers",
    on_disconnect: DisconnectPolicy | None = None,
) -> EventStream:
    """Begin ``request`` and answer with its stream in ``dialect`` (see :func:`event_stream`)."""
    options = options or {}
    request = replace(request, reader=dialect.reader(options))
    session = await begin_run(
        server, request, conversation_field=conversation_field, answers_field=answers_field
    )
    return event_stream(server, session, dialect, options, on_disconnect=on_disconnect)


class WithholdMarkers:
    """An encoder that shows the text of its ``inner`` encoder without the marker lines the
    run's hooks parse out of the answer (the final answer carries them parsed): every dialect
    streams the same text its final answer has."""

    __slots__ = ("_filter", "_inner")

    def __init__(self, inner: Encoder, markers: Sequence[str]) -> None:
        self._inner = inner
        self._filter = MarkerLineFilter(markers)

    def encode(self, event: RunEvent) -> Sequence[Frame]:
        if type(event) is TextDelta:  # the per-delta path first
            text = self._filter.feed(event.text)
            if not text:
                return ()
            return self._inner.encode(replace(event, text=text) if text != event.text else event)
        if type(event) is TurnStarted:
            self._filter.new_turn()
        elif isinstance(event, TERMINAL_EVENTS):
            held = self._filter.flush()
            if held:
                shown = TextDelta(run_id=event.run_id, seq=event.seq, text=held)
                return (*self._inner.encode(shown), *self._inner.encode(event))
        return self._inner.encode(event)

    def fail(self, message: str) -> Sequence[Frame]:
        return self._inner.fail(message)


def shown_by(server: ServerContext, encoder: Encoder) -> Encoder:
    """``encoder`` as the run's hooks need it shown (see :class:`WithholdMarkers`)."""
    markers = server.runner.hooks.answer_markers
    return WithholdMarkers(encoder, markers) if markers else encoder


def disconnect_policy(server: ServerContext, default: DisconnectPolicy) -> DisconnectPolicy:
    """The policy a stream follows: the deployment's ``AGENTSTREAM_ON_DISCONNECT`` if set,
    else the dialect's (or the request's, where the dialect lets the client choose)."""
    return server.settings.on_disconnect or default


def _leave_running(reason: str) -> None:
    """A detached stream's client left: the run goes on (see :func:`event_stream`)."""


def event_stream(
    server: ServerContext,
    session: RunSession,
    dialect: Dialect,
    options: StreamOptions,
    *,
    on_disconnect: DisconnectPolicy | None = None,
) -> EventStream:
    """The streaming answer for a run that has begun: a reader of the run's log, through the
    dialect's encoder. ``on_disconnect`` (default: the dialect's; the deployment's setting
    wins) says whether a client that hangs up stops the run or leaves it running, to be
    stored and resumed."""
    encoder, wire = dialect.stream(options)
    policy = disconnect_policy(server, on_disconnect or dialect.on_disconnect)
    handoff = Handoff()  # live events go straight to the response (see ``EventStream``)
    return EventStream(
        session.events(handoff=handoff),
        shown_by(server, encoder),
        wire,
        cancel=session.abandon if policy == "cancel" else _leave_running,
        heartbeat=server.settings.heartbeat_seconds,
        write_timeout=server.settings.write_timeout_seconds,
        headers={**dialect.headers, "X-Run-Id": session.run_id},
        ready=session.waiting,
        handoff=handoff,
    )


def _not_following(reason: str) -> None:
    """A reader that hangs up stops nothing: the run is its own (see ``Runner``)."""


async def _rest(
    events: AsyncGenerator[RunEvent, None], encoder: Encoder, after: int
) -> AsyncGenerator[RunEvent, None]:
    """The run's events after ``after``; those the client already has only go through
    ``encoder`` (a fresh one sees the run from its start: its state, such as open tools, held
    marker text, the playground's text so far, is rebuilt) and their frames are dropped."""
    async with aclosing(events):
        try:
            async for event in events:
                if event.seq > after:
                    yield event
                else:
                    encoder.encode(event)
        except (RunNotFound, BrokerUnavailable):
            # Expired meanwhile, or Redis went away: the client reconnects with
            # Last-Event-ID and is told 404, or picks up once Redis is back.
            return


def follow(
    server: ServerContext,
    events: AsyncGenerator[RunEvent, None],
    encoder: Encoder,
    wire: WireFormat,
    run_id: str,
    principal: Principal,
    after: int,
    headers: Mapping[str, str] | None = None,
) -> EventStream:
    """A reader's streaming answer of ``events`` (a replay from before ``after``), with
    heartbeats from the start; its client leaving stops nothing. Traced, when traces are
    on, as a child of the run's span wherever the run runs."""
    if server.tracing is not None:
        events = server.tracing.following(events, run_id, principal, server.runner.broker)
    stream = EventStream(
        _rest(events, encoder, after),
        encoder,
        wire,
        cancel=_not_following,
        heartbeat=server.settings.heartbeat_seconds,
        write_timeout=server.settings.write_timeout_seconds,
        headers={**(headers or {}), "X-Run-Id": run_id},
    )
    server.followers.add(stream)  # ended when the worker stops (ServerContext.drain)
    return stream


async def read_all(server: ServerContext, run_id: str, principal: Principal, after: int) -> bool:
    """Whether the run is over and the client has all of its events (204: a browser
    EventSource stops reconnecting). Answered from where the log stands now, so a client of
    a run in progress gets its response (and heartbeats) at once, not at the run's next
    event. Raises :class:`~agentstream.errors.RunNotFound` for a run that is not theirs, and
    :class:`~agentstream.errors.Draining` on a worker that is stopping for any run but its
    own in progress (the client follows it from another worker rather than from one about
    to go)."""
    runner = server.runner
    if runner.draining and not runner.runs_here(run_id):
        raise Draining()
    end = await runner.broker.end_of(run_id, principal)
    return end.done and end.last <= after


async def continue_stream(
    server: ServerContext,
    run_id: str,
    principal: Principal,
    after: int,
    dialect: Dialect,
    options: StreamOptions,
) -> Response:
    """Run ``run_id`` in ``dialect`` from the event after ``after`` (``-1``: from its start),
    then live until it ends; 204 when the caller has it all, 404 when it is not theirs."""
    if await read_all(server, run_id, principal, after):
        return Response(status_code=204)
    encoder, wire = dialect.stream(options)
    # A fresh encoder sees the run from its start; frames of events the client has are
    # dropped (see ``_rest``).
    events = server.runner.broker.replay(run_id, principal, -1)
    return follow(
        server, events, shown_by(server, encoder), wire, run_id, principal, after, dialect.headers
    )


async def fold_run(
    session: RunSession,
    fold: Callable[[RunEvent], object],
    receive: Receive,
    *,
    on_disconnect: DisconnectPolicy,
) -> bool:
    """Feed every canonical event of the run to ``fold``, for answers that are one document
    (the data playground's ``stream: false``). Watches the connection meanwhile: a client
    that hangs up first stops the run under the ``cancel`` policy (and the fold either way);
    returns whether the fold saw the whole run."""

    async def read() -> None:
        async with aclosing(session.events()) as events:
            async for event in events:
                fold(event)

    async def hung_up() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    reading, watching = asyncio.create_task(read()), asyncio.create_task(hung_up())
    try:
        await asyncio.wait((reading, watching), return_when=asyncio.FIRST_COMPLETED)
        if not reading.done():
            if on_disconnect == "cancel":
                session.abandon("client_disconnected")
            return False
        reading.result()
        return True
    finally:
        for task in (reading, watching):
            task.cancel()
        await asyncio.gather(reading, watching, return_exceptions=True)
