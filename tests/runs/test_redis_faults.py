"""The Redis broker when Redis or a worker misbehaves, against a ``redis-server`` of the test's
own (on a free port, killed and restarted at will; the shared one on 6379 is never touched).

* A quiet run (a slow tool, a thinking model) longer than Redis's default socket timeout does
  not cut its followers off.
* While Redis is down, runs still start and stream from their worker; the outage is logged
  once; what needs another worker fails cleanly (:class:`BrokerUnavailable`, a 503).
* After Redis comes back, a stop from another worker reaches the run again.
* A worker that dies mid-run: its followers get ``run_failed`` within the lease, not a hang.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import redis

from agentstream import Agent, Principal, tool
from agentstream.events import RunCancelled, RunCompleted, RunEvent, RunFailed, TextDelta
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import BrokerUnavailable, RedisBroker, Runner, RunRequest

ALICE = Principal(user_id="alice", tenant_id="acme")
REDIS_SERVER = shutil.which("redis-server")
pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class OwnRedis:
    """A ``redis-server`` process of this test, that keeps nothing on disk."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.directory = directory
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert REDIS_SERVER is not None
        self.process = subprocess.Popen(
            [
                REDIS_SERVER,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        client.close()

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def subscribers(self, channel: str) -> int:
        client = redis.Redis(port=self.port)
        try:
            return int(dict(client.pubsub_numsub(channel))[channel.encode()])
        finally:
            client.close()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    server = OwnRedis(tmp_path)
    server.start()
    yield server
    server.kill()


def prefix() -> str:
    return f"faults:{uuid.uuid4().hex}:"


async def wait_for(predicate: object, within: float = 15.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


@tool
async def think(seconds: float) -> str:
    """Think quietly for a while.

    Args:
        seconds: How long.
    """
    await asyncio.sleep(seconds)
    return "thought"


def quiet_agent(seconds: float) -> Agent:
    script = {
        "turns": [
            {
                "text": "Let me think.",
                "tool_calls": [{"name": "think", "arguments": {"seconds": seconds}}],
            },
            {"text": ["Done ", "thinking."]},
        ]
    }
    return Agent(model=ScriptedProvider(script), tools=[think])


def counting_agent(delay: float) -> Agent:
    return Agent(
        model=ScriptedProvider(
            {"turns": [{"text": [f"w{i} " for i in range(400)]}], "delay": delay}
        )
    )


async def test_a_follower_outlasts_a_silence_longer_than_the_socket_timeout(
    own_redis: OwnRedis,
) -> None:
    shared = prefix()
    worker_a = Runner(quiet_agent(7.0), broker=RedisBroker(own_redis.url, prefix=shared))
    worker_b = Runner(quiet_agent(0), broker=RedisBroker(own_redis.url, prefix=shared))
    await worker_a.start()
    await worker_b.start()
    try:
        session = await worker_a.begin(RunRequest(message="think", principal=ALICE))
        streaming = asyncio.create_task(_collect(session.events()))
        assert worker_b.broker is not None
        followed = [event async for event in worker_b.broker.replay(session.run_id, ALICE)]
        streamed = await streaming
        assert followed == streamed
        assert isinstance(followed[-1], RunCompleted)
    finally:
        await worker_a.aclose()
        await worker_b.aclose()


@asynccontextmanager
async def two_workers(
    own_redis: OwnRedis, delay: float
) -> AsyncIterator[tuple[Runner, Runner, str]]:
    """Two workers sharing ``own_redis``, both listening for stops on the channel given with
    them, closed after."""
    shared = prefix()
    workers = [
        Runner(counting_agent(delay), broker=RedisBroker(own_redis.url, prefix=shared))
        for _ in range(2)
    ]
    for worker in workers:
        await worker.start()
    channel = f"{shared}cancel"
    try:
        await wait_for(lambda: own_redis.subscribers(channel) == 2)
        yield workers[0], workers[1], channel
    finally:
        for worker in workers:
            await worker.aclose()


async def test_runs_stream_through_an_outage_and_stops_reach_them_again_after(
    own_redis: OwnRedis, caplog: pytest.LogCaptureFixture
) -> None:
    async with two_workers(own_redis, 0.002) as (worker_a, worker_b, channel):
        own_redis.kill()
        caplog.set_level(logging.WARNING, logger="agentstream.broker")

        # Redis is down: a run still starts, streams to its client and replays on its worker.
        session = await worker_a.begin(RunRequest(message="count", principal=ALICE))
        events = await _collect(session.events())
        assert isinstance(events[-1], RunCompleted)
        assert worker_a.broker is not None and worker_b.broker is not None
        replayed = await _collect(worker_a.broker.replay(session.run_id, ALICE))
        assert replayed == events
        # What needs another worker fails cleanly.
        with pytest.raises(BrokerUnavailable):
            await _collect(worker_b.broker.replay(session.run_id, ALICE))
        with pytest.raises(BrokerUnavailable):
            await worker_b.request_cancel("somebody-elses-run", ALICE)
        outage = [r for r in caplog.records if "unavailable" in r.getMessage()]
        assert len(outage) == 2  # once per worker, not once per event

        # Redis is back: both workers listen again, and a stop crosses workers again.
        own_redis.start()
        await wait_for(lambda: own_redis.subscribers(channel) == 2, within=30)
        session = await worker_a.begin(RunRequest(message="count", principal=ALICE))
        stream = session.events()
        seen: list[RunEvent] = []
        async for event in stream:
            seen.append(event)
            if isinstance(event, TextDelta) and len(seen) == 5:
                assert await worker_b.request_cancel(session.run_id, ALICE, "stopped elsewhere")
        assert isinstance(seen[-1], RunCancelled)
        assert seen[-1].reason == "stopped elsewhere"


async def test_stop_and_follow_cross_workers_soon_after_redis_answers_again(
    own_redis: OwnRedis,
) -> None:
    """However far the listeners' backoff had grown during the outage, a run started after
    Redis came back can be followed and stopped from another worker before the listeners'
    timer would have them try again: a request that finds Redis answering wakes them. (A
    16 s outage grows the backoff to its cap, 10 s: the listeners last tried 0.5 s before
    Redis came back and would try again 9.5 s after; the test allows 1.5 + 6 s, room for a
    loaded machine.)"""
    async with two_workers(own_redis, 0.01) as (worker_c, worker_d, _):
        own_redis.kill()
        await asyncio.sleep(16)  # the listeners' backoff has grown to its cap
        own_redis.start()
        await asyncio.sleep(1.5)

        session = await worker_c.begin(RunRequest(message="count", principal=ALICE))
        stream = session.events()
        seen = [await anext(stream) for _ in range(3)]
        assert worker_d.broker is not None
        async with asyncio.timeout(6):
            followed = worker_d.broker.replay(session.run_id, ALICE)
            assert (await anext(followed)).seq == 0  # followed from another worker
            await followed.aclose()
            assert await worker_d.request_cancel(session.run_id, ALICE, "stopped elsewhere")
            seen += [event async for event in stream]
        assert isinstance(seen[-1], RunCancelled)
        assert seen[-1].reason == "stopped elsewhere"


WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from agentstream import Agent, Principal
    from agentstream.providers.scripted import ScriptedProvider
    from agentstream.runs import RedisBroker, Runner, RunRequest

    async def main():
        script = {"turns": [{"text": [f"w{i} " for i in range(10000)], "delay": 0.01}]}
        runner = Runner(Agent(model=ScriptedProvider(script)),
                        broker=RedisBroker(sys.argv[1], prefix=sys.argv[2], lease=1.5))
        await runner.start()
        session = await runner.begin(RunRequest(message="go", principal=Principal(user_id="alice", tenant_id="acme")))
        print(session.run_id, flush=True)
        async for _ in session.events():
            pass

    asyncio.run(main())
    """
)


def start_worker(url: str, shared: str) -> subprocess.Popen[bytes]:
    """A worker process that starts a long run, prints its id and streams it."""
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, url, shared],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")},
    )


async def test_followers_learn_that_the_worker_running_the_run_died(own_redis: OwnRedis) -> None:
    shared = prefix()
    worker = start_worker(own_redis.url, shared)
    follower = Runner(
        counting_agent(0), broker=RedisBroker(own_redis.url, prefix=shared, block_ms=300)
    )
    await follower.start()
    try:
        assert worker.stdout is not None
        run_id = (await asyncio.to_thread(worker.stdout.readline)).decode().strip()
        assert follower.broker is not None
        events = follower.broker.replay(run_id, ALICE)
        followed = [await anext(events)]
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
        killed_at = time.monotonic()
        async with asyncio.timeout(20):
            followed += [event async for event in events]
        ended = followed[-1]
        assert isinstance(ended, RunFailed)
        assert ended.kind == "interrupted"
        assert ended.seq == followed[-2].seq + 1
        assert time.monotonic() - killed_at < 10
        assert not await follower.request_cancel(run_id, ALICE)  # nothing is running it
    finally:
        if worker.poll() is None:
            worker.kill()
        await follower.aclose()


async def _collect(events: object) -> list[RunEvent]:
    return [event async for event in events]  # type: ignore[attr-defined]
