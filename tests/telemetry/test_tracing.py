"""Traces of runs in the OpenTelemetry GenAI conventions, through a real server, checked with
the SDK's in-memory exporter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider
from agentstream.server.config import ServerConfig
from tests.server.agents import tray_agent
from tests.server.conftest import Serve
from tests.server.helpers import stream_text, wait_until

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


@pytest.fixture
def spans() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def by_name(finished: tuple[ReadableSpan, ...], prefix: str) -> list[ReadableSpan]:
    return [s for s in finished if s.name.startswith(prefix)]


def test_a_run_is_an_agent_span_with_model_and_tool_spans_under_the_request(
    serve: Serve, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    server = serve(tray_agent(), server=ServerConfig(tracer_provider=provider))
    with server.client() as client:
        response, _ = stream_text(
            client,
            "/api/chat/stream",
            json={"message": "Find CRISPR papers"},
            headers={"traceparent": TRACEPARENT},
        )
    assert response.status_code == 200
    assert wait_until(lambda: len(by_name(exporter.get_finished_spans(), "invoke_agent")) == 1)
    assert wait_until(lambda: len(by_name(exporter.get_finished_spans(), "POST")) == 1)
    finished = exporter.get_finished_spans()
    (http,) = by_name(finished, "POST")
    (run,) = by_name(finished, "invoke_agent")
    chats = by_name(finished, "chat ")
    (tool,) = by_name(finished, "execute_tool")

    # One trace, continuing the caller's traceparent: request > run > model calls and tool.
    assert {format(s.context.trace_id, "032x") for s in finished} == {TRACE_ID}
    assert http.kind == SpanKind.SERVER
    assert format(http.parent.span_id, "016x") == "00f067aa0ba902b7"
    assert run.parent.span_id == http.context.span_id
    assert len(chats) == 2
    assert all(c.parent.span_id == run.context.span_id for c in chats)
    assert tool.parent.span_id == run.context.span_id

    assert run.name == "invoke_agent agent"
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.provider.name"] == "scripted"
    assert run.attributes["gen_ai.usage.input_tokens"] == 30
    assert run.attributes["gen_ai.usage.output_tokens"] == 11
    assert run.attributes["gen_ai.response.finish_reasons"] == ("stop",)

    first, second = sorted(chats, key=lambda s: s.start_time or 0)
    assert first.name == f"chat {first.attributes['gen_ai.request.model']}"
    assert first.kind == SpanKind.CLIENT
    assert first.attributes["gen_ai.operation.name"] == "chat"
    assert first.attributes["gen_ai.usage.input_tokens"] == 10
    assert first.attributes["gen_ai.usage.output_tokens"] == 5
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert first.attributes["gen_ai.response.model"] == first.attributes["gen_ai.request.model"]

    assert tool.name == "execute_tool search_articles"
    assert tool.attributes["gen_ai.tool.name"] == "search_articles"
    assert tool.attributes["gen_ai.tool.call.id"] == "toolu_abc123"
    assert first.end_time <= tool.start_time  # the tool ran after the model asked for it

    # No content unless asked for.
    for span in finished:
        assert not any(
            "messages" in key or "call.arguments" in key or "call.result" in key
            for key in (span.attributes or {})
        )


def test_content_is_recorded_only_when_turned_on(
    serve: Serve,
    spans: tuple[TracerProvider, InMemorySpanExporter],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    provider, exporter = spans
    server = serve(tray_agent(), server=ServerConfig(tracer_provider=provider))
    with server.client() as client:
        stream_text(client, "/api/chat/stream", json={"message": "Find CRISPR papers"})
    assert wait_until(lambda: len(by_name(exporter.get_finished_spans(), "invoke_agent")) == 1)
    finished = exporter.get_finished_spans()
    (run,) = by_name(finished, "invoke_agent")
    (tool,) = by_name(finished, "execute_tool")
    inputs = json.loads(str(run.attributes["gen_ai.input.messages"]))
    assert inputs[0]["parts"][0]["content"] == "Find CRISPR papers"
    outputs = json.loads(str(run.attributes["gen_ai.output.messages"]))
    assert "I found 5 relevant articles." in outputs[0]["parts"][0]["content"]
    assert json.loads(str(tool.attributes["gen_ai.tool.call.arguments"])) == {"query": "CRISPR"}
    assert tool.attributes["gen_ai.tool.call.result"].startswith("Found 5 articles")


def test_a_failing_model_marks_its_spans_as_errors(
    serve: Serve, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    script = {
        "turns": [{"text": ["partial ", "answer"], "error": {"kind": "overloaded", "after": 1}}]
    }
    agent = Agent(model=ScriptedProvider(script))
    server = serve(agent, server=ServerConfig(tracer_provider=provider))
    with server.client() as client:
        stream_text(client, "/api/chat/stream", json={"message": "hi"})
    assert wait_until(lambda: len(by_name(exporter.get_finished_spans(), "invoke_agent")) == 1)
    finished = exporter.get_finished_spans()
    (run,) = by_name(finished, "invoke_agent")
    (chat,) = by_name(finished, "chat ")
    assert run.status.status_code == StatusCode.ERROR
    assert run.attributes["error.type"] == "overloaded"
    assert chat.status.status_code == StatusCode.ERROR
    assert chat.attributes["error.type"] == "overloaded"
    # The tokens of the cut call are estimated, and said to be.
    assert run.attributes["agentstream.usage.estimated"] is True
    assert run.attributes["gen_ai.usage.output_tokens"] >= 1


def test_nothing_of_traces_or_metrics_is_imported_when_they_are_off() -> None:
    # (FastAPI and redis-py import OpenTelemetry themselves when it is installed: only what
    # is ours, and the Prometheus client, is checked.)
    code = (
        "import sys\n"
        "from agentstream import Agent\n"
        "from agentstream.server.app import create_app\n"
        "from agentstream.server.settings import Settings\n"
        "app = create_app(Agent(model='demo'), settings=Settings())\n"
        "assert app.state.server.tracing is None\n"
        "loaded = [m for m in sys.modules if m.startswith(('prometheus_client', "
        "'agentstream.telemetry.'))]\n"
        "print(loaded)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTSTREAM_"))}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
