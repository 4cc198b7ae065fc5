"""Cancelling a run at any moment leaves nothing behind."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentstream import Agent, CancelToken, RunInput, tool
from agentstream.events import RunCancelled, TextDelta, ToolCallArgs
from agentstream.messages import AssistantMessage, ToolResultsMessage

from .helpers import scripted, types


async def test_cancel_token_during_text_streaming(no_leftover_tasks: Any) -> None:
    provider = scripted({"text": ["one ", "two ", "three ", "four"]}, delay=0.05)
    token = CancelToken()
    run = Agent(model=provider).run(RunInput(message="count", cancel=token))
    events = []
    async for event in run:
        events.append(event)
        if isinstance(event, TextDelta):
            token.cancel("user pressed stop")
    assert isinstance(events[-1], RunCancelled) and events[-1].reason == "user pressed stop"
    assert types(events).count("text_delta") == 1
    assert provider.closed_early == 1
    assert run.new_messages == [AssistantMessage(text="one ")]
    no_leftover_tasks.assert_clean()


async def test_cancel_during_a_tool_cancels_the_tool(no_leftover_tasks: Any) -> None:
    tool_cancelled = asyncio.Event()

    @tool
    async def wait_forever() -> str:
        """Never finishes on its own."""
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            tool_cancelled.set()
            raise
        return "never"

    @tool
    async def quick() -> str:
        """Finishes at once."""
        return "quick result"

    provider = scripted(
        {"text": "Working.", "tool_calls": [{"id": "q", "name": "quick"}, {"id": "w", "name": "wait_forever"}]},
        {"text": "unreachable"},
    )  # fmt: skip
    run = Agent(model=provider, tools=[wait_forever, quick]).run("go")
    events = []
    async for event in run:
        events.append(event)
        if event.type == "tool_call_finished":
            run.cancel()
    assert isinstance(events[-1], RunCancelled)
    assert tool_cancelled.is_set()
    assert len(provider.requests) == 1
    results = run.new_messages[-1]
    assert isinstance(results, ToolResultsMessage)
    assert [(r.tool_call_id, r.is_error) for r in results.results] == [("q", False), ("w", True)]
    no_leftover_tasks.assert_clean()


async def test_cancelling_the_consumer_task_stops_the_run(no_leftover_tasks: Any) -> None:
    provider = scripted({"text": ["a ", "b ", "c ", "d ", "e"]}, delay=0.05)
    run = Agent(model=provider).run("go")
    first = asyncio.Event()

    async def consume() -> None:
        async for event in run:
            if isinstance(event, TextDelta):
                first.set()

    consumer = asyncio.create_task(consume())
    await first.wait()
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    assert provider.closed_early == 1
    assert run.new_messages and isinstance(run.new_messages[0], AssistantMessage)
    no_leftover_tasks.assert_clean()


async def test_cancelling_the_consumer_during_a_sync_tool(no_leftover_tasks: Any) -> None:
    import threading

    release = threading.Event()

    @tool
    def slow_sync() -> str:
        """Blocks a worker thread."""
        release.wait(timeout=5)
        return "late"

    provider = scripted({"tool_calls": [{"name": "slow_sync"}]}, {"text": "x"})
    run = Agent(model=provider, tools=[slow_sync]).run("go")
    events = []
    async for event in run:
        events.append(event)
        if isinstance(event, ToolCallArgs):
            run.cancel("stop")
    release.set()
    assert isinstance(events[-1], RunCancelled)
    no_leftover_tasks.assert_clean()


async def test_leaving_early_with_async_with_stops_the_run(no_leftover_tasks: Any) -> None:
    provider = scripted({"text": ["a ", "b ", "c"]}, delay=0.05)
    async with Agent(model=provider).run("go") as run:
        async for event in run:
            if isinstance(event, TextDelta):
                break
    assert provider.closed_early == 1
    no_leftover_tasks.assert_clean()


async def test_cancel_before_the_first_event() -> None:
    token = CancelToken()
    token.cancel("too late")
    events = [
        e
        async for e in Agent(model=scripted({"text": "hi"})).run(
            RunInput(message="x", cancel=token)
        )
    ]
    assert types(events) == ["run_cancelled"]
