"""``/metrics`` of ``agentstream serve --workers 2``: every worker's figures summed through
the Prometheus client's multiprocess mode, which the command manages; read with the client's
own parser after known runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.server.helpers import PROCESS_START
from tests.store.test_e2e_server import free_port
from tests.store.test_workers import stop, wait_for_workers, workers_of

ROOT = Path(__file__).resolve().parents[2]


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a /metrics page, by name and labels."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(
    found: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def metrics_dir_of(worker: int) -> str:
    environ = Path(f"/proc/{worker}/environ").read_bytes().split(b"\0")
    (found,) = [v.split(b"=", 1)[1] for v in environ if v.startswith(b"PROMETHEUS_MULTIPROC_DIR=")]
    return found.decode()


def fresh(base: str) -> httpx.Client:
    """A client whose every request is a new connection (so the kernel hands them to either
    worker)."""
    return httpx.Client(base_url=base, timeout=30, headers={"Connection": "close"})


def read_metrics(base: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    with fresh(base) as client:
        response = client.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return samples(response.text)


def test_two_workers_metrics_are_summed_and_dead_workers_stop_counting_as_running(
    tmp_path: Path,
) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTSTREAM_", "PROMETHEUS_"))}
    env.update(
        AGENTSTREAM_METRICS="on",
        AGENTSTREAM_REDIS_URL="redis://127.0.0.1:6379/0",
        AGENTSTREAM_REDIS_PREFIX=f"agentstream-test:{uuid.uuid4().hex}:",
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentstream.cli",
            "serve",
            "tests.telemetry.agents:tools",
            "--workers",
            "2",
            "--no-store",
            "--port",
            str(port),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_workers(process, base)
        workers = workers_of(process.pid)
        assert len(workers) == 2
        directory = metrics_dir_of(workers[0])
        assert directory == metrics_dir_of(workers[1])

        runs = 8
        for n in range(runs):
            with (
                fresh(base) as client,
                client.stream(
                    "POST", "/api/chat/stream", json={"message": f"question {n}"}
                ) as response,
            ):
                frames = [
                    json.loads(line[6:]) for line in response.iter_lines() if line[:6] == "data: "
                ]
                assert frames[-1]["type"] == "complete"
        writers = {
            name.rsplit("_", 1)[1] for name in os.listdir(directory) if name.startswith("counter_")
        }
        assert writers  # (which worker took which run is the kernel's choice)

        found = read_metrics(base)
        model = "scripted:script"
        assert value(found, "agentstream_runs_started_total", protocol="tray", model=model) == runs
        assert (
            value(
                found,
                "agentstream_runs_finished_total",
                protocol="tray",
                model=model,
                status="completed",
            )
            == runs
        )
        assert value(found, "agentstream_runs_active") == 0
        assert value(found, "agentstream_tokens_total", model=model, type="input") == runs * 31
        assert value(found, "agentstream_tokens_total", model=model, type="output") == runs * 7
        assert value(found, "agentstream_tool_calls_total", tool="lookup", outcome="ok") == runs
        assert value(found, "agentstream_tool_call_duration_seconds_count", tool="lookup") == runs
        assert (
            value(found, "agentstream_time_to_first_event_seconds_count", protocol="tray") == runs
        )
        assert value(found, "agentstream_time_to_first_token_seconds_count", model=model) == runs
        assert value(found, "agentstream_redis_up") == 1
        assert value(found, "agentstream_streams_open") >= 0

        # A run streaming, then its worker (both of them) killed: it no longer counts as
        # running, and what was counted before stays counted.
        with (
            fresh(base) as client,
            client.stream(
                "POST", "/api/chat/stream", json={"message": "slow please", "detach": True}
            ) as response,
        ):
            next(response.iter_lines())
        assert value(read_metrics(base), "agentstream_runs_active") == 1
        for worker in workers:
            os.kill(worker, signal.SIGKILL)
        # Counted as stopped when the supervisor has seen them die; read when a new worker
        # answers.
        deadline = time.monotonic() + PROCESS_START
        while True:
            try:
                found = read_metrics(base)
                if value(found, "agentstream_runs_active") == 0:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the dead workers still count their runs"
            time.sleep(0.5)
        assert (
            value(found, "agentstream_runs_started_total", protocol="tray", model=model) == runs + 1
        )
        assert set(workers_of(process.pid)).isdisjoint(workers)  # restarted
    finally:
        stop(process)
    assert not Path(directory).exists()  # the command cleaned up after itself
