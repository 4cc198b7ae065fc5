"""How long a worker sent ``SIGTERM`` takes to drain: the time from the signal to ``/readyz``
answering 503, and to the process's exit, with N runs streaming.

A real ``agentstream serve`` process (one worker, a SQLite file, no Redis) serving a scripted
model that answers ``--chunks`` words ``--delay`` seconds apart. For each N of ``--runs``, N
chat tray clients start their runs and read them; once every run has streamed its first
words the worker is sent ``SIGTERM``, ``/readyz`` is polled every 5 ms (on a connection
opened before) until it answers 503, and the exit is waited for. Printed per N, in time from
the signal: to 503, to the last run's last frame at its client, to the exit, and the exit's
time after that last frame (what draining adds to the runs themselves); then, with
``--short-drain`` seconds of drain (runs longer than it: the rest are stopped and stored as
interrupted), the time to exit against the drain time::

    .venv/bin/python bench/drain.py [--runs 0,10,50] [--chunks 40] [--delay 0.05]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent.parent))
from tests.server.helpers import served_url, wait_until_serving  # noqa: E402

AGENT = """
from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider

script = {{"turns": [{{"text": ["w "] * {chunks}}}], "delay": {delay}}}
agent = Agent(model=ScriptedProvider(script))
"""


def start(directory: Path, drain: float) -> tuple[subprocess.Popen[bytes], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSTREAM_")}
    env |= {
        "AGENTSTREAM_DATABASE_URL": f"sqlite+aiosqlite:///{directory / 'bench.db'}",
        "AGENTSTREAM_DRAIN_SECONDS": str(drain),
        "PYTHONPATH": str(Path(__file__).parents[1] / "src"),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "agentstream.cli", "serve", "slow:agent", "--port", "0"],
        cwd=directory,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = served_url(process)
    wait_until_serving(base, process)
    return process, base


def read_run(base: str, started: threading.Event, ends: list[tuple[str, float]]) -> None:
    """One run, read to its end: how it ended, and when its last frame came."""
    with (
        httpx.Client(base_url=base, timeout=120) as client,
        client.stream("POST", "/api/chat/stream", json={"message": "go"}) as answer,
    ):
        last = ""
        for line in answer.iter_lines():
            if line.startswith("data: "):
                last = json.loads(line[6:])["type"]
                if last == "text_delta":
                    started.set()
        ends.append((last, time.monotonic()))


def measure(directory: Path, runs: int, drain: float) -> dict[str, float]:
    process, base = start(directory, drain)
    ends: list[tuple[str, float]] = []
    readers = []
    for _ in range(runs):
        started = threading.Event()
        thread = threading.Thread(target=read_run, args=(base, started, ends), daemon=True)
        thread.start()
        readers.append((thread, started))
    for _, started in readers:
        started.wait(60)
    with httpx.Client(base_url=base, timeout=5) as probe:
        probe.get("/readyz")  # its connection is open before the signal
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        while probe.get("/readyz").status_code != 503:
            time.sleep(0.005)
        unready = time.monotonic() - signalled
    process.wait(timeout=drain + 60)
    exited = time.monotonic() - signalled
    for thread, _ in readers:
        thread.join(30)
    last_end = max((at for _, at in ends), default=signalled) - signalled
    completed = sum(end == "complete" for end, _ in ends)
    return {"unready": unready, "exit": exited, "last_end": last_end, "completed": completed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", default="0,10,50")
    parser.add_argument("--chunks", type=int, default=40)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--short-drain", type=float, default=1.0)
    args = parser.parse_args()
    counts = [int(n) for n in args.runs.split(",")]
    run_seconds = args.chunks * args.delay
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        (directory / "slow.py").write_text(AGENT.format(chunks=args.chunks, delay=args.delay))
        print(f"runs of {run_seconds:.1f} s, drain 30 s: every run finishes")
        print("  runs  to 503 ms  last run ended s  to exit s  exit after last end s  completed")
        for n in counts:
            m = measure(directory, n, 30.0)
            print(
                f"  {n:4d}  {m['unready'] * 1000:9.1f}  {m['last_end']:16.2f}  {m['exit']:9.2f}"
                f"  {m['exit'] - m['last_end']:21.2f}  {int(m['completed']):4d}/{n}"
            )
        drain = args.short_drain
        print(f"runs of {run_seconds:.1f} s, drain {drain:g} s: the rest stored as interrupted")
        print("  runs  to 503 ms  to exit s  exit after the drain time s  completed")
        for n in counts:
            if not n:
                continue
            m = measure(directory, n, drain)
            print(
                f"  {n:4d}  {m['unready'] * 1000:9.1f}  {m['exit']:9.2f}"
                f"  {m['exit'] - drain:26.2f}  {int(m['completed']):4d}/{n}"
            )


if __name__ == "__main__":
    main()
