"""The HTTP side of traces and metrics: a server span per request, and the streams open.

:class:`ObservedRequests` is an ASGI middleware the app puts on when traces or metrics are on.
With traces, each HTTP request is a ``SERVER`` span (``{method} {route}``, with the HTTP
semantic conventions' attributes) continuing the trace of an incoming W3C ``traceparent``
(through the global propagator: ``OTEL_PROPAGATORS``), and current while the app answers, so
a run's span is its child. With metrics, a response that streams (SSE or NDJSON) counts as an
open stream until it ends.

It sees a response's start and nothing of a streamed body: the chunks of a stream go to the
server's ``send`` directly (:data:`~agentstream.server.sse.SERVER_SEND`), so a stream costs it
one span, not one per chunk. A request ends when the app returns, that is when its last chunk
is sent.

Why not FastAPI's own OpenTelemetry support (``FastAPI(telemetry=...)``), which makes the same
span: in process, it cost about 0.22 ms of CPU per request on this machine, against about
0.11 ms for this one, and a run's start is where a burst of new chats waits. The app turns FastAPI's
off, so a process whose global tracer provider is configured does not get two server spans
per request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from agentstream.telemetry.metrics import Metrics
    from agentstream.telemetry.tracing import Tracing

__all__ = ["ObservedRequests"]

_STREAMED = (b"text/event-stream", b"application/x-ndjson")


class ObservedRequests:
    """Traces and counts the app's HTTP requests (see :mod:`agentstream.telemetry.http`)."""

    def __init__(
        self, app: ASGIApp, *, tracing: Tracing | None = None, metrics: Metrics | None = None
    ) -> None:
        self.app = app
        self.tracing = tracing
        self.streams = metrics.streams_open if metrics is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        streams = self.streams
        status = 500
        streaming = False

        async def observed(message: Message) -> None:
            nonlocal status, streaming
            if message["type"] == "http.response.start":
                status = message["status"]
                if streams is not None and _streamed(message):
                    streaming = True
                    streams.inc()
            await send(message)

        if self.tracing is None:
            try:
                await self.app(scope, receive, observed)
            finally:
                if streaming and streams is not None:
                    streams.dec()
            return
        from opentelemetry import context, propagate, trace
        from opentelemetry.trace import SpanKind, Status, StatusCode

        method = scope.get("method", "GET")
        carrier = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        span = self.tracing.tracer.start_span(
            method,
            context=propagate.extract(carrier),
            kind=SpanKind.SERVER,
            attributes=_request_attributes(scope, method),
        )
        token = context.attach(trace.set_span_in_context(span))
        try:
            await self.app(scope, receive, observed)
        except BaseException as exc:
            span.record_exception(exc)
            raise
        finally:
            if streaming and streams is not None:
                streams.dec()
            route = getattr(scope.get("route"), "path", None)
            if route:
                span.set_attribute("http.route", route)
                span.update_name(f"{method} {route}")
            span.set_attribute("http.response.status_code", status)
            if status >= 500:
                span.set_status(Status(StatusCode.ERROR))
                span.set_attribute("error.type", str(status))
            span.end()
            context.detach(token)


def _streamed(message: Message) -> bool:
    for name, value in message.get("headers", ()):
        if name.lower() == b"content-type":
            return bool(value.startswith(_STREAMED))
    return False


def _request_attributes(scope: Scope, method: str) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "http.request.method": method,
        "url.path": scope.get("path", ""),
        "url.scheme": scope.get("scheme", "http"),
    }
    server = scope.get("server")
    if server:
        attributes["server.address"] = str(server[0])
        if server[1] is not None:
            attributes["server.port"] = server[1]
    client = scope.get("client")
    if client:
        attributes["client.address"] = str(client[0])
    return attributes
