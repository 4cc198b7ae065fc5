"""``GET /api/runs/{run_id}/events``: a run's canonical events, replayed and then followed.

Every dialect streams one run to one client. This endpoint serves the canonical stream itself
to the run's owner, from any worker (the broker holds it: in process, or in Redis): a client
that lost its connection catches up from the last event it saw, a second tab follows a run in
progress, and an operator can see exactly what a run produced. Frames are standard SSE with
``id: <seq>`` so a browser ``EventSource`` resumes by itself with ``Last-Event-ID``; a quiet
run (a long tool call) sends the same heartbeat comments as the protocol streams, so a proxy
does not close the follow.

Reference: ``docs/protocols/runs.md``.
"""

# No ``from __future__ import annotations``: FastAPI reads the route annotations at runtime.

import asyncio
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query
from starlette.responses import Response, StreamingResponse

from agentstream.events import RunEvent, event_to_json
from agentstream.principal import Principal
from agentstream.runs import BrokerUnavailable, RunNotFound
from agentstream.server.context import ServerContext
from agentstream.server.errors import ApiError, bad_request
from agentstream.server.sse import SSE_NAMED

__all__ = ["EVENTS_PATH", "router"]

EVENTS_PATH = "/api/runs/{run_id}/events"
MAX_SEQ = 2**53 - 1
"""The largest event position a client may name (a run never gets near it); larger numbers
are a 400 rather than an id Redis refuses."""


def _frame(event: RunEvent) -> bytes:
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (
        event.seq,
        event.type.encode(),
        event_to_json(event),
    )


def router(server: ServerContext) -> APIRouter:
    api = APIRouter(tags=["runs"])
    CurrentPrincipal = Annotated[Principal, Depends(server.principal(allow_cookie=True))]

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
        after: Annotated[
            int | None, Query(ge=-1, le=MAX_SEQ, description="Only events with a larger seq")
        ] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> Response:
        broker = server.runner.broker
        heartbeat = server.settings.heartbeat_seconds
        if broker is None:
            raise ApiError(404, "Run not found")
        if after is None and last_event_id:
            if not (last_event_id.isdigit() and int(last_event_id) <= MAX_SEQ):
                raise bad_request("Last-Event-ID", "expected the id of an event of this run")
            after = int(last_event_id)
        if after is None:
            after = -1
        events = broker.replay(run_id, principal, after)
        try:
            first = await anext(events)  # ownership is checked before the response starts
        except RunNotFound:
            raise ApiError(404, "Run not found") from None
        except StopAsyncIteration:
            first = None

        if first is None:
            # Nothing after ``after`` and the run is over: 204 tells a browser EventSource
            # to stop reconnecting.
            return Response(status_code=204)

        async def frames() -> AsyncIterator[bytes]:
            # The events are read by a task of their own, so waiting for the next one can time
            # out into a heartbeat without cancelling the broker's reader in the middle.
            queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=64)

            async def pump() -> None:
                try:
                    async with aclosing(events):
                        async for event in events:
                            await queue.put(_frame(event))
                except BrokerUnavailable:
                    pass  # the client reconnects with Last-Event-ID once Redis is back
                await queue.put(None)

            reader = asyncio.create_task(pump(), name=f"follow:{run_id}")
            try:
                yield _frame(first)
                while True:
                    try:
                        frame = await asyncio.wait_for(queue.get(), heartbeat)
                    except TimeoutError:
                        if reader.done():  # it failed: end the stream, the client resumes
                            return
                        yield SSE_NAMED.heartbeat
                        continue
                    if frame is None:
                        return
                    yield frame
            finally:
                reader.cancel()
                # Its own failure (logged by the broker) or our cancellation: either way done.
                await asyncio.gather(reader, return_exceptions=True)

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(frames(), media_type="text/event-stream", headers=headers)

    return api
