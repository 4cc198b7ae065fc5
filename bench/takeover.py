"""How a run crosses the death of its worker: the time from the kill to the first event of the
worker that takes it over, and what a follower on another worker reads around the takeover,
in each protocol.

Real worker processes (the tests' takeover worker: a slow scripted model, two tools) on
PostgreSQL and Redis. For each protocol a run is started on one worker and followed on
another (``GET /api/runs/{id}/stream``, in the run's own protocol); the first worker is
SIGKILLed while the model writes the final answer; the frames around the takeover are
printed, with the seconds from the kill to the successor's first frame.

    .venv/bin/python bench/takeover.py [--lease 15] [--protocols tray,ai-sdk,ag-ui,ops,workflow]

Needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379. Figures, never assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from bench_postgres import bench_database  # noqa: E402

ROOT = Path(__file__).parents[1]
WORKER = ROOT / "tests" / "store" / "takeover_worker.py"
REDIS_URL = "redis://127.0.0.1:6379/0"

STARTS: dict[str, Callable[[], tuple[str, dict[str, Any]]]] = {
    "tray": lambda: ("/api/chat/stream", {"message": "go"}),
    "ai-sdk": lambda: (
        "/ai-sdk/chat",
        {
            "id": str(uuid.uuid4()),
            "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "go"}]}],
        },
    ),
    "ag-ui": lambda: (
        "/ag-ui",
        {
            "threadId": str(uuid.uuid4()),
            "runId": str(uuid.uuid4()),
            "messages": [{"id": "m1", "role": "user", "content": "go"}],
            "tools": [],
            "context": [],
            "state": {},
            "forwardedProps": {},
        },
    ),
    "ops": lambda: ("/agent/stream", {"message": "go"}),
    "workflow": lambda: ("/v1/agent/chat", {"message": "go", "context_type": "workflow"}),
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Worker:
    def __init__(self, database_url: str, prefix: str, lease: float, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = log.open("ab")
        ledger = log.with_suffix(".ledger")
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER), database_url, REDIS_URL, prefix, str(lease)]
            + [str(self.port), str(ledger)],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"},
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.url}/api/chat/models", timeout=1).status_code == 200:
                    return
            time.sleep(0.2)
        raise RuntimeError("a worker did not start")

    def kill(self) -> float:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        return time.monotonic()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self._log.close()


def lines(response: httpx.Response) -> Iterator[str]:
    """The stream's payload lines (SSE ``data:`` or NDJSON), as they come."""
    for line in response.iter_lines():
        if line.startswith("data: "):
            yield line[6:]
        elif line and not line.startswith((":", "id:", "event:", "retry:")):
            yield line


def start(owner: Worker, protocol: str) -> str:
    """Start a run on ``owner`` and keep its stream open (it dies with the worker)."""
    path, body = STARTS[protocol]()
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        with (
            contextlib.suppress(httpx.HTTPError),
            httpx.Client(base_url=owner.url, timeout=120) as client,
            client.stream("POST", path, json=body) as response,
        ):
            found.append(response.headers["x-run-id"])
            ready.set()
            for _ in response.iter_lines():
                pass

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(30):
        raise RuntimeError(f"{protocol}: no run started")
    return found[0]


def one(protocol: str, owner: Worker, follower: Worker) -> None:
    run_id = start(owner, protocol)
    frames: list[tuple[float, str]] = []
    killed = 0.0
    with (
        httpx.Client(base_url=follower.url, timeout=120) as client,
        client.stream("GET", f"/api/runs/{run_id}/stream") as response,
    ):
        for line in lines(response):
            frames.append((time.monotonic(), line))
            if not killed and "word3" in line:
                killed = owner.kill()
    after = [i for i, (at, _) in enumerate(frames) if at > killed]
    first = after[0] if after else len(frames)
    waited = frames[first][0] - killed if after else float("nan")
    print(f"\n== {protocol}: first frame from the successor {waited:.2f} s after the kill")
    shown = frames[max(0, first - 3) : first + 6]
    for at, line in shown:
        mark = "  after" if at > killed else " before"
        print(f"  {mark}  {line[:150]}")
    print(f"   last  {frames[-1][1][:150]}")


def run_all(url: str, lease: float, protocols: list[str]) -> None:
    logs = Path(os.environ.get("TMPDIR", "/tmp")) / f"takeover-bench-{uuid.uuid4().hex[:8]}"
    logs.mkdir()
    prefix = f"agentstream-bench:{uuid.uuid4().hex}:"
    workers = [Worker(url, prefix, lease, logs / f"w{n}.log") for n in range(2)]
    try:
        for protocol in protocols:
            owner, follower = workers
            one(protocol, owner, follower)
            owner.stop()
            workers = [follower, Worker(url, prefix, lease, logs / f"{protocol}.log")]
    finally:
        for worker in workers:
            worker.stop()
    print(f"\nworker logs: {logs}")


async def amain(lease: float, protocols: list[str]) -> None:
    async with bench_database() as url:
        await asyncio.to_thread(run_all, url, lease, protocols)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--lease", type=float, default=15.0)
    parser.add_argument("--protocols", default=",".join(STARTS))
    args = parser.parse_args()
    asyncio.run(amain(args.lease, args.protocols.split(",")))


if __name__ == "__main__":
    main()
