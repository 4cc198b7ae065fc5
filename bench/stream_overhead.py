"""What the HTTP server adds to a streamed answer, against a bare Starlette SSE endpoint.

Two servers run in their own processes under uvicorn on loopback (same loop, same HTTP
parser): agentstream (the ``tray`` dialect: scripted model -> loop -> canonical events ->
run pipeline -> encoder -> SSE) and a bare Starlette ``StreamingResponse`` that sleeps and
writes the same ``data:`` frames. A raw-socket asyncio client opens N concurrent streams and
timestamps every frame. Reported per server and scenario:

* TTFB: request written -> first body byte (p50/p99 over streams);
* added gap: time between consecutive deltas minus the pacing (p50/p99 over all gaps, and
  p99 "steady" over the gaps after every stream had opened, without the start-up burst);
* events/s: frames received per second of wall time;
* memory per open stream: server RSS with all streams open mid-answer, minus RSS before,
  divided by N;
* server CPU per delta for one unpaced stream: the server process's CPU time (from
  ``/proc/<pid>/schedstat``, ns resolution) over the number of deltas.

Targets (issue 4): <= 15 us CPU per delta unpaced; at 200 streams paced 50 ms, added gap
p99 <= 10 ms and <= 64 KB per extra open stream. The whole run takes about a minute::

    .venv/bin/python bench/stream_overhead.py [--streams 1,100,200,500] [--pace 0.05] [--count 60]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

DELTA = "tick "
UNPACED_DELTAS = 20_000


# --- the two servers (run in a subprocess: ``--serve agentstream|bare``) -------------------


def agentstream_app() -> Any:
    from agentstream import Agent
    from agentstream.providers.base import ChatRequest
    from agentstream.providers.scripted import ScriptedProvider, ScriptedTurn, position
    from agentstream.server.app import create_app
    from agentstream.server.settings import Settings

    def turn(request: ChatRequest) -> ScriptedTurn:
        message, _ = position(request)
        pace, count = _parameters(message)
        return ScriptedTurn(text=[DELTA] * count, delay=pace)

    agent = Agent(model=ScriptedProvider(turn, model="bench"))
    return create_app(agent, settings=Settings(host="127.0.0.1"))


def bare_app() -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    frame = ("data: " + json.dumps({"type": "text_delta", "text": DELTA}) + "\n\n").encode()

    async def stream(request: Request) -> StreamingResponse:
        body = await request.json()
        pace, count = _parameters(body["message"])

        async def frames() -> Any:
            yield b'data: {"type":"status","message":"Thinking..."}\n\n'
            for _ in range(count):
                if pace:
                    await asyncio.sleep(pace)
                yield frame
            yield b'data: {"type":"complete","payload":{}}\n\n'

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(frames(), media_type="text/event-stream", headers=headers)

    return Starlette(routes=[Route("/api/chat/stream", stream, methods=["POST"])])


def _parameters(message: str) -> tuple[float, int]:
    found = dict(re.findall(r"(\w+)=([\d.]+)", message))
    return float(found.get("pace", 0)), int(found.get("n", 10))


def serve(kind: str) -> None:
    import uvicorn

    app = agentstream_app() if kind == "agentstream" else bare_app()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


# --- the client -----------------------------------------------------------------------------


@dataclass
class StreamResult:
    ttfb: float = 0.0
    arrivals: list[float] = field(default_factory=list)


async def one_stream(
    port: int, pace: float, count: int, opened: asyncio.Event | None
) -> StreamResult:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
    body = json.dumps({"message": f"pace={pace} n={count}"}).encode()
    head = (
        f"POST /api/chat/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    result = StreamResult()
    started = time.perf_counter()
    writer.write(head + body)
    await writer.drain()
    buffer = b""
    headers_done = False
    while True:
        chunk = await reader.read(65536)
        now = time.perf_counter()
        if not chunk:
            break
        buffer += chunk
        if not headers_done:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                continue
            headers_done = True
            buffer = buffer[end + 4 :]
            if not buffer:
                continue
        if not result.ttfb:
            result.ttfb = now - started
            if opened is not None:
                opened.set()
        # Chunked transfer framing is ignored: we only count complete frames by delimiter.
        end = buffer.rfind(b"\n\n")
        if end >= 0:
            result.arrivals.extend([now] * buffer.count(b'"text_delta"', 0, end))
            buffer = buffer[end + 2 :]
    writer.close()
    return result


def cpu_ns(pid: int) -> int:
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as stat:
            total += int(stat.read().split()[0])
    return total


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Row:
    server: str
    streams: int
    ttfb_p50: float
    ttfb_p99: float
    gap_p50: float
    gap_p99: float
    steady_p99: float
    events_per_s: float
    kb_per_stream: float


async def paced(kind: str, pid: int, port: int, streams: int, pace: float, count: int) -> Row:
    base = rss_kb(pid)
    events = [asyncio.Event() for _ in range(streams)]
    started = time.perf_counter()
    tasks = [asyncio.create_task(one_stream(port, pace, count, e)) for e in events]
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), 60)
    all_open = time.perf_counter()
    await asyncio.sleep(pace * count / 3)  # all open, mid-answer
    during = rss_kb(pid)
    results = await asyncio.gather(*tasks)
    wall = time.perf_counter() - started
    gaps = [
        (b - a) - pace for r in results for a, b in zip(r.arrivals, r.arrivals[1:], strict=False)
    ]
    steady = [
        (b - a) - pace
        for r in results
        for a, b in zip(r.arrivals, r.arrivals[1:], strict=False)
        if a > all_open
    ]
    ttfbs = [r.ttfb for r in results]
    received = sum(len(r.arrivals) for r in results)
    return Row(
        kind,
        streams,
        percentile(ttfbs, 0.5) * 1e3,
        percentile(ttfbs, 0.99) * 1e3,
        percentile(gaps, 0.5) * 1e3,
        percentile(gaps, 0.99) * 1e3,
        percentile(steady, 0.99) * 1e3,
        received / wall,
        max(0, during - base) / streams,
    )


async def unpaced_cpu(pid: int, port: int, deltas: int) -> tuple[float, float]:
    await one_stream(port, 0, 500, None)  # warm up
    before, started = cpu_ns(pid), time.perf_counter()
    result = await one_stream(port, 0, deltas, None)
    spent, wall = cpu_ns(pid) - before, time.perf_counter() - started
    assert len(result.arrivals) == deltas, (len(result.arrivals), deltas)
    return spent / deltas / 1e3, deltas / wall


def start(kind: str) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", kind], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    port = int(process.stdout.readline())
    return process, port


async def measure(kinds: list[str], counts: list[int], pace: float, count: int) -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    rows: list[Row] = []
    cpu: dict[str, tuple[float, float]] = {}
    for kind in kinds:
        process, port = start(kind)
        try:
            await one_stream(port, 0, 50, None)
            cpu[kind] = await unpaced_cpu(process.pid, port, UNPACED_DELTAS)
            for streams in counts:
                rows.append(await paced(kind, process.pid, port, streams, pace, count))
        finally:
            process.terminate()
            process.wait(10)
    print(f"\nOne unpaced stream of {UNPACED_DELTAS} deltas (server CPU, all threads):")
    print(f"  {'server':<12} {'CPU us/delta':>13} {'deltas/s':>10}")
    for kind, (us, rate) in cpu.items():
        print(f"  {kind:<12} {us:>13.1f} {rate:>10.0f}")
    print(f"\nPaced streams: {count} deltas at {pace * 1e3:.0f} ms each (times in ms):")
    print(
        f"  {'server':<12} {'streams':>7} {'ttfb p50':>9} {'ttfb p99':>9} {'gap p50':>8} "
        f"{'gap p99':>8} {'steady':>7} {'events/s':>9} {'KB/stream':>10}"
    )
    for r in rows:
        print(
            f"  {r.server:<12} {r.streams:>7} {r.ttfb_p50:>9.1f} {r.ttfb_p99:>9.1f} "
            f"{r.gap_p50:>8.2f} {r.gap_p99:>8.2f} {r.steady_p99:>7.2f} {r.events_per_s:>9.0f} "
            f"{r.kb_per_stream:>10.1f}"
        )
    ours = cpu.get("agentstream")
    at200 = next((r for r in rows if r.server == "agentstream" and r.streams == 200), None)
    print(f"\nload average after: {os.getloadavg()[0]:.2f} (latency figures need an idle machine)")
    print("\nTargets:")
    if ours:
        print(f"  CPU per delta unpaced   {ours[0]:6.1f} us  (target <= 15)")
    if at200:
        print(f"  added gap p99 @200      {at200.gap_p99:6.2f} ms  (target <= 10)")
        print(f"    once all were open    {at200.steady_p99:6.2f} ms")
        print(f"  memory per stream @200  {at200.kb_per_stream:6.1f} KB  (target <= 64)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", choices=["agentstream", "bare"])
    parser.add_argument("--streams", default="1,100,200,500")
    parser.add_argument("--pace", type=float, default=0.05)
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--only", choices=["agentstream", "bare"])
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    kinds = [args.only] if args.only else ["bare", "agentstream"]
    counts = [int(n) for n in args.streams.split(",")]
    asyncio.run(measure(kinds, counts, args.pace, args.count))


if __name__ == "__main__":
    main()
