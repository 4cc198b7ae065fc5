"""One streaming response for every dialect: frames out as they are produced, heartbeats,
and a client disconnect that does to the run what the stream's policy says.

A dialect's encoder turns canonical events into *frames*, ``(event name, JSON text)`` pairs;
a :class:`WireFormat` turns frames into bytes: named SSE events (workflow assistant, data
playground), ``data:``-only SSE (chat tray, ops agent) or NDJSON ``<eventName>{json}`` lines
(data playground). :class:`EventStream` is a small ASGI response of our own rather than a
general-purpose SSE library: the per-event path is one encoder call and one ``send`` with no
per-frame task, queue or object model, which is what keeps the server's CPU per streamed delta
near a bare endpoint's (see ``bench/stream_overhead.py``).

Lifecycle of one stream:

* headers ``Content-Type: text/event-stream`` (or ``application/x-ndjson``),
  ``Cache-Control: no-cache``, ``X-Accel-Buffering: no``; no timeout of our own, however
  long the model takes;
* each event's frames are sent as soon as they are encoded: once the stream has caught up
  with its run, straight from the run's task (a handoff); otherwise by the stream's own task
  when nothing else is being written; events that come in one burst leave in one write
  (see :class:`EventStream`);
* a heartbeat (an SSE comment, or a blank NDJSON line) after ``heartbeat`` seconds without
  output keeps proxies from closing an idle connection while a tool works;
* a client disconnect calls the stream's ``cancel`` with ``client_disconnected``: under the
  ``cancel`` policy that stops the run through its cancel token (the loop closes the provider
  stream, cancels running tools and records the partial answer), under ``detach`` it leaves
  the run going to its end and the store. If the stream has not ended
  :data:`~agentstream.runs.session.DISCONNECT_GRACE_SECONDS` later, its own task is cancelled
  as a last resort; a client that stays connected but reads nothing for the write timeout is
  treated the same way (``client_stalled``);
* an exception from the event source after the headers went out becomes the dialect's error
  frame (:meth:`Encoder.fail`), since the status code can no longer change.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Protocol

from starlette.background import BackgroundTask
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from agentstream.events import TERMINAL_EVENTS, RunEvent
from agentstream.runs.broker import Handoff
from agentstream.runs.session import DISCONNECT_GRACE_SECONDS
from agentstream.server.eager import start_eagerly

__all__ = [
    "NDJSON",
    "SERVER_SEND",
    "SSE_DATA",
    "SSE_NAMED",
    "Encoder",
    "EventStream",
    "Frame",
    "WireFormat",
]

log = logging.getLogger("agentstream.server")

Frame = tuple[str, str]
"""An encoded event: its name and its JSON text."""

SERVER_SEND = "agentstream.server_send"
"""The scope key under which the app keeps the ASGI server's ``send`` (see
:mod:`agentstream.server.app`): a stream's chunks go to it directly, past the app's own
middleware, which only looks at a response's start."""


class Encoder(Protocol):
    """A dialect's encoder: canonical events in, frames out. Pure apart from its own state."""

    def encode(self, event: RunEvent) -> Sequence[Frame]: ...

    def fail(self, message: str) -> Sequence[Frame]:
        """Frames that report a failure the event stream itself could not (the source broke)."""
        ...


@dataclass(frozen=True, slots=True)
class WireFormat:
    """How frames become bytes. ``render(frames, seq)`` gets the ``seq`` of the canonical event
    the frames encode (``-1``: frames of no event, such as a failure report); the SSE formats
    put it on an ``id:`` line so a client resumes from the last event it saw."""

    media_type: str
    render: Callable[[Sequence[Frame], int], bytes]
    heartbeat: bytes


def _sse_named(frames: Sequence[Frame], seq: int) -> bytes:
    # One ``id:`` per event, on its last frame: a client that resumes from it has every frame
    # of the event (frames of one event leave in one write).
    if len(frames) == 1:
        name, data = frames[0]
        if seq < 0:
            return f"event: {name}\ndata: {data}\n\n".encode()
        return f"id: {seq}\nevent: {name}\ndata: {data}\n\n".encode()
    body = "".join(f"event: {name}\ndata: {data}\n\n" for name, data in frames[:-1])
    return (body + _sse_named(frames[-1:], seq).decode()).encode()


def _sse_data(frames: Sequence[Frame], seq: int) -> bytes:
    if len(frames) == 1:
        if seq < 0:
            return f"data: {frames[0][1]}\n\n".encode()
        return f"id: {seq}\ndata: {frames[0][1]}\n\n".encode()
    body = "".join(f"data: {data}\n\n" for _, data in frames[:-1])
    return (body + _sse_data(frames[-1:], seq).decode()).encode()


def _ndjson(frames: Sequence[Frame], seq: int) -> bytes:
    # NDJSON has no place for an id: a client resumes with ``?after=`` (the run's events
    # endpoint tells the positions).
    return "".join(f"{name}{data}\n" for name, data in frames).encode()


SSE_NAMED = WireFormat("text/event-stream", _sse_named, b": ping\n\n")
"""``id: <seq>`` + ``event: <name>`` + ``data: <json>`` (workflow assistant, data playground)."""
SSE_DATA = WireFormat("text/event-stream", _sse_data, b": ping\n\n")
"""``id: <seq>`` + ``data: <json>`` with the type inside the JSON (chat tray, ops agent)."""
NDJSON = WireFormat("application/x-ndjson", _ndjson, b"\n")
"""``<eventName>{json}`` lines (data playground, when the client accepts
``application/x-ndjson``)."""


def _nothing_waiting(seq: int) -> bool:
    return False


MAX_PENDING_FRAMES = 256
"""Encoded frames the stream may hold while the client is slow to read; past this the run
waits (backpressure) instead of buffering without bound."""


class EventStream(Response):
    """Streams ``events`` through ``encoder`` in ``wire`` format; ``cancel(reason)`` stops the
    run that produces them.

    With a ``handoff`` (:class:`~agentstream.runs.broker.Handoff`), a stream that has caught
    up with its run is handed each live event by the run's task as it is published
    (:meth:`_take`): encoded there and written from a callback once that task yields, so a
    paced delta crosses one task switch (the run's) and a burst leaves in one write. The
    stream's own task then only wakes for the run's last event, or when a write has to wait
    for a slow client: it reads what followed from the log, as a reader without a handoff
    always does.

    Reading the log, the stream's own task encodes events and, when nothing is being
    written, writes each one itself, at once. When several events are already waiting
    (``ready(seq)`` says events after ``seq`` are there: a burst from the model, a model
    faster than the network, a reader behind the run's log) or a write is still in progress
    (a slow client), frames are queued for a writer task instead, which sends everything
    queued in one write, one system call. Either way nothing waits for more output: every
    frame is flushed as soon as the run has produced it.
    """

    def __init__(
        self,
        events: AsyncGenerator[RunEvent, None],
        encoder: Encoder,
        wire: WireFormat,
        *,
        cancel: Callable[[str], None],
        heartbeat: float = 15.0,
        write_timeout: float = 60.0,
        headers: dict[str, str] | None = None,
        ready: Callable[[int], bool] | None = None,
        handoff: Handoff | None = None,
    ) -> None:
        self.status_code = 200
        self.media_type = wire.media_type
        self.background: BackgroundTask | None = None
        self._events = events
        self._encoder = encoder
        self._wire = wire
        self._cancel = cancel
        self._ready = ready or _nothing_waiting
        self._heartbeat = heartbeat
        self._write_timeout = write_timeout
        self._sending_since: float | None = None
        self._sender: asyncio.Task[object] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._ping: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._pending: list[bytes] = []
        self._wake = asyncio.Event()
        self._flushed = asyncio.Event()
        self._closing = False
        self._complete = False
        self._last_output = 0.0
        self._disconnected = False
        self._abandoned = False
        self._ending = False
        """Ended by the server before the run's end (:meth:`end`)."""
        self._task: asyncio.Task[object] | None = None
        self._stalled = False
        self._send: Send | None = None
        self._in_flight: asyncio.Task[None] | None = None
        """A write the run's task started that had to wait for the client (see :meth:`_take`)."""
        self._flush_soon: asyncio.Handle | None = None
        self._broken: Exception | None = None
        self._started = False
        """Frames of an event have been written (or started to be)."""
        if handoff is not None:
            handoff.take = self._take
        raw = {
            "content-type": wire.media_type,
            "cache-control": "no-cache",
            "x-accel-buffering": "no",
            **{k.lower(): v for k, v in (headers or {}).items()},
        }
        self.raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in raw.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        send = self._send = scope.get(SERVER_SEND, send)
        loop = asyncio.get_running_loop()
        self._last_output = loop.time()
        stream_task = self._task = asyncio.current_task()
        assert stream_task is not None
        helpers = [asyncio.create_task(self._watch_disconnect(receive, stream_task))]
        # Heartbeats and the stall check are one timer, not tasks: a stream costs one helper
        # task (the disconnect watch, which must await ``receive``) however long it lasts.
        self._timer = loop.call_at(self._next_tick(loop.time()), self._tick, send)
        try:
            await self._pump(send)
            self._closing = True
            if self._writer is None or self._writer.done():
                await self._flush(send)  # the end of the body, from here
            else:
                self._wake.set()
                await asyncio.wait((self._writer,))  # a stalled writer is cancelled, not failed
        except asyncio.CancelledError:
            if not (self._abandoned or self._ending):
                raise
            stream_task.uncancel()
            if self._abandoned:
                log.warning(
                    "run did not stop within %.1fs of the client leaving",
                    DISCONNECT_GRACE_SECONDS,
                )
            elif self._writer is None or self._writer.done():
                self._closing = True
                await self._flush(send)  # what it has, then the end of the body
        finally:
            if self._timer is not None:
                self._timer.cancel()
            if self._flush_soon is not None:
                self._flush_soon.cancel()
            for helper in (self._writer, self._ping, self._in_flight):
                if helper is not None:
                    helpers.append(helper)
            for helper in helpers:
                helper.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)

    def end(self) -> None:
        """End the stream now, where it stands, before its run's end: its server is stopping
        (:mod:`agentstream.server.drain`). The client sees the body end without the run's
        last event and follows the run again, from the last event it has, at another
        worker."""
        task = self._task
        if task is not None and not task.done() and not self._complete:
            self._ending = True
            task.cancel()

    async def _pump(self, send: Send) -> None:
        encode, render, ready = self._encoder.encode, self._wire.render, self._ready
        pending, wake, flushed = self._pending, self._wake, self._flushed
        try:
            async with aclosing(self._events) as events:
                async for event in events:
                    if self._broken is not None:
                        raise self._broken  # the encoder failed on an event handed over
                    frames = encode(event)
                    if not frames or self._disconnected:
                        continue
                    idle = not pending and self._sending_since is None
                    pending.append(render(frames, event.seq))
                    if idle and not ready(event.seq):
                        await self._flush(send)
                        continue
                    if self._writer is None:
                        self._writer = asyncio.create_task(self._write(send))
                    wake.set()
                    if len(pending) >= MAX_PENDING_FRAMES:
                        flushed.clear()
                        await flushed.wait()
        except Exception:
            log.exception("the event stream failed after the response started")
            pending.append(render(self._encoder.fail("The server failed while streaming."), -1))
            wake.set()

    def _take(self, event: RunEvent) -> bool:
        """A live event handed over by the run's task as it is published (the stream has
        caught up with the run's log; see :class:`~agentstream.runs.broker.Handoff`).

        Its frames are written from a callback once the run's task yields, so a burst of
        events still leaves in one write, and the event never wakes this stream's task: a
        paced delta crosses one task switch, the run's. Declined (the stream's task reads
        it from the log instead) while a write is in progress or frames wait for the writer,
        and for the last event, which ends the stream."""
        if isinstance(event, TERMINAL_EVENTS) or self._closing or self._broken is not None:
            return False
        if self._sending_since is not None or (self._pending and self._flush_soon is None):
            return False
        if self._disconnected:
            return True  # dropped, as the stream's task would
        try:
            frames = self._encoder.encode(event)
        except Exception as exc:
            self._broken = exc  # reported by the stream's task, which reads this event again
            return False
        if frames:
            self._pending.append(self._wire.render(frames, event.seq))
            if not self._started:
                # The first frames leave at once: they tell the user the answer has begun,
                # and waiting for the loop's next turn is a wait under load.
                self._started = True
                self._write_now()
            elif self._flush_soon is None:
                self._flush_soon = asyncio.get_running_loop().call_soon(self._write_now)
        return True

    def _write_now(self) -> None:
        """Write what :meth:`_take` queued, from a callback: the write is started here and,
        if the client is slow to read, finishes in a task of its own."""
        self._flush_soon = None
        pending, send = self._pending, self._send
        if not pending or self._sending_since is not None or self._disconnected or send is None:
            return  # the stream's own task writes it (or nothing is to be written)
        body = pending[0] if len(pending) == 1 else b"".join(pending)
        pending.clear()
        loop = asyncio.get_running_loop()
        self._last_output = loop.time()
        message: Message = {"type": "http.response.body", "body": body, "more_body": True}
        try:
            waiting = start_eagerly(send(message))
        except Exception as exc:
            self._client_left(exc)
            return
        if waiting is not None:
            self._sending_since, self._sender = self._last_output, waiting
            self._in_flight = waiting
            waiting.add_done_callback(self._written)

    def _written(self, task: asyncio.Task[None]) -> None:
        """A write that had to wait for the client has ended."""
        self._sending_since = self._sender = None
        if task.cancelled():
            return  # the stall watcher gave up on it
        error = task.exception()
        if isinstance(error, Exception):
            self._client_left(error)

    def _client_left(self, error: Exception) -> None:
        """A write failed: the connection broke under us (``OSError``), the same as a client
        that left; anything else is logged, and the stream stops all the same."""
        if not isinstance(error, OSError):
            log.error("writing the stream failed", exc_info=error)
        self._disconnected = True
        self._cancel("client_disconnected")

    async def _flush(self, send: Send) -> None:
        """Send what is pending (with the end of the body once closing) from this task."""
        in_flight = self._in_flight
        if in_flight is not None and not in_flight.done():
            await asyncio.wait((in_flight,))  # a write handed-over events started goes first
        last = self._closing
        pending = self._pending
        body = pending[0] if len(pending) == 1 else b"".join(pending)
        pending.clear()
        if not (body or last) or self._disconnected:
            return
        loop = asyncio.get_running_loop()
        self._last_output = loop.time()
        self._started = True
        self._complete = last  # before the await: no heartbeat after the last write
        self._sending_since = self._last_output
        self._sender = asyncio.current_task()
        try:
            await send({"type": "http.response.body", "body": body, "more_body": not last})
        except OSError as exc:
            self._client_left(exc)
        except asyncio.CancelledError:
            # The stall watcher gave up on this write; the stream goes on without output
            # while its run winds down.
            if not self._stalled or self._sender is not asyncio.current_task():
                raise
            current = asyncio.current_task()
            assert current is not None
            current.uncancel()
        finally:
            self._sending_since = None
            self._sender = None

    async def _write(self, send: Send) -> None:
        pending, wake, flushed = self._pending, self._wake, self._flushed
        while True:
            await wake.wait()
            wake.clear()
            last = self._closing
            if pending or last:
                await self._flush(send)
            flushed.set()
            if last or self._stalled:
                return

    def _next_tick(self, now: float) -> float:
        """When the timer looks next: the heartbeat's due time, and a quarter of the write
        timeout at the latest while a write may be blocked."""
        ticks = []
        if self._heartbeat > 0:
            ticks.append(max(self._last_output + self._heartbeat, now + 0.01))
        if self._write_timeout > 0:
            ticks.append(now + self._write_timeout / 4)
        return min(ticks) if ticks else now + 3600.0

    def _tick(self, send: Send) -> None:
        """The stream's timer: a client that stays connected but stops reading blocks every
        write; after ``write_timeout`` seconds of one blocked write it is treated as gone, so
        its run stops instead of waiting forever. (The workflow assistant protocol wants no
        timeout on a stream's length; this bounds a write that cannot make progress.) And
        after ``heartbeat`` seconds without output, a ping keeps proxies from closing an idle
        connection while a tool works. Checked from a timer rather than with a timeout
        around each write, which would cost the per-event path."""
        self._timer = None
        if self._disconnected or self._complete:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        since, sender = self._sending_since, self._sender
        if (
            self._write_timeout > 0
            and since is not None
            and sender is not None
            and now - since > self._write_timeout
        ):
            log.warning("a client read nothing for %gs; stopping its run", self._write_timeout)
            self._disconnected = True
            self._stalled = True
            sender.cancel()  # the blocked write gives up (see :meth:`_flush`)
            self._flushed.set()  # release the run if it waits on backpressure
            self._cancel("client_stalled")
            return
        if (
            self._heartbeat > 0
            and now - self._last_output >= self._heartbeat
            and (self._ping is None or self._ping.done())
        ):
            self._last_output = now
            self._ping = loop.create_task(self._send_ping(send))
        self._timer = loop.call_at(self._next_tick(now), self._tick, send)

    async def _watch_disconnect(self, receive: Receive, stream_task: asyncio.Task[object]) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        self._disconnected = True
        self._cancel("client_disconnected")
        await asyncio.sleep(DISCONNECT_GRACE_SECONDS)
        self._abandoned = True
        stream_task.cancel()

    async def _send_ping(self, send: Send) -> None:
        # A task of its own (started only when a ping is due) so a stream blocked on a slow
        # tool still pings. Each ASGI ``send`` is written to the transport whole before it
        # awaits, so a ping never splits a frame.
        with contextlib.suppress(OSError):
            await send(
                {"type": "http.response.body", "body": self._wire.heartbeat, "more_body": True}
            )
