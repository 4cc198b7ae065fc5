"""What the HTTP server adds to streamed answers, with and without the store, against a bare
Starlette SSE endpoint measured in the same run.

Servers, each in its own process under uvicorn (uvloop + httptools) on loopback:

* ``bare``: a Starlette ``StreamingResponse`` that sleeps and writes the same ``data:`` frames;
* ``nostore``: agentstream (the ``tray`` dialect: scripted model -> loop -> canonical events ->
  run pipeline -> encoder -> SSE) without a conversation store;
* ``sqlite``: the same with the SQL store on a fresh SQLite file (WAL);
* ``postgres``: the same on a throwaway PostgreSQL database (127.0.0.1:5432, or
  ``AGENTSTREAM_BENCH_POSTGRES_URL``);
* ``observed``: ``sqlite`` with traces and metrics on, as in production: every run's spans
  exported over OTLP/HTTP (the SDK's batch processor) to a sink in the benchmark's own process,
  Prometheus metrics counted. Its CPU per delta is also given as a ratio to ``sqlite``'s
  (same run): what observing costs.

A database in use is not empty, and how its indexes take new rows depends on what is already
there: ``--existing K`` fills each server's database with K finished conversations of other
users before the server starts (about a second per thousand on SQLite).

Every measurement starts a fresh server process, so one measurement's memory and database do
not leak into the next. The load comes from ``--clients`` client processes (uvloop, raw
socket protocols, no HTTP library) that split the streams between them and start at one
agreed moment, so the client is not what limits the server.

Profiles (``--profile``):

* ``burst``: the N streams are opened together;
* ``steady``: the N streams are opened at an even rate over one answer's length, so about N
  are open at any time once it has ramped up.

Reported per server, profile and N (times in ms):

* ttfe: request written -> first event (p50/p99 over streams): what a user waits before the
  answer starts, store writes included;
* added gap: time between consecutive deltas of a stream minus the pacing (p50/p99 over all
  gaps, and p99 "steady" over the gaps after every stream had its first event);
* done: streams that received every delta and the end of the body, of N;
* CPU/delta: the server process's CPU time (all threads, from ``/proc/<pid>/schedstat``)
  over the deltas it delivered, start-up and store writes included;
* KB/stream: peak server RSS during the measurement minus RSS before, over N;
* the same figures as ratios to ``bare`` (same profile, same N, same run);
* and for one unpaced stream of many deltas: server CPU per delta.

Flags: ``--servers bare,nostore,sqlite,postgres``, ``--profile burst,steady``,
``--streams 200,1000``, ``--pace 0.05`` (seconds between deltas: 20 deltas/s),
``--count 60`` (deltas per answer), ``--clients 3``, ``--existing 0`` (conversations in the
database before), ``--repeat 1`` (each measurement this
many times; the table shows every repetition), ``--unpaced 20000`` (0 skips it), ``--gc
tuned|default`` (every server process tunes its garbage collector as ``agentstream serve``
does, :func:`agentstream.server.process.tune_gc`, or keeps Python's defaults).
To see where a server's time goes, set ``AGENTSTREAM_BENCH_SERVER_PREFIX`` to a profiler's
command line (``py-spy record --format raw -o server.txt --``): each agentstream server runs
under it and is stopped with SIGINT, so the profiler writes its output.
The default run (4 servers x 2 profiles x 200 and 1000 streams) takes about four minutes;
other work on the machine shows in the latency figures, so compare ratios within a run::

    .venv/bin/python bench/stream_overhead.py --servers bare,sqlite --profile burst --streams 200
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DELTA = "tick "
SERVERS = ("bare", "nostore", "sqlite", "postgres", "observed")
PROFILES = ("burst", "steady")


# --- the servers (run in a subprocess: ``--serve KIND [--database URL]``) -----------------


def agentstream_app(database: str | None, observed: bool = False) -> Any:
    from agentstream import Agent
    from agentstream.chat import ChatHooks
    from agentstream.providers.base import ChatRequest
    from agentstream.providers.scripted import ScriptedProvider, ScriptedTurn, position
    from agentstream.server.app import create_app
    from agentstream.server.settings import Settings

    def turn(request: ChatRequest) -> ScriptedTurn:
        message, _ = position(request)
        pace, count = _parameters(message)
        return ScriptedTurn(text=[DELTA] * count, delay=pace)

    store = None
    if database:
        from agentstream.store import SqlConversationStore
        from agentstream.store.engine import create_engine

        # The engine connects lazily, in the server's loop.
        store = SqlConversationStore(create_engine(database))
    agent = Agent(model=ScriptedProvider(turn, model="bench"))
    # The chat hooks are the default; named here so that older versions measure the same.
    # Observed: metrics on, and traces exported as the OTEL_* variables the benchmark set say.
    settings = Settings(host="127.0.0.1", metrics=observed, tracing=observed)
    return create_app(agent, settings=settings, store=store, hooks=ChatHooks())


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


def serve(kind: str, database: str | None, gc: str) -> None:
    import uvicorn

    from agentstream.server.process import tune_gc

    app = bare_app() if kind == "bare" else agentstream_app(database, kind == "observed")
    if gc == "tuned":
        tune_gc()  # as ``agentstream serve`` does; the bare server too, for a fair comparison
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        loop="uvloop",
        http="httptools",
        backlog=4096,
    )
    uvicorn.Server(config).run(sockets=[sock])


# --- the load client (run in subprocesses: ``--client JSON``) -----------------------------


class StreamProtocol(asyncio.Protocol):
    """One stream on a raw socket: write the request, timestamp every delta frame."""

    def __init__(self, request: bytes, done: asyncio.Future[None]) -> None:
        self.request = request
        self.done = done
        self.sent = 0.0
        self.first = 0.0
        self.arrivals: list[float] = []
        self.ended = False
        self._headers = False
        self._buffer = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.sent = time.perf_counter()
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        buffer = self._buffer + data
        if not self._headers:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                self._buffer = buffer
                return
            self._headers = True
            buffer = buffer[end + 4 :]
        # Chunked framing is ignored: frames are counted by their delimiter.
        end = buffer.rfind(b"\n\n")
        if end >= 0:
            if not self.first:
                self.first = now
            self.arrivals.extend([now] * buffer.count(b'"text_delta"', 0, end))
            if b'"complete"' in buffer[:end]:
                self.ended = True
            buffer = buffer[end + 2 :]
        self._buffer = buffer

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def client(spec: dict[str, Any]) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    pace, count = spec["pace"], spec["count"]
    body = json.dumps({"message": f"pace={pace} n={count}"}).encode()
    request = (
        f"POST /api/chat/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body

    async def one(at: float) -> StreamProtocol:
        await asyncio.sleep(max(0.0, at - time.perf_counter()))
        done: asyncio.Future[None] = loop.create_future()
        protocol = StreamProtocol(request, done)
        await loop.create_connection(lambda: protocol, "127.0.0.1", spec["port"])
        await asyncio.wait_for(done, spec["timeout"])
        return protocol

    starts = [spec["start"] + offset for offset in spec["offsets"]]
    outcomes = await asyncio.gather(*(one(at) for at in starts), return_exceptions=True)
    streams = []
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            streams.append({"error": repr(outcome)})
            continue
        streams.append(
            {
                "sent": outcome.sent,
                "first": outcome.first,
                "arrivals": outcome.arrivals,
                "complete": outcome.ended and len(outcome.arrivals) == count,
            }
        )
    return {"streams": streams}


def run_client(raw: str) -> None:
    import uvloop

    spec = json.loads(raw)
    result = uvloop.run(client(spec))
    # A file, not stdout: the event loop may leave stdout non-blocking, cutting a large write.
    Path(spec["out"]).write_text(json.dumps(result))


# --- measuring ----------------------------------------------------------------------------


def cpu_ns(pid: int) -> int:
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except FileNotFoundError:  # a thread that just ended
            continue
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
    profile: str
    streams: int
    ttfe_p50: float
    ttfe_p99: float
    gap_p50: float
    gap_p99: float
    steady_p99: float
    done: int
    cpu_us: float
    kb_per_stream: float


def spawn(command: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """A child process whose standard output we read (starting one does not block)."""
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)


class SpanSink:
    """Where the ``observed`` server exports its spans: an OTLP/HTTP endpoint in this process
    that reads each export and answers it (its CPU is a collector's, not the server's)."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        sink = self
        self.exports = 0

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                sink.exports += 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


_SINK: SpanSink | None = None


def span_sink() -> SpanSink:
    global _SINK
    if _SINK is None:
        _SINK = SpanSink()
    return _SINK


class Server:
    """A server process of one kind, with its own database when it has a store."""

    def __init__(self, kind: str, gc: str, existing: int = 0) -> None:
        self.kind = kind
        self.gc = gc
        self.existing = existing
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._pg: str | None = None
        self.process: subprocess.Popen[str] | None = None
        self.port = 0

    async def __aenter__(self) -> Server:
        database = await self._database()
        command = [sys.executable, __file__, "--serve", self.kind, "--gc", self.gc]
        if self.kind != "bare" and os.environ.get("AGENTSTREAM_BENCH_SERVER_PREFIX"):
            # e.g. "py-spy record --format raw -o /tmp/server.txt --": profile the server.
            command = os.environ["AGENTSTREAM_BENCH_SERVER_PREFIX"].split() + command
        if database:
            command += ["--database", database]
        env = None
        if self.kind == "observed":
            env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": span_sink().endpoint}
        self.process = spawn(command, env)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        while not line.strip().isdigit():  # a profiler's banner may come first
            line = self.process.stdout.readline()
        self.port = int(line)
        return self

    async def _database(self) -> str | None:
        if self.kind in ("sqlite", "observed"):
            self._tmp = tempfile.TemporaryDirectory()
            url = await sqlite_database(self._tmp.name)
        elif self.kind == "postgres":
            from store_burst import postgres_database

            self._pg, url = await postgres_database()
        else:
            return None
        if self.existing:
            from store_burst import fill

            from agentstream.store import SqlConversationStore

            async with await SqlConversationStore.open(url) as store:
                await fill(store, self.existing)
        return url

    async def __aexit__(self, *_: object) -> None:
        if self.process is not None:
            if self.kind != "bare" and os.environ.get("AGENTSTREAM_BENCH_SERVER_PREFIX"):
                self.process.send_signal(signal.SIGINT)  # a profiler writes its output on SIGINT
            else:
                self.process.terminate()
            self.process.wait(60)
        if self._pg is not None:
            from store_burst import drop

            await drop(self._pg)
        if self._tmp is not None:
            self._tmp.cleanup()

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid


async def sqlite_database(directory: str) -> str:
    """A fresh SQLite file in ``directory``, in WAL mode and migrated; its URL."""
    from agentstream.store import upgrade
    from agentstream.store.engine import create_engine, use_wal

    url = f"sqlite+aiosqlite:///{Path(directory) / 'bench.db'}"
    engine = create_engine(url)
    await use_wal(engine)
    await engine.dispose()
    await upgrade(url)
    return url


async def warm_up(port: int) -> None:
    """A few short answers, so imports, caches and pools are warm before measuring."""
    spec = {
        "port": port,
        "pace": 0,
        "count": 50,
        "start": time.perf_counter(),
        "offsets": [0.0] * 5,
        "timeout": 30,
    }
    await client(spec)


async def load(
    server: Server, profile: str, streams: int, pace: float, count: int, clients: int
) -> Row:
    """Open ``streams`` streams from ``clients`` processes and summarize what they saw."""
    answer = pace * count
    ramp = answer if profile == "steady" else 0.0
    start = time.perf_counter() + 1.0  # time for the client processes to start
    offsets = [ramp * n / streams for n in range(streams)]
    timeout = 60 + answer * 4
    procs = []
    tmp = tempfile.TemporaryDirectory()
    for part in range(clients):
        spec = {
            "port": server.port,
            "pace": pace,
            "count": count,
            "start": start,
            "offsets": offsets[part::clients],
            "timeout": timeout,
            "out": str(Path(tmp.name) / f"client-{part}.json"),
        }
        procs.append(spawn([sys.executable, __file__, "--client", json.dumps(spec)]))
    base_rss = rss_kb(server.pid)
    peak = base_rss
    sampling = True

    def sample() -> None:
        nonlocal peak
        while sampling:
            peak = max(peak, rss_kb(server.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    await asyncio.sleep(max(0.0, start - time.perf_counter() - 0.2))
    cpu_before = cpu_ns(server.pid)
    sampler.start()
    await asyncio.gather(*(asyncio.to_thread(p.wait) for p in procs))
    cpu = cpu_ns(server.pid) - cpu_before
    sampling = False
    sampler.join()
    results = [
        s
        for part in range(clients)
        for s in json.loads((Path(tmp.name) / f"client-{part}.json").read_text())["streams"]
    ]
    tmp.cleanup()
    ok = [s for s in results if "error" not in s and s["first"]]
    all_open = max((s["first"] for s in ok), default=0.0)
    gaps: list[float] = []
    steady: list[float] = []
    for s in ok:
        arrivals = s["arrivals"]
        for a, b in zip(arrivals, arrivals[1:], strict=False):
            gap = (b - a) - pace
            gaps.append(gap)
            if a > all_open:
                steady.append(gap)
    delivered = sum(len(s["arrivals"]) for s in ok)
    errors = [s["error"] for s in results if "error" in s]
    if errors:
        print(f"  ({server.kind} {profile} {streams}: {len(errors)} failed, e.g. {errors[0]})")
    return Row(
        server.kind,
        profile,
        streams,
        percentile([(s["first"] - s["sent"]) * 1e3 for s in ok], 0.5),
        percentile([(s["first"] - s["sent"]) * 1e3 for s in ok], 0.99),
        percentile(gaps, 0.5) * 1e3,
        percentile(gaps, 0.99) * 1e3,
        percentile(steady, 0.99) * 1e3,
        sum(1 for s in ok if s["complete"]),
        cpu / max(1, delivered) / 1e3,
        max(0, peak - base_rss) / streams,
    )


async def unpaced(server: Server, deltas: int) -> float:
    """Server CPU per delta (us) for one stream that is never paced."""
    before = cpu_ns(server.pid)
    spec = {
        "port": server.port,
        "pace": 0,
        "count": deltas,
        "start": time.perf_counter(),
        "offsets": [0.0],
        "timeout": 120,
    }
    result = (await client(spec))["streams"][0]
    spent = cpu_ns(server.pid) - before
    assert result.get("complete"), "the unpaced stream did not complete"
    return spent / deltas / 1e3


def ratio(value: float, bare: float) -> str:
    if not bare or bare != bare or value != value:
        return "-"
    return f"{value / bare:.2f}x"


def report(rows: list[Row], cpu: dict[str, list[float]], args: argparse.Namespace) -> None:
    if cpu:
        print(f"\nOne unpaced stream of {args.unpaced} deltas: server CPU per delta (us)")
        for kind, values in cpu.items():
            shown = " ".join(f"{v:.1f}" for v in values)
            print(f"  {kind:<9} {shown}")
        if cpu.get("observed") and cpu.get("sqlite"):
            pairs = zip(cpu["observed"], cpu["sqlite"], strict=False)
            print(f"  observed / sqlite: {' '.join(ratio(o, q) for o, q in pairs)}")
    observed = [(i, r) for i, r in enumerate(rows) if r.server == "observed"]
    if observed:
        print("\nTraces and metrics on: server CPU per paced delta, observed / sqlite (same run)")
        for i, r in observed:
            # The sqlite server measured in the same round (servers take turns).
            plain = next(
                (
                    q
                    for q in reversed(rows[:i])
                    if q.server == "sqlite" and q.profile == r.profile and q.streams == r.streams
                ),
                None,
            )
            if plain is not None:
                print(
                    f"  {r.profile:<7} {r.streams:>5}: {r.cpu_us:.1f} / {plain.cpu_us:.1f} us"
                    f" = {ratio(r.cpu_us, plain.cpu_us)}"
                )
    print(
        f"\nPaced streams: {args.count} deltas every {args.pace * 1e3:.0f} ms; times in ms; "
        "ratios to bare in the same run"
    )
    print(
        f"  {'server':<9} {'profile':<7} {'N':>5} {'ttfe p50':>9} {'ttfe p99':>9} "
        f"{'gap p50':>8} {'gap p99':>8} {'steady':>7} {'done':>5} {'CPU us':>7} {'KB/str':>7}"
        f" | {'ttfe99':>7} {'gap99':>7} {'CPU':>6} {'KB':>6}"
    )
    for r in rows:
        bare = next(
            (
                b
                for b in rows
                if b.server == "bare" and b.profile == r.profile and b.streams == r.streams
            ),
            None,
        )
        ratios = ""
        if bare is not None and r.server != "bare":
            kb = ratio(r.kb_per_stream, bare.kb_per_stream)
            ratios = (
                f" | {ratio(r.ttfe_p99, bare.ttfe_p99):>7} {ratio(r.gap_p99, bare.gap_p99):>7}"
                f" {ratio(r.cpu_us, bare.cpu_us):>6} {kb:>6}"
            )
        print(
            f"  {r.server:<9} {r.profile:<7} {r.streams:>5} {r.ttfe_p50:>9.1f} {r.ttfe_p99:>9.1f} "
            f"{r.gap_p50:>8.2f} {r.gap_p99:>8.2f} {r.steady_p99:>7.2f} {r.done:>5} "
            f"{r.cpu_us:>7.1f} {r.kb_per_stream:>7.1f}{ratios}"
        )


async def measure(args: argparse.Namespace) -> None:
    kinds = [k for k in args.servers.split(",") if k]
    profiles = [p for p in args.profile.split(",") if p]
    counts = [int(n) for n in args.streams.split(",") if n]
    for name, values, allowed in (("server", kinds, SERVERS), ("profile", profiles, PROFILES)):
        unknown = sorted(set(values) - set(allowed))
        if unknown:
            raise SystemExit(f"unknown {name} {', '.join(unknown)}; choose from {allowed}")
    print(
        f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; gc {args.gc};"
        f" {args.existing} conversations in each database before"
    )
    rows: list[Row] = []
    cpu: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        for profile in profiles:
            for streams in counts:
                # Servers take turns within one profile and N, so the ratios compare
                # measurements taken a few seconds apart.
                for kind in kinds:
                    async with Server(kind, args.gc, args.existing) as server:
                        await warm_up(server.port)
                        if args.unpaced and profile == profiles[0] and streams == counts[0]:
                            cpu.setdefault(kind, []).append(await unpaced(server, args.unpaced))
                        row = await load(
                            server, profile, streams, args.pace, args.count, args.clients
                        )
                        rows.append(row)
                        print(
                            f"  measured {kind} {profile} {streams}: ttfe p99 "
                            f"{row.ttfe_p99:.0f} ms, done {row.done}/{streams}",
                            flush=True,
                        )
    report(rows, cpu, args)
    print(f"\nload average after: {os.getloadavg()[0]:.2f} (latency figures need an idle machine)")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--serve", choices=SERVERS)
    parser.add_argument("--database")
    parser.add_argument("--client")
    parser.add_argument("--servers", default=",".join(SERVERS))
    parser.add_argument("--profile", default=",".join(PROFILES))
    parser.add_argument("--streams", default="200,1000")
    parser.add_argument("--pace", type=float, default=0.05)
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--clients", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--unpaced", type=int, default=20_000)
    parser.add_argument("--gc", choices=["tuned", "default"], default="tuned")
    parser.add_argument("--existing", type=int, default=0)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.database, args.gc)
        return
    if args.client:
        run_client(args.client)
        return
    if args.clients < 1 or args.repeat < 1 or args.count < 2 or args.pace < 0:
        raise SystemExit("--clients and --repeat must be >= 1, --count >= 2, --pace >= 0")
    asyncio.run(measure(args))


if __name__ == "__main__":
    main()
