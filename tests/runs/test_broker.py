"""Run events and cancel signals across workers: in process and through the real Redis."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentstream import Agent, Principal
from agentstream.events import RunCancelled, RunCompleted, RunEvent, TextDelta
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import (
    LocalBroker,
    LogEnd,
    RedisBroker,
    RunBroker,
    Runner,
    RunNotFound,
    RunRequest,
)

REDIS_URL = "redis://127.0.0.1:6379/0"
ALICE = Principal(user_id="alice", tenant_id="acme")
MALLORY = Principal(user_id="mallory", tenant_id="acme")
ALICE_ELSEWHERE = Principal(user_id="alice", tenant_id="other")


def slow_agent(delay: float = 0.0) -> Agent:
    provider = ScriptedProvider(
        {"turns": [{"text": ["one ", "two ", "three ", "four"]}], "delay": delay}
    )
    return Agent(model=provider)


@pytest.fixture(params=["local", "redis"])
async def make_broker(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """A factory of brokers that share one backend (one process, or one Redis namespace)."""
    prefix = f"agentstream-test:{uuid.uuid4().hex}:"
    made: list[RunBroker] = []
    shared = LocalBroker()

    def make() -> RunBroker:
        broker: RunBroker = (
            shared
            if request.param == "local"
            else RedisBroker(REDIS_URL, prefix=prefix, block_ms=200)
        )
        made.append(broker)
        return broker

    yield make
    for broker in made:
        await broker.aclose()


async def run_to_end(
    runner: Runner, message: str = "count", principal: Principal = ALICE
) -> list[RunEvent]:
    session = await runner.begin(RunRequest(message=message, principal=principal))
    return [event async for event in session.events()]


async def test_replay_after_a_sequence_number(make_broker: Any) -> None:
    runner = Runner(slow_agent(), broker=make_broker())
    await runner.start()
    events = await run_to_end(runner)
    run_id = events[0].run_id
    replayed = [e async for e in runner.broker.replay(run_id, ALICE, after=3)]  # type: ignore[union-attr]
    assert replayed == [e for e in events if e.seq > 3]
    everything = [e async for e in runner.broker.replay(run_id, ALICE)]  # type: ignore[union-attr]
    assert everything == events


async def test_a_second_reader_follows_a_live_run(make_broker: Any) -> None:
    worker_a = Runner(slow_agent(delay=0.05), broker=make_broker())
    worker_b = Runner(slow_agent(), broker=make_broker())
    await worker_a.start()
    await worker_b.start()
    session = await worker_a.begin(RunRequest(message="count", principal=ALICE))
    streamed: list[RunEvent] = []
    text_seen = asyncio.Event()

    async def consume() -> None:
        async for event in session.events():
            streamed.append(event)
            if isinstance(event, TextDelta):
                text_seen.set()

    consumer = asyncio.create_task(consume())
    await text_seen.wait()
    followed = [e async for e in worker_b.broker.replay(session.run_id, ALICE)]  # type: ignore[union-attr]
    await consumer
    assert followed == streamed
    assert isinstance(followed[-1], RunCompleted)


async def test_only_the_owner_can_replay(make_broker: Any) -> None:
    runner = Runner(slow_agent(), broker=make_broker())
    await runner.start()
    run_id = (await run_to_end(runner))[0].run_id
    for stranger in (MALLORY, ALICE_ELSEWHERE):
        with pytest.raises(RunNotFound):
            [e async for e in runner.broker.replay(run_id, stranger)]  # type: ignore[union-attr]
    with pytest.raises(RunNotFound):
        [e async for e in runner.broker.replay("no-such-run", ALICE)]  # type: ignore[union-attr]


async def test_a_stop_request_reaches_the_worker_running_the_run(make_broker: Any) -> None:
    worker_a = Runner(slow_agent(delay=0.05), broker=make_broker())
    worker_b = Runner(slow_agent(), broker=make_broker())
    await worker_a.start()
    await worker_b.start()
    session = await worker_a.begin(RunRequest(message="count", principal=ALICE))
    events: list[RunEvent] = []
    async for event in session.events():
        events.append(event)
        if isinstance(event, TextDelta) and len(events) < 5:
            assert not await worker_b.request_cancel(session.run_id, MALLORY, "not yours")
            assert not await worker_b.request_cancel(session.run_id, ALICE_ELSEWHERE, "not yours")
            assert await worker_b.request_cancel(
                session.run_id, ALICE, "stopped from another worker"
            )
    assert isinstance(events[-1], RunCancelled)
    assert events[-1].reason == "stopped from another worker"


async def test_any_worker_finds_a_conversations_run_in_progress(make_broker: Any) -> None:
    worker_a = Runner(slow_agent(delay=0.05), broker=make_broker())
    worker_b = Runner(slow_agent(), broker=make_broker())
    await worker_a.start()
    await worker_b.start()
    broker_b = worker_b.broker
    assert await broker_b.active_run("c1", ALICE) is None
    session = await worker_a.begin(
        RunRequest(message="count", principal=ALICE, conversation_id="c1")
    )
    assert await broker_b.active_run("c1", ALICE) == session.run_id
    assert await broker_b.active_run("c1", MALLORY) is None
    assert await broker_b.active_run("c1", ALICE_ELSEWHERE) is None
    assert await broker_b.active_run("c2", ALICE) is None
    await session.wait()
    await worker_a.settle()
    assert await broker_b.active_run("c1", ALICE) is None


async def test_cancelling_an_unknown_run_is_refused(make_broker: Any) -> None:
    runner = Runner(slow_agent(), broker=make_broker())
    await runner.start()
    assert not await runner.request_cancel("no-such-run", ALICE)


async def test_a_redis_broker_closed_while_it_subscribes_still_closes() -> None:
    """redis-py can swallow the cancellation of a ``subscribe`` that is still connecting, and
    the broker's listener then waits in its next read for good. Closing brokers right after
    starting them, at varied moments, lands in that window within a few dozen tries; every
    close must still end."""
    moments = random.Random(14)
    for _ in range(150):
        broker = RedisBroker(REDIS_URL, prefix=f"agentstream-test:{uuid.uuid4().hex}:")
        await broker.start(lambda *_: None)
        await asyncio.sleep(moments.random() * 0.004)
        await asyncio.wait_for(broker.aclose(), 5)


async def test_a_follower_cancelled_while_it_connects_stops_reading() -> None:
    """The same swallowed cancellation in a follower: cancelled while its first command was
    connecting, it went on reading the run's stream until the run ended. Each follower here
    reads through a broker of its own (a new connection) and is cancelled at a varied moment;
    every one must end while the run is still going."""
    prefix = f"agentstream-test:{uuid.uuid4().hex}:"
    worker = RedisBroker(REDIS_URL, prefix=prefix, block_ms=200)
    await worker.start(lambda *_: None)
    run_id = uuid.uuid4().hex
    await worker.open_run(run_id, ALICE)
    moments = random.Random(14)

    async def follow(broker: RedisBroker) -> None:
        async for _ in broker.replay(run_id, ALICE):
            pass

    try:
        for _ in range(100):
            follower = RedisBroker(REDIS_URL, prefix=prefix, block_ms=200)
            task = asyncio.create_task(follow(follower))
            await asyncio.sleep(moments.random() * 0.006)
            task.cancel()
            done, _ = await asyncio.wait([task], timeout=5)
            assert task in done, "a cancelled follower is still reading"
            await follower.aclose()
    finally:
        await worker.aclose()


async def test_a_runner_without_a_broker_cancels_only_its_own_runs() -> None:
    runner = Runner(slow_agent(delay=0.05))
    session = await runner.begin(RunRequest(message="count", principal=ALICE))
    events: list[RunEvent] = []
    async for event in session.events():
        events.append(event)
        if isinstance(event, TextDelta) and len(events) < 5:
            assert not await runner.request_cancel(session.run_id, MALLORY)
            assert not await runner.request_cancel(session.run_id, ALICE_ELSEWHERE)
            assert await runner.request_cancel(session.run_id, ALICE)
    assert isinstance(events[-1], RunCancelled)
    assert not await runner.request_cancel("elsewhere", ALICE)


async def test_a_long_run_does_not_stop_finished_runs_from_expiring() -> None:
    """LocalBroker keeps the newest ``keep`` runs: a run still going at the front of the queue
    must not make it keep every run that finished after it."""
    broker = LocalBroker(keep=2)
    long_runner = Runner(slow_agent(delay=0.05), broker=broker)
    runner = Runner(slow_agent(), broker=broker)
    await long_runner.start()
    await runner.start()
    long_run = await long_runner.begin(RunRequest(message="count", principal=ALICE))
    long_events = long_run.events()
    first = await anext(long_events)  # the long run has started and is not finished
    finished = [[e.run_id for e in await run_to_end(runner)][0] for _ in range(5)]
    for run_id in finished[:-1]:
        with pytest.raises(RunNotFound):
            await anext(broker.replay(run_id, ALICE))
    assert (await anext(broker.replay(finished[-1], ALICE))).run_id == finished[-1]
    assert await anext(broker.replay(long_run.run_id, ALICE)) == first
    long_run.cancel()
    assert isinstance([event async for event in long_events][-1], RunCancelled)
    await broker.aclose()


async def test_the_local_broker_keeps_only_the_latest_events_of_a_long_run() -> None:
    broker = LocalBroker(max_events=100)
    provider = ScriptedProvider({"turns": [{"text": [f"w{i} " for i in range(500)]}]})
    runner = Runner(Agent(model=provider), broker=broker)
    await runner.start()
    events = await run_to_end(runner)
    kept = [e async for e in broker.replay(events[0].run_id, ALICE)]
    assert 50 <= len(kept) <= 100
    assert kept == events[-len(kept) :]  # the latest, in order, ending with the terminal event
    assert [
        e async for e in broker.replay(events[0].run_id, ALICE, after=events[-3].seq)
    ] == events[-2:]


async def test_a_slow_follower_misses_nothing_and_old_events_go_once_read() -> None:
    """A model can write faster than a client reads: events a reader has not passed are
    kept (the response that started a run is such a reader), and let go once it has."""
    broker = LocalBroker(max_events=20)
    provider = ScriptedProvider({"turns": [{"text": [f"w{i} " for i in range(200)]}]})
    runner = Runner(Agent(model=provider), broker=broker)
    await runner.start()
    session = await runner.begin(RunRequest(message="count", principal=ALICE))
    followed: list[RunEvent] = []
    async for event in broker.replay(session.run_id, ALICE):
        followed.append(event)
        await asyncio.sleep(0.001)  # slower than the run, which never waits for the model
    assert [e.seq for e in followed] == list(range(len(followed)))  # every event, in order
    assert isinstance(followed[-1], RunCompleted) and len(followed) > 200
    kept = [e async for e in broker.replay(session.run_id, ALICE)]
    assert len(kept) <= 20 and kept == followed[-len(kept) :]


async def test_redis_keeps_a_long_run_reachable() -> None:
    """Each flush renews the run's expiry, its owner included: a run longer than the TTL can
    still be replayed and stopped from another worker."""
    import redis.asyncio as aioredis

    prefix = f"agentstream-test:{uuid.uuid4().hex}:"
    broker = RedisBroker(REDIS_URL, prefix=prefix, ttl=30)
    # Paced: the run (in its own task) is still producing when the owner key is shortened.
    runner = Runner(slow_agent(delay=0.1), broker=broker)
    await runner.start()
    session = await runner.begin(RunRequest(message="count", principal=ALICE))
    client = aioredis.Redis.from_url(REDIS_URL)
    await client.expire(f"{prefix}run:{session.run_id}:owner", 1)  # about to lapse
    [event async for event in session.events()]
    await session.wait()  # the run's task flushes its last events to Redis
    assert await client.ttl(f"{prefix}run:{session.run_id}:owner") > 1
    assert [e async for e in broker.replay(session.run_id, ALICE)][-1].type == "run_completed"
    await client.aclose()
    await broker.aclose()


async def test_the_local_broker_lets_go_of_the_run_that_finished_longest_ago() -> None:
    broker = LocalBroker(keep=3)
    for run_id in ("r0", "r1", "r2"):
        await broker.open_run(run_id, ALICE)
    for run_id in ("r1", "r0", "r2"):  # r1 finishes first although r0 was opened first
        await broker.close_run(run_id)
    await broker.open_run("r3", ALICE)
    with pytest.raises(RunNotFound):
        await anext(broker.replay("r1", ALICE))
    for run_id in ("r0", "r2"):
        assert [e async for e in broker.replay(run_id, ALICE)] == []  # kept, and finished
    await broker.aclose()


async def test_where_a_runs_log_stands_from_any_worker(make_broker: Any) -> None:
    worker_a = Runner(slow_agent(delay=0.05), broker=make_broker())
    worker_b = Runner(slow_agent(), broker=make_broker())
    await worker_a.start()
    await worker_b.start()
    session = await worker_a.begin(RunRequest(message="count", principal=ALICE))
    async for event in session.events():
        if isinstance(event, TextDelta):
            break
    ended = worker_b.broker.end_of
    going = await ended(session.run_id, ALICE)
    assert not going.done and going.last >= event.seq
    await session.wait()
    await worker_a.settle()
    events = [e async for e in worker_b.broker.replay(session.run_id, ALICE)]
    assert await ended(session.run_id, ALICE) == LogEnd(events[-1].seq, True)
    for stranger, run_id in ((MALLORY, session.run_id), (ALICE, "no-such-run")):
        with pytest.raises(RunNotFound):
            await ended(run_id, stranger)


async def test_which_runs_no_live_worker_holds() -> None:
    """Redis: runs without a lease one lease period after they were listed; a run whose
    worker holds it is not among them. In process: nothing can be proved, nothing listed."""
    prefix = f"agentstream-test:{uuid.uuid4().hex}:"
    worker = RedisBroker(REDIS_URL, prefix=prefix, lease=1.0)
    other = RedisBroker(REDIS_URL, prefix=prefix, lease=1.0)
    long = ScriptedProvider({"turns": [{"text": ["w "] * 10_000}], "delay": 0.01})
    runner = Runner(Agent(model=long), broker=worker)
    await runner.start()
    await other.start(lambda *_: False)
    listed: list[int] = []

    async def running() -> list[str]:
        listed.append(1)
        return [session.run_id, "left-by-a-dead-worker"]

    try:
        session = await runner.begin(RunRequest(message="count", principal=ALICE))
        assert await other.abandoned(running) == ["left-by-a-dead-worker"]
        assert await worker.abandoned(running) == ["left-by-a-dead-worker"]  # not its own
        assert await LocalBroker().abandoned(running) == () and len(listed) == 2
        session.cancel()
        await session.wait()
    finally:
        await runner.aclose()
        await other.aclose()
