"""A finished run leaves no reference cycles: its objects are freed as soon as the last
reference goes, not by the garbage collector, whose pauses land in the middle of other
streams (and grow with the number of runs whose leftovers it has to walk)."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from agentstream import Agent, Principal, tool
from agentstream.chat import ChatHooks
from agentstream.events import RunCancelled, RunCompleted, TextDelta
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import Runner, RunRequest
from agentstream.store import SqlConversationStore

ALICE = Principal(user_id="alice", tenant_id="acme")


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlConversationStore]:
    opened = await SqlConversationStore.open(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
def collector() -> Iterator[None]:
    """The collector off, and what it then finds kept in ``gc.garbage`` for the test."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def left_for_the_collector() -> list[str]:
    """Our types among the objects only the collector could free (those in cycles, and
    what only they reach)."""
    gc.collect()
    return sorted(
        {type(o).__qualname__ for o in gc.garbage if type(o).__module__.startswith("agentstream")}
    )


async def test_a_run_with_a_tool_round_trip_is_freed_without_the_collector(
    store: SqlConversationStore, collector: None
) -> None:
    provider = ScriptedProvider(
        {
            "turns": [
                {
                    "text": "Looking.",
                    "tool_calls": [{"name": "lookup", "arguments": {"query": "x"}}],
                },
                {"text": ["Found ", "it."]},
            ]
        }
    )
    agent = Agent(model=provider, tools=[lookup])
    runner = Runner(agent, store=store, hooks=ChatHooks())
    for _ in range(3):
        session = await runner.begin(RunRequest(message="find x", principal=ALICE))
        events = [event async for event in session.events()]
        assert isinstance(events[-1], RunCompleted)
        await session.wait()
        del session, events
    await runner.aclose()
    assert left_for_the_collector() == []


async def test_a_cancelled_run_is_freed_without_the_collector(
    store: SqlConversationStore, collector: None
) -> None:
    provider = ScriptedProvider({"turns": [{"text": ["a ", "b ", "c ", "d "]}], "delay": 0.05})
    runner = Runner(Agent(model=provider), store=store, hooks=ChatHooks())
    session = await runner.begin(RunRequest(message="count", principal=ALICE))
    events = []
    async for event in session.events():
        events.append(event)
        if isinstance(event, TextDelta):
            session.cancel("stop")
    assert isinstance(events[-1], RunCancelled)
    await session.wait()
    del session, events
    await runner.aclose()
    assert left_for_the_collector() == []
