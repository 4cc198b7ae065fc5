"""A run's log, read from any worker: ``GET /api/runs/{run_id}/events`` and ``.../stream``.

A run appends its canonical events to the broker's log (in process, or in Redis); every answer
is a reader of it. ``/events`` serves the canonical events themselves to the run's owner (an
operator sees exactly what a run produced). ``/stream`` continues the run *in the protocol
that started it*: the dialect's encoder is rebuilt by replaying the run from its start through
a fresh one, and the frames the client already has are dropped, so a client that lost its
connection (or a second tab) picks up with no duplicate and no gap. Both take the position
as ``Last-Event-ID`` (SSE ``id:`` lines carry each event's ``seq``) or ``?after=``.

Reference: ``docs/protocols/runs.md``.
"""

# No ``from __future__ import annotations``: FastAPI reads the route annotations at runtime.

from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query
from starlette.responses import Response, StreamingResponse

from agentstream.errors import RunNotFound, UnknownDialect
from agentstream.events import RunEvent, event_to_json
from agentstream.principal import Principal
from agentstream.runs import BrokerUnavailable
from agentstream.server.dialects.base import shown_by
from agentstream.server.dialects.declaration import Dialect
from agentstream.server.errors import bad_request
from agentstream.server.sse import SSE_NAMED, Encoder, EventStream, Frame, WireFormat
from agentstream.server.state import ServerContext

__all__ = ["EVENTS_PATH", "STREAM_PATH", "router"]

EVENTS_PATH = "/api/runs/{run_id}/events"
STREAM_PATH = "/api/runs/{run_id}/stream"
MAX_SEQ = 2**53 - 1
"""The largest event position a client may name (a run never gets near it); larger numbers
are a 400 rather than an id Redis refuses."""


class CanonicalEncoder:
    """The canonical stream as frames: ``event:`` the event's type, ``data:`` its JSON."""

    def encode(self, event: RunEvent) -> Sequence[Frame]:
        return ((event.type, event_to_json(event).decode()),)

    def fail(self, message: str) -> Sequence[Frame]:
        return ()  # the client reconnects with Last-Event-ID and misses nothing


def _position(after: int | None, last_event_id: str | None) -> int:
    """The client's position in the run: ``after``, else ``Last-Event-ID``, else the start."""
    if after is None and last_event_id:
        if not (last_event_id.isdigit() and int(last_event_id) <= MAX_SEQ):
            raise bad_request("Last-Event-ID", "expected the id of an event of this run")
        after = int(last_event_id)
    return -1 if after is None else after


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


def router(server: ServerContext, dialects: Mapping[str, Dialect]) -> APIRouter:
    api = APIRouter(tags=["runs"])
    CurrentPrincipal = Annotated[Principal, Depends(server.principal(allow_cookie=True))]
    After = Annotated[
        int | None, Query(ge=-1, le=MAX_SEQ, description="Only events with a larger seq")
    ]

    @api.get(
        EVENTS_PATH,
        summary="Replay a run's canonical events, then follow it until it ends",
        response_class=StreamingResponse,
        responses={
            200: {"content": {"text/event-stream": {}}},
            204: {"description": "The run is over and the caller has all of its events"},
            404: {"description": "No such run for this caller (unknown, expired, not yours)"},
        },
    )
    async def run_events(
        run_id: str,
        principal: CurrentPrincipal,
        after: After = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> Response:
        after = _position(after, last_event_id)
        if await _read_all(run_id, principal, after):
            return Response(status_code=204)
        events = server.runner.broker.replay(run_id, principal, after)
        return _follow(events, CanonicalEncoder(), SSE_NAMED, run_id, after)

    @api.get(
        STREAM_PATH,
        summary="Continue a run in the protocol that started it, from where the client left off",
        response_class=Response,
        responses={
            200: {"content": {"text/event-stream": {}, "application/x-ndjson": {}}},
            204: {"description": "The run is over and the caller has all of its events"},
            404: {"description": "No such run for this caller, or none this server can stream"},
        },
    )
    async def run_stream(
        run_id: str,
        principal: CurrentPrincipal,
        after: After = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> Response:
        broker = server.runner.broker
        after = _position(after, last_event_id)
        reader = await broker.reader_of(run_id, principal)
        dialect = dialects.get(str((reader or {}).get("dialect")))
        if reader is None or dialect is None:
            raise UnknownDialect(run_id)
        if await _read_all(run_id, principal, after):
            return Response(status_code=204)
        encoder, wire = dialect.stream(reader.get("options") or {})
        events = broker.replay(run_id, principal, -1)
        return _follow(events, shown_by(server, encoder), wire, run_id, after)

    async def _read_all(run_id: str, principal: Principal, after: int) -> bool:
        """Whether the run is over and the client has all of its events (204: a browser
        EventSource stops reconnecting). Answered from where the log stands now, so a client
        of a run in progress gets its response (and heartbeats) at once, not at the run's
        next event. Raises 404 for a run that is not the caller's."""
        end = await server.runner.broker.end_of(run_id, principal)
        return end.done and end.last <= after

    def _follow(
        events: AsyncGenerator[RunEvent, None],
        encoder: Encoder,
        wire: WireFormat,
        run_id: str,
        after: int,
    ) -> EventStream:
        """A reader's streaming answer, with heartbeats; its client leaving stops nothing."""
        return EventStream(
            _rest(events, encoder, after),
            encoder,
            wire,
            cancel=_not_following,
            heartbeat=server.settings.heartbeat_seconds,
            write_timeout=server.settings.write_timeout_seconds,
            headers={"X-Run-Id": run_id},
        )

    return api
