"""Prometheus metrics: how loaded the service is, how fast it answers, what it spends.

:class:`Metrics` holds the server's metrics and watches each run as a
:class:`~agentstream.runs.observers.RunObserver` (runs by protocol, model and how they ended,
runs going, time to the first event and to the model's first token, tokens and cost by
model, tool calls by tool and outcome with their durations, provider errors by kind), beside
the few figures that are not a run's events: streams open (:mod:`agentstream.telemetry.http`),
the store's commit latency and whether Redis answers (hooks of theirs, set by
:meth:`Metrics.attach`).

With several worker processes each counts its own; the official client's multiprocess mode
sums them: every process writes its values to files in ``PROMETHEUS_MULTIPROC_DIR`` and
whoever serves ``/metrics`` reads them all. ``agentstream serve --workers N`` makes that
directory, names it to its workers, marks the gauges of workers that died and removes it when
it stops (:mod:`agentstream.telemetry.multiprocess`); under another supervisor, set the
variable yourself. Without it, the process's own registry is served.

This module imports ``prometheus_client``; nothing imports this module unless metrics are on.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, get_args

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector

from agentstream.errors import ErrorKind
from agentstream.events import (
    PartStarted,
    RunEvent,
    RunFailed,
    RunStarted,
    ToolCallFinished,
)
from agentstream.telemetry.multiprocess import MULTIPROC_DIR

if TYPE_CHECKING:
    from agentstream.runs.session import RunSession

__all__ = ["CONTENT_TYPE_LATEST", "MULTIPROC_DIR", "Metrics", "RunMetrics", "shared_registry"]


_PROVIDER_ERRORS: frozenset[str] = frozenset(get_args(ErrorKind))
"""The kinds of a failed run that are a provider's (:data:`~agentstream.errors.ErrorKind`)."""

FIRST_EVENT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
FIRST_TOKEN_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
TOOL_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
COMMIT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)

OTHER_TOOL = "other"
"""The tool label of a call of a tool the server does not declare: a frontend tool (whose
name is the client's choice) or a name the model made up. Labels stay a bounded set."""


class Metrics:
    """The server's metrics, in a registry of their own (several apps in one process, as in
    tests, keep theirs apart), and a :class:`~agentstream.runs.observers.RunObserver`."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.runs_started = Counter(
            "agentstream_runs_started",
            "Runs started, by protocol and model",
            ["protocol", "model"],
            registry=r,
        )
        self.runs_finished = Counter(
            "agentstream_runs_finished",
            "Runs ended, by protocol, model and status (completed, failed, cancelled)",
            ["protocol", "model", "status"],
            registry=r,
        )
        self.runs_active = Gauge(
            "agentstream_runs_active", "Runs going", registry=r, multiprocess_mode="livesum"
        )
        self.streams_open = Gauge(
            "agentstream_streams_open",
            "Streamed responses open",
            registry=r,
            multiprocess_mode="livesum",
        )
        self.first_event = Histogram(
            "agentstream_time_to_first_event_seconds",
            "From a run's request to its first event, by protocol",
            ["protocol"],
            buckets=FIRST_EVENT_BUCKETS,
            registry=r,
        )
        self.first_token = Histogram(
            "agentstream_time_to_first_token_seconds",
            "From a run's request to the model's first text or reasoning, by model",
            ["model"],
            buckets=FIRST_TOKEN_BUCKETS,
            registry=r,
        )
        self.tokens = Counter(
            "agentstream_tokens",
            "Tokens of ended runs by model and type (input, output), estimates included",
            ["model", "type"],
            registry=r,
        )
        self.cost = Counter(
            "agentstream_cost_usd", "US dollars of ended runs, by model", ["model"], registry=r
        )
        self.tool_calls = Counter(
            "agentstream_tool_calls",
            "Tool calls ended, by tool and outcome (ok, error, interrupted, denied)",
            ["tool", "outcome"],
            registry=r,
        )
        self.tool_duration = Histogram(
            "agentstream_tool_call_duration_seconds",
            "How long tool calls took, by tool",
            ["tool"],
            buckets=TOOL_BUCKETS,
            registry=r,
        )
        self.provider_errors = Counter(
            "agentstream_provider_errors",
            "Runs failed by their model provider, by kind",
            ["kind"],
            registry=r,
        )
        self.store_commit = Histogram(
            "agentstream_store_commit_seconds",
            "How long the store's write transactions took to commit",
            buckets=COMMIT_BUCKETS,
            registry=r,
        )
        self.redis_up = Gauge(
            "agentstream_redis_up",
            "Whether Redis answers (1) or not (0), as the workers last found it",
            registry=r,
            multiprocess_mode="livemin",
        )

        self._children: dict[tuple[Any, ...], Any] = {}

    def child(self, metric: Any, *labels: str) -> Any:
        """``metric.labels(*labels)``, found once: the client's own lookup takes a lock and
        checks every label each time, and every run asks for the same few."""
        key = (metric, *labels)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(*labels)
        return found

    # --- a RunObserver ------------------------------------------------------------------------

    def watch(self, session: RunSession) -> RunMetrics:
        return RunMetrics(self, session)

    # --- the figures that are not a run's events ----------------------------------------------

    def committed(self, seconds: float) -> None:
        """A write transaction of the store committed in ``seconds``."""
        self.store_commit.observe(seconds)

    def redis(self, up: bool) -> None:
        """Redis was found answering (``up``), or not."""
        self.redis_up.set(1 if up else 0)

    def served(self) -> CollectorRegistry:
        """What ``/metrics`` shows: every worker's metrics when the multiprocess directory is
        set, this process's registry otherwise."""
        return shared_registry() or self.registry

    def exposition(self) -> bytes:
        """The metrics in Prometheus's text format (see :meth:`served`)."""
        return generate_latest(self.served())


def shared_registry() -> CollectorRegistry | None:
    """A registry reading every process's values from ``PROMETHEUS_MULTIPROC_DIR``, if set."""
    directory = os.environ.get(MULTIPROC_DIR)
    if not directory:
        return None
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
    return registry


class RunMetrics:
    """One run's figures (see :class:`Metrics`)."""

    __slots__ = ("_first_token", "_metrics", "_model", "_protocol", "_session", "_tools")

    deltas = False  # a part's first token is announced by its part_started

    def __init__(self, metrics: Metrics, session: RunSession) -> None:
        self._metrics = metrics
        self._session = session
        self._protocol = session.protocol or "library"
        self._model = session.model
        self._first_token = False
        self._tools: frozenset[str] = frozenset()
        """The server's tools this run offers (from ``run_started``)."""
        metrics.child(metrics.runs_started, self._protocol, self._model).inc()
        metrics.runs_active.inc()

    def event(self, event: RunEvent) -> None:
        kind = type(event)
        if kind is PartStarted:
            if not self._first_token:
                self._first_token = True
                waited = time.perf_counter() - self._session.began
                metrics = self._metrics
                metrics.child(metrics.first_token, self._model).observe(waited)
        elif kind is ToolCallFinished:
            assert isinstance(event, ToolCallFinished)
            tool = event.name if event.name in self._tools else OTHER_TOOL
            metrics = self._metrics
            metrics.child(metrics.tool_calls, tool, event.outcome).inc()
            metrics.child(metrics.tool_duration, tool).observe(event.duration_ms / 1000)
        elif kind is RunStarted:  # the run's first event
            assert isinstance(event, RunStarted)
            metrics = self._metrics
            waited = time.perf_counter() - self._session.began
            metrics.child(metrics.first_event, self._protocol).observe(waited)
            client = {tool.name for tool in self._session.input.client_tools}
            self._tools = frozenset(event.tool_names) - client
        elif kind is RunFailed:
            assert isinstance(event, RunFailed)
            if event.kind in _PROVIDER_ERRORS:
                self._metrics.child(self._metrics.provider_errors, event.kind).inc()

    def ended(self, session: RunSession) -> None:
        metrics, model = self._metrics, self._model
        status = session.status or "cancelled"
        metrics.child(metrics.runs_finished, self._protocol, model, status).inc()
        metrics.runs_active.dec()
        used = session.usage
        metrics.child(metrics.tokens, model, "input").inc(used.usage.input_tokens)
        metrics.child(metrics.tokens, model, "output").inc(used.usage.output_tokens)
        if used.cost_usd:
            metrics.child(metrics.cost, model).inc(used.cost_usd)
