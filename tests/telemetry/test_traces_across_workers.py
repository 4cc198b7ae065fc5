"""A run's trace across two worker processes: the run on one, a follow and a stop on the
other, exported over OTLP/HTTP by each process to a local receiver."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.server.helpers import serve_process, wait_until

from .otlp import OtlpReceiver

ROOT = Path(__file__).resolve().parents[2]
RUN_TRACE = "0af7651916cd43dd8448eb211c80319c"
FOLLOW_TRACE = "1bf7651916cd43dd8448eb211c80319d"


def worker_env(receiver: OtlpReceiver, name: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTSTREAM_", "OTEL_"))}
    return {
        **env,
        "AGENTSTREAM_REDIS_URL": "redis://127.0.0.1:6379/0",
        # The test's workers share a prefix of their own (one per receiver, so per test).
        "AGENTSTREAM_REDIS_PREFIX": f"agentstream-test:{receiver.endpoint.rsplit(':', 1)[1]}:",
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_SERVICE_NAME": name,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as found:
        yield found


def wait_for(receiver: OtlpReceiver, prefix: str, count: int = 1) -> None:
    arrived = wait_until(lambda: len(receiver.named(prefix)) >= count)
    assert arrived, f"no {prefix} span arrived: {receiver.spans}"


def test_a_follow_and_a_stop_on_another_worker_continue_the_runs_trace(
    receiver: OtlpReceiver,
) -> None:
    with ExitStack() as stack:
        first, second = (
            stack.enter_context(
                serve_process(
                    "tests.telemetry.agents:slow",
                    "--no-store",
                    cwd=ROOT,
                    env=worker_env(receiver, name),
                )
            )
            for name in ("worker-a", "worker-b")
        )
        with httpx.Client(timeout=30) as client:
            with client.stream(
                "POST",
                f"{first}/api/chat/stream",
                json={"message": "count", "detach": True},
                headers={"traceparent": f"00-{RUN_TRACE}-b7ad6b7169203331-01"},
            ) as started:
                run_id = started.headers["x-run-id"]
                next(started.iter_lines())
            with client.stream(
                "GET",
                f"{second}/api/runs/{run_id}/stream",
                headers={"traceparent": f"00-{FOLLOW_TRACE}-c7ad6b7169203332-01"},
            ) as followed:
                assert followed.status_code == 200
                lines = followed.iter_lines()
                seen = [next(lines) for _ in range(5)]
                stopped = client.post(f"{second}/api/chat/runs/{run_id}/cancel")
                assert stopped.status_code == 202
                seen += list(lines)
            frames = [json.loads(line[6:]) for line in seen if line.startswith("data: ")]
            assert frames[-1]["type"] == "cancelled"

        wait_for(receiver, "invoke_agent")
        wait_for(receiver, "follow_run")
        wait_for(receiver, "cancel_run")

    (run,) = receiver.named("invoke_agent")
    (follow,) = receiver.named("follow_run")
    (stop,) = receiver.named("cancel_run")
    assert run.service == "worker-a"
    assert follow.service == stop.service == "worker-b"
    # The run's trace goes on over there: the follow and the stop are children of its span.
    assert run.trace_id == follow.trace_id == stop.trace_id == RUN_TRACE
    assert follow.parent_span_id == run.span_id
    assert stop.parent_span_id == run.span_id
    assert follow.attributes["agentstream.run.id"] == run_id
    # ...linked to the requests that made them on the second worker.
    follow_requests = [s for s in receiver.named("GET") if s.trace_id == FOLLOW_TRACE]
    assert len(follow_requests) == 1
    assert follow.links == [(FOLLOW_TRACE, follow_requests[0].span_id)]
    assert run.attributes["agentstream.run.cancelled"] == "user_cancelled"
    # The run's own request span, on the first worker, is its parent.
    (request,) = [
        s for s in receiver.named("POST") if s.trace_id == RUN_TRACE and s.service == "worker-a"
    ]
    assert run.parent_span_id == request.span_id
