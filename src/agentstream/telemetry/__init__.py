"""Traces (OpenTelemetry) and metrics (Prometheus) of a running server.

Both watch the one stream of canonical events each run makes
(:mod:`agentstream.runs.observers`), and a few things that are not events: the HTTP request
around a run (:mod:`.http`), the store's commits and whether Redis answers. Both are off
unless asked for: metrics with ``AGENTSTREAM_METRICS=on`` (or ``AGENTSTREAM_METRICS_PORT``),
traces with OpenTelemetry's own ``OTEL_*`` variables (an exporter or an OTLP endpoint) or a
tracer provider given in code (:class:`~agentstream.server.config.ServerConfig`). What is off
costs nothing: this package's modules import ``prometheus_client`` and ``opentelemetry``, and
none of them is imported unless its part is on (:func:`telemetry` imports what it needs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentstream.runs.observers import RunObserver

if TYPE_CHECKING:
    from agentstream.telemetry.metrics import Metrics
    from agentstream.telemetry.tracing import Tracing

__all__ = ["Telemetry", "telemetry"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Telemetry:
    """What of traces and metrics is on for one app."""

    metrics: Metrics | None = None
    tracing: Tracing | None = None
    owned_provider: Any = None
    """A tracer provider made from the environment, shut down (its spans flushed) with the
    app."""

    @property
    def observers(self) -> list[RunObserver]:
        return [part for part in (self.metrics, self.tracing) if part is not None]

    def close(self) -> None:
        if self.owned_provider is not None:
            self.owned_provider.shutdown()


def telemetry(*, metrics: bool, tracing: bool, tracer_provider: Any = None) -> Telemetry | None:
    """The parts asked for (``None``: neither). ``tracing`` makes a tracer provider from the
    ``OTEL_*`` variables unless ``tracer_provider`` is given or the process has configured
    OpenTelemetry's global one already (an ``opentelemetry-instrument`` run)."""
    found_metrics = found_tracing = owned = None
    if metrics:
        from agentstream.telemetry.metrics import Metrics

        found_metrics = Metrics()
    if tracing or tracer_provider is not None:
        from opentelemetry import trace

        from agentstream.telemetry.tracing import Tracing, provider_from_env

        if tracer_provider is None and isinstance(
            trace.get_tracer_provider(), trace.ProxyTracerProvider
        ):
            tracer_provider = owned = provider_from_env()
        found_tracing = Tracing(tracer_provider)
    if found_metrics is None and found_tracing is None:
        return None
    return Telemetry(metrics=found_metrics, tracing=found_tracing, owned_provider=owned)
