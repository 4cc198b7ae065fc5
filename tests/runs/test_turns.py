"""A conversation held by one run at a time, across brokers sharing one backend (one process,
or one Redis namespace): exclusive under a race, freed by its holder, and lost by a holder
whose worker died once its lease lapses."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentstream import Principal
from agentstream.runs import LocalBroker, RedisBroker, RunBroker

REDIS_URL = "redis://127.0.0.1:6379/0"
ALICE = Principal(user_id="alice", tenant_id="acme")
MALLORY = Principal(user_id="mallory", tenant_id="acme")


@pytest.fixture(params=["local", "redis"])
async def brokers(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """``brokers(n, lease=...)``: ``n`` brokers on one backend, as ``n`` workers."""
    prefix = f"agentstream-test:{uuid.uuid4().hex}:"
    made: list[RunBroker] = []
    shared = LocalBroker()

    def make(n: int, lease: float = 15.0) -> list[RunBroker]:
        for _ in range(n):
            made.append(
                shared
                if request.param == "local"
                else RedisBroker(REDIS_URL, prefix=prefix, lease=lease, block_ms=200)
            )
        return made[-n:]

    yield make
    for broker in made:
        await broker.aclose()


async def test_one_run_holds_a_conversation_however_many_race_for_it(brokers: Any) -> None:
    first, second = brokers(2)
    runs = [f"run-{n}" for n in range(40)]
    holders = await asyncio.gather(
        *((first if n % 2 else second).hold(run_id, ALICE, "c1") for n, run_id in enumerate(runs))
    )
    winners = [run_id for run_id, holder in zip(runs, holders, strict=True) if holder is None]
    assert len(winners) == 1
    assert set(holders) == {None, winners[0]}  # every other run is told who holds it
    assert await second.active_run("c1", ALICE) == winners[0]
    # Another owner's conversation of the same id is another conversation.
    assert await first.hold("mallory-run", MALLORY, "c1") is None

    holder = first if runs.index(winners[0]) % 2 else second
    await holder.release(winners[0])
    await holder.release(winners[0])  # again is nothing
    assert await second.hold("next", ALICE, "c1") is None
    assert await first.hold("late", ALICE, "c1") == "next"


async def test_a_waiter_takes_its_turn_soon_after_a_release(brokers: Any) -> None:
    first, second = brokers(2)
    assert await first.hold("r1", ALICE, "c1") is None

    async def wait_turn() -> float:
        while await second.hold("r2", ALICE, "c1") is not None:
            await second.freed(ALICE, "c1", 30)
        return time.monotonic()

    waiting = asyncio.create_task(wait_turn())
    await asyncio.sleep(0.3)
    assert not waiting.done()
    released = time.monotonic()
    await first.release("r1")
    # Woken at once in one process; another worker looks again every 50 ms.
    assert await waiting - released < 0.5


async def test_a_dead_workers_hold_lapses_with_its_lease() -> None:
    prefix = f"agentstream-test:{uuid.uuid4().hex}:"
    dead = RedisBroker(REDIS_URL, prefix=prefix, lease=1.0)
    alive = RedisBroker(REDIS_URL, prefix=prefix, lease=1.0)
    await dead.start(lambda *_: False)
    try:
        assert await dead.hold("r1", ALICE, "c1") is None
        await asyncio.sleep(1.5)  # renewed meanwhile: still held
        assert await alive.hold("r2", ALICE, "c1") == "r1"
        await dead.aclose()  # its renewals stop, as when its process is killed; no release
        began = time.monotonic()
        while (holder := await alive.hold("r2", ALICE, "c1")) is not None:
            assert holder == "r1"
            assert time.monotonic() - began < 5, "the dead worker's hold never lapsed"
            await alive.freed(ALICE, "c1", 0.1)
        assert await alive.active_run("c1", ALICE) == "r2"
        # A holder whose lease lapsed (a worker stalled, not dead) and that lets go late does
        # not drop the key of the run that took over. (Never started: it renews nothing.)
        stalled = RedisBroker(REDIS_URL, prefix=prefix, lease=1.0)
        try:
            assert await stalled.hold("r3", ALICE, "c2") is None
            while await alive.hold("r4", ALICE, "c2") is not None:
                assert time.monotonic() - began < 10
                await alive.freed(ALICE, "c2", 0.1)
            await stalled.release("r3")
        finally:
            await stalled.aclose()
        observer = RedisBroker(REDIS_URL, prefix=prefix)  # asks Redis, not its own memory
        try:
            assert await observer.hold("r5", ALICE, "c2") == "r4"
        finally:
            await observer.aclose()
    finally:
        await alive.aclose()


async def test_queued_runs_take_their_turns_in_the_order_they_were_stored(brokers: Any) -> None:
    """The later message starts waiting first and is woken first, yet the earlier one goes
    first: a run that holds the conversation lets it go while one stored before it waits."""
    from agentstream.agent import CancelToken
    from agentstream.runs.turns import wait_turn

    first, second = brokers(2)
    assert await first.hold("answering", ALICE, "c1") is None
    for broker, run_id in ((first, "earlier"), (second, "later")):
        await broker.open_run(run_id, ALICE)  # open, so alive while they wait
    order: list[str] = []
    stored = ["answering", "earlier", "later"]

    async def queued(broker: RunBroker, run_id: str) -> None:
        async def before() -> list[str]:
            return stored[1 : stored.index(run_id)]  # the answer ended: no longer running

        assert await wait_turn(broker, ALICE, "c1", run_id, CancelToken(), before)
        order.append(run_id)
        await asyncio.sleep(0.2)  # its answer
        await broker.release(run_id)
        stored.remove(run_id)

    later = asyncio.create_task(queued(second, "later"))
    await asyncio.sleep(0.3)
    earlier = asyncio.create_task(queued(first, "earlier"))
    await asyncio.sleep(0.3)
    await first.release("answering")
    await asyncio.wait_for(asyncio.gather(later, earlier), 10)
    assert order == ["earlier", "later"]
