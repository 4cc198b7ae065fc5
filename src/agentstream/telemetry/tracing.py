"""OpenTelemetry traces of runs, in the GenAI semantic conventions.

A run is a span ``invoke_agent {agent}``; each model call in it ``chat {model}`` (the model the
vendor is asked for); each tool call ``execute_tool {tool}``, with the conventions' attributes
(``gen_ai.operation.name``, ``gen_ai.provider.name``, ``gen_ai.request.model``,
``gen_ai.response.model``, ``gen_ai.usage.input_tokens`` and ``output_tokens``,
``gen_ai.response.finish_reasons``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``...). The run's
span is a child of the HTTP request's (:mod:`agentstream.telemetry.http`, which continues an
incoming W3C ``traceparent``), and it is the current span while the run works, so a tool's
own spans (an instrumented HTTP client) are children of the run's.

The spans are made from the run's canonical events (:class:`RunSpans` is a
:class:`~agentstream.runs.observers.RunWatch`): nothing in the loop knows about tracing. The
run's span context travels with the run, beside its log (the ``trace`` entry of what the
broker keeps for readers on any worker, in Redis too), so a follow or a stop on another worker
is a child of the run's span (``follow_run``, ``cancel_run``), linked to that worker's own
request span: one trace, across workers.

Message and tool content (the user's message, the answer, a tool call's arguments as the
model wrote them and its result) are recorded only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is true: they are a user's data.

This module imports ``opentelemetry``; nothing imports it unless traces are on.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, asynccontextmanager
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode

from agentstream.errors import ConfigurationError
from agentstream.events import (
    RunCancelled,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunStarted,
    ToolCallArgs,
    ToolCallDelta,
    ToolCallFinished,
    TurnStarted,
    UsageEvent,
)
from agentstream.principal import Principal
from agentstream.runs.broker import RunBroker

if TYPE_CHECKING:
    from agentstream.runs.session import RunSession

__all__ = ["CAPTURE_CONTENT", "RunSpans", "Tracing", "provider_from_env"]

CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI instrumentations' variable: ``true`` records message and tool content."""

CARRIED = "trace"
"""Under which key of what the broker keeps for a run's readers its trace context travels."""

_PROVIDERS = {"openai-responses": "openai", "google": "gcp.gemini", "gemini": "gcp.gemini"}
"""Our providers' prefixes, as ``gen_ai.provider.name`` names the vendors."""

_FINISH_REASONS = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "content_filter",
    "other": "other",
}
"""Our stop reasons in the conventions' words (OpenAI's)."""


class Tracing:
    """Makes the spans of runs, follows and stops with ``tracer_provider``'s tracer (the
    global one when ``None``)."""

    def __init__(
        self, tracer_provider: trace.TracerProvider | None = None, *, content: bool | None = None
    ) -> None:
        provider = tracer_provider or trace.get_tracer_provider()
        self.provider = provider
        self.tracer = provider.get_tracer("agentstream")
        self.content = (
            (os.environ.get(CAPTURE_CONTENT) or "").strip().lower() == "true"
            if content is None
            else content
        )

    # --- a RunObserver --------------------------------------------------------------------

    def watch(self, session: RunSession) -> RunSpans:
        return RunSpans(self, session)

    # --- a run's readers and stops on any worker ------------------------------------------

    async def following(
        self,
        events: AsyncGenerator[RunEvent, None],
        run_id: str,
        principal: Principal,
        broker: RunBroker,
    ) -> AsyncGenerator[RunEvent, None]:
        """``events`` (a reader of run ``run_id``), inside a ``follow_run`` span that is a
        child of the run's span wherever the run runs, linked to this request's span."""
        async with aclosing(events):
            parent = await self._run_context(run_id, principal, broker)
            span = self.tracer.start_span(
                "follow_run",
                context=parent,
                kind=SpanKind.INTERNAL,
                attributes={"agentstream.run.id": run_id},
                links=_here(),
            )
            try:
                async for event in events:
                    yield event
            finally:
                span.end()

    @asynccontextmanager
    async def stopping(
        self, run_id: str, principal: Principal, broker: RunBroker
    ) -> AsyncIterator[Span]:
        """A ``cancel_run`` span around a stop request, a child of the run's span wherever it
        runs, linked to this request's span."""
        parent = await self._run_context(run_id, principal, broker)
        with self.tracer.start_as_current_span(
            "cancel_run",
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes={"agentstream.run.id": run_id},
            links=_here(),
        ) as span:
            yield span

    async def _run_context(
        self, run_id: str, principal: Principal, broker: RunBroker
    ) -> otel_context.Context | None:
        """The context of run ``run_id``'s span, from what its broker keeps (``None``: the
        run is not the caller's, has no trace, or cannot be reached)."""
        try:
            reader = await broker.reader_of(run_id, principal)
        except Exception:
            return None
        carried = (reader or {}).get(CARRIED)
        if not isinstance(carried, dict):
            return None
        return propagate.extract({str(k): str(v) for k, v in carried.items()})


def _here() -> list[Link]:
    """A link to the current span (the request's), if there is one."""
    current = trace.get_current_span().get_span_context()
    return [Link(current)] if current.is_valid else []


def _provider(model_id: str) -> tuple[str, str]:
    """``gen_ai.provider.name`` and the vendor's model name of ``provider:model``."""
    prefix, _, name = model_id.partition(":")
    if not name:
        return prefix, prefix
    return _PROVIDERS.get(prefix, prefix), name


class RunSpans:
    """One run's spans (see :mod:`agentstream.telemetry.tracing`): made from its events."""

    __slots__ = (
        "_arguments",
        "_chat",
        "_content",
        "deltas",
        "_model",
        "_provider",
        "_run",
        "_session",
        "_tools",
        "_tracer",
    )

    def __init__(self, tracing: Tracing, session: RunSession) -> None:
        self._tracer = tracing.tracer
        self._content = tracing.content
        self.deltas = self._content  # what the model wrote as a tool's arguments
        self._session = session
        self._provider, self._model = _provider(session.model)
        agent = session.agent_name
        attributes = self._operation("invoke_agent")
        attributes["gen_ai.agent.name"] = agent
        attributes["agentstream.run.id"] = session.run_id
        if session.conversation_id is not None:
            attributes["gen_ai.conversation.id"] = session.conversation_id
        if session.protocol is not None:
            attributes["agentstream.protocol"] = session.protocol
        if self._content and session.input.message:
            attributes["gen_ai.input.messages"] = _messages("user", session.input.message)
        # Begun in the request's context: a child of its span.
        self._run = self._tracer.start_span(
            f"invoke_agent {agent}", kind=SpanKind.INTERNAL, attributes=attributes
        )
        carried: dict[str, str] = {}
        propagate.inject(carried, context=trace.set_span_in_context(self._run))
        session.carried[CARRIED] = carried
        self._chat: Span | None = None
        self._tools: dict[str, Span] = {}
        self._arguments: dict[str, list[str]] = {}

    def event(self, event: RunEvent) -> None:
        kind = type(event)
        if kind is ToolCallDelta:
            if self._content:
                assert isinstance(event, ToolCallDelta)
                self._arguments.setdefault(event.call_id, []).append(event.delta)
            return
        if kind is TurnStarted:
            self._chat_started(event)
        elif kind is UsageEvent:
            assert isinstance(event, UsageEvent)
            self._chat_ended(event)
        elif kind is ToolCallArgs:
            assert isinstance(event, ToolCallArgs)
            self._tool_started(event)
        elif kind is ToolCallFinished:
            assert isinstance(event, ToolCallFinished)
            self._tool_ended(event)
        elif kind is RunStarted:
            # The run's span is the current one in the run's task (and the tasks it starts:
            # its tools'); the task's context is its own copy, gone when the task ends.
            otel_context.attach(trace.set_span_in_context(self._run))
            assert isinstance(event, RunStarted)
            self._provider, self._model = _provider(event.model or self._session.model)
        elif kind is RunCompleted or kind is RunFailed or kind is RunCancelled:
            self._run_ended(event)

    def _operation(self, name: str) -> dict[str, Any]:
        """The attributes a run's span and its model calls' share."""
        return {
            "gen_ai.operation.name": name,
            "gen_ai.provider.name": self._provider,
            "gen_ai.request.model": self._model,
        }

    def _child(self, name: str, kind: SpanKind, attributes: dict[str, Any]) -> Span:
        return self._tracer.start_span(
            name, context=trace.set_span_in_context(self._run), kind=kind, attributes=attributes
        )

    def _chat_started(self, event: RunEvent) -> None:
        run_input = self._session.input
        attributes = self._operation("chat")
        if run_input.max_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = run_input.max_tokens
        if run_input.temperature is not None:
            attributes["gen_ai.request.temperature"] = run_input.temperature
        self._chat = self._child(f"chat {self._model}", SpanKind.CLIENT, attributes)

    def _chat_ended(self, event: UsageEvent) -> None:
        span, self._chat = self._chat, None
        if span is None:
            return
        usage = event.usage
        span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
        if event.model:
            span.set_attribute("gen_ai.response.model", event.model)
        if event.stop_reason is not None:
            reason = _FINISH_REASONS.get(event.stop_reason, event.stop_reason)
            span.set_attribute("gen_ai.response.finish_reasons", [reason])
        span.end()

    def _tool_started(self, event: ToolCallArgs) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.name,
            "gen_ai.tool.call.id": event.call_id,
            "gen_ai.tool.type": "function",
        }
        written = self._arguments.pop(event.call_id, None)
        if written is not None:  # what the model wrote (not what hooks added to it)
            attributes["gen_ai.tool.call.arguments"] = "".join(written)
        self._tools[event.call_id] = self._child(
            f"execute_tool {event.name}", SpanKind.INTERNAL, attributes
        )

    def _tool_ended(self, event: ToolCallFinished) -> None:
        span = self._tools.pop(event.call_id, None)
        if span is None:
            return
        span.set_attribute("agentstream.tool.outcome", event.outcome)
        if self._content:
            span.set_attribute("gen_ai.tool.call.result", event.result)
        if event.is_error:
            error = event.error.kind if event.error is not None else event.outcome
            span.set_attribute("error.type", error)
            span.set_status(Status(StatusCode.ERROR, event.error.message if event.error else None))
        span.end()

    def _run_ended(self, event: RunEvent) -> None:
        """The run's last event: spans still open end with it (a model call or tool call the
        run was stopped in), as errors of the run's kind."""
        error: str | None = None
        if isinstance(event, RunFailed):
            error = event.kind
            self._run.set_status(Status(StatusCode.ERROR, event.message))
            self._run.set_attribute("error.type", error)
        elif isinstance(event, RunCancelled):
            error = "cancelled"
            self._run.set_attribute("agentstream.run.cancelled", event.reason)
        elif isinstance(event, RunCompleted):
            reason = _FINISH_REASONS.get(event.stop_reason, event.stop_reason)
            self._run.set_attribute("gen_ai.response.finish_reasons", [reason])
            if self._content:
                self._run.set_attribute(
                    "gen_ai.output.messages", _messages("assistant", event.message)
                )
        self._close_open(error or "interrupted")

    def _close_open(self, error: str) -> None:
        """End the model call and tool calls still open, as errors of kind ``error``."""
        open_spans = [*self._tools.values(), *([self._chat] if self._chat is not None else [])]
        for span in open_spans:
            span.set_attribute("error.type", error)
            span.set_status(Status(StatusCode.ERROR))
            span.end()
        self._tools.clear()
        self._chat = None

    def ended(self, session: RunSession) -> None:
        used = session.usage
        run = self._run
        run.set_attribute("gen_ai.usage.input_tokens", used.usage.input_tokens)
        run.set_attribute("gen_ai.usage.output_tokens", used.usage.output_tokens)
        run.set_attribute("agentstream.usage.estimated", used.estimated)
        if used.cost_usd is not None:
            run.set_attribute("agentstream.cost_usd", used.cost_usd)
        if session.status is not None:
            run.set_attribute("agentstream.run.status", session.status)
        self._close_open("interrupted")  # the run's task ended before its last event
        run.end()


def _messages(role: str, text: str) -> str:
    """A message in the conventions' JSON form (``gen_ai.input.messages``)."""
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def provider_from_env() -> Any:
    """An SDK tracer provider configured by the ``OTEL_*`` variables (the resource from
    ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES``, service ``agentstream`` unless
    named; exporters from ``OTEL_TRACES_EXPORTER``: ``otlp``, the default, over HTTP with
    protobuf, and ``console``; the OTLP exporter's endpoint, headers and timeout from its own
    variables; batching and sampling from theirs). Raises
    :class:`~agentstream.errors.ConfigurationError` when the ``otel`` extra is not installed
    or an exporter cannot be made."""
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
    except ImportError:
        raise ConfigurationError(
            "traces need the OpenTelemetry SDK: pip install 'agentstream[otel]'"
        ) from None
    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "agentstream"}))
    provider = TracerProvider(resource=resource)
    names = os.environ.get("OTEL_TRACES_EXPORTER") or "otlp"
    for name in (n.strip().lower() for n in names.split(",") if n.strip()):
        if name == "none":
            continue
        if name == "console":
            provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
        elif name == "otlp":
            provider.add_span_processor(BatchSpanProcessor(_otlp_exporter()))
        else:
            raise ConfigurationError(
                f"OTEL_TRACES_EXPORTER: {name!r} is not an exporter agentstream makes "
                "(otlp, console, none)"
            )
    return provider


def _otlp_exporter() -> Any:
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    if protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found]
                OTLPSpanExporter,
            )
        except ImportError:
            raise ConfigurationError(
                "OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs "
                "opentelemetry-exporter-otlp-proto-grpc installed (agentstream[otel] brings "
                "the http/protobuf exporter)"
            ) from None
        return OTLPSpanExporter()
    if protocol != "http/protobuf":
        raise ConfigurationError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL: {protocol!r} is not supported (http/protobuf, grpc)"
        )
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HttpExporter,
        )
    except ImportError:
        raise ConfigurationError(
            "the OTLP exporter is not installed: pip install 'agentstream[otel]'"
        ) from None
    return HttpExporter()
