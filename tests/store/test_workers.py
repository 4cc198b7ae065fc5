"""``agentstream serve --workers N``: several processes on one port sharing runs through
Redis and conversations through PostgreSQL; and a clear refusal without Redis."""

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

from tests.server.helpers import PROCESS_START

from .test_e2e_server import free_port


def serve(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentstream.cli", "serve", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSTREAM_")}
    return {**env, **extra}


def wait_for_workers(process: subprocess.Popen[str], base: str) -> None:
    """Until the server answers at ``base`` (its workers have started)."""
    deadline = time.monotonic() + PROCESS_START
    while True:
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        try:
            if httpx.get(f"{base}/api/chat/models", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "the workers did not start"
        time.sleep(0.2)


def stop(process: subprocess.Popen[str]) -> None:
    """Ctrl+C, as a person stops it (killed if it does not stop in 20 s)."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


def workers_of(pid: int) -> list[int]:
    """The worker processes of the ``agentstream serve --workers N`` process ``pid``."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in children if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]


def test_workers_without_redis_are_refused(tmp_path: Path) -> None:
    process = serve(tmp_path, base_env(), "--workers", "2", "--port", str(free_port()))
    output, _ = process.communicate(timeout=PROCESS_START)
    assert process.returncode == 2
    assert "--workers 2 needs AGENTSTREAM_REDIS_URL" in output


def test_two_workers_share_runs_and_conversations(tmp_path: Path, postgres_url: str) -> None:
    port = free_port()
    env = base_env(
        AGENTSTREAM_DATABASE_URL=postgres_url,
        AGENTSTREAM_REDIS_URL="redis://127.0.0.1:6379/0",
        AGENTSTREAM_REDIS_PREFIX=f"agentstream-test:{uuid.uuid4().hex}:",
    )
    process = serve(tmp_path, env, "--workers", "2", "--port", str(port))
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_workers(process, base)
        assert len(workers_of(process.pid)) == 2

        with httpx.Client(base_url=base, timeout=60) as client:
            runs = []
            for n in range(4):
                with client.stream(
                    "POST", "/api/chat/stream", json={"message": f"hello {n}"}
                ) as response:
                    assert response.status_code == 200
                    runs.append(response.headers["x-run-id"])
                    frames = [
                        json.loads(line[6:])
                        for line in response.iter_lines()
                        if line[:6] == "data: "
                    ]
                    assert frames[-1]["type"] == "complete"
            # Every run replays from whichever worker answers, through Redis.
            for run_id in runs:
                replay = client.get(f"/api/runs/{run_id}/events")
                assert replay.status_code == 200
                assert "event: run_completed" in replay.text
            listed = client.get("/api/conversations", params={"limit": 100}).json()["items"]
            assert len(listed) >= 4
    finally:
        stop(process)
