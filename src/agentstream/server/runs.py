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

from collections.abc import Mapping, Sequence
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query
from starlette.responses import Response, StreamingResponse

from agentstream.errors import UnknownDialect
from agentstream.events import RunEvent, event_to_json
from agentstream.principal import Principal
from agentstream.server.dialects.base import continue_stream, follow, read_all
from agentstream.server.dialects.declaration import Dialect
from agentstream.server.errors import bad_request
from agentstream.server.sse import SSE_NAMED, Frame
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
        if await read_all(server, run_id, principal, after):
            return Response(status_code=204)
        events = server.runner.broker.replay(run_id, principal, after)
        return follow(server, events, CanonicalEncoder(), SSE_NAMED, run_id, principal, after)

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
        return await continue_stream(
            server, run_id, principal, after, dialect, reader.get("options") or {}
        )

    return api
