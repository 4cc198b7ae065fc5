"""What a run is billed for, however it ends: the vendor's counts where it sent them, the
prompt's count a vendor sent as a call started, and estimates (marked) for the rest."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from agentstream import Agent
from agentstream.agent.usage import estimate_tokens
from agentstream.events import RunCancelled, RunCompleted, TextDelta, Usage
from agentstream.providers.base import (
    ChatRequest,
    MessageComplete,
    MessageStart,
    ProviderEvent,
    TextChunk,
)
from agentstream.providers.scripted import ScriptedProvider


class Hanging:
    """A vendor that says how long the prompt is, writes a little, then waits for good."""

    name = "fake"
    model = "hanging"

    def __init__(self, counted: Usage | None) -> None:
        self.counted = counted

    async def stream(self, request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        yield MessageStart(model="hanging-2026", usage=self.counted)
        yield TextChunk(text="x" * 40)
        await asyncio.sleep(3600)
        yield MessageComplete(stop_reason="end_turn")


async def stopped_after_the_first_text(counted: Usage | None) -> tuple[Usage, bool]:
    run = Agent(model=Hanging(counted)).run("What is the status of the billing page?")
    async for event in run:
        if isinstance(event, TextDelta):
            run.cancel()
        if isinstance(event, RunCancelled):
            break
    return run.usage.usage, run.usage.estimated


async def test_a_call_cut_short_counts_the_vendors_prompt_and_estimates_the_output() -> None:
    used, estimated = await stopped_after_the_first_text(
        Usage(input_tokens=1200, cache_read_tokens=1000)
    )
    assert estimated
    assert used.input_tokens == 1200 and used.cache_read_tokens == 1000
    assert used.output_tokens == estimate_tokens(40) == 10


async def test_a_call_cut_short_before_the_vendor_counted_estimates_the_prompt_too() -> None:
    used, estimated = await stopped_after_the_first_text(None)
    assert estimated
    assert used.input_tokens > 0  # the request's size, about four characters a token
    assert used.output_tokens == 10


async def test_completed_calls_are_billed_as_the_vendor_reported_or_estimated() -> None:
    reported = {
        "turns": [{"text": ["Hi ", "there."], "usage": {"input_tokens": 9, "output_tokens": 3}}]
    }
    run = Agent(model=ScriptedProvider(reported)).run("hello")
    events = [event async for event in run]
    assert isinstance(events[-1], RunCompleted)
    assert (run.usage.usage.input_tokens, run.usage.usage.output_tokens) == (9, 3)
    assert not run.usage.estimated

    silent = {"turns": [{"text": ["Hi ", "there."]}]}  # a server that sends no usage
    run = Agent(model=ScriptedProvider(silent)).run("hello")
    events = [event async for event in run]
    assert events[-1].usage == Usage()  # what the vendor said, as every protocol shows it
    assert run.usage.estimated
    assert run.usage.usage.output_tokens == estimate_tokens(len("Hi there."))
    assert run.usage.usage.input_tokens > 0
