"""How much the agent loop costs per event.

A run of 10,000 streamed text deltas and 100 tool calls through the loop with the scripted
model at zero delay. The scripted model's own cost (building provider events) is measured
alone and subtracted, leaving the loop's cost: assembling turns, running tools, building and
sequencing canonical events, handing them to the consumer.

    .venv/bin/python bench/loop_overhead.py
"""

from __future__ import annotations

import asyncio
import statistics
import time
from contextlib import aclosing

from agentstream import Agent
from agentstream.messages import AssistantMessage, ToolResultPart, ToolResultsMessage, UserMessage
from agentstream.providers.base import ChatRequest
from agentstream.providers.scripted import ScriptedProvider
from agentstream.tools import tool

TOOL_TURNS = 100
DELTAS_PER_TURN = 100
REPEATS = 7


@tool
async def noop(n: int) -> int:
    """Return n."""
    return n


def script() -> dict[str, object]:
    chunks = [f"w{i} " for i in range(DELTAS_PER_TURN)]
    turns: list[dict[str, object]] = [
        {"text": chunks, "tool_calls": [{"name": "noop", "arguments": {"n": t}}]}
        for t in range(TOOL_TURNS)
    ]
    turns.append({"text": ["done"]})
    return {"turns": turns}


async def run_loop() -> tuple[float, int]:
    agent = Agent(model=ScriptedProvider(script()), tools=[noop], max_turns=TOOL_TURNS + 1)
    count = 0
    started = time.perf_counter()
    async for _ in agent.run("go"):
        count += 1
    return time.perf_counter() - started, count


async def run_provider_alone() -> float:
    """The same provider events, produced by the scripted model without the loop."""
    provider = ScriptedProvider(script())
    messages: list[object] = [UserMessage(content="go")]
    started = time.perf_counter()
    for turn in range(TOOL_TURNS + 1):
        request = ChatRequest(system="", messages=tuple(messages))  # type: ignore[arg-type]
        async with aclosing(provider.stream(request)) as stream:
            async for _ in stream:
                pass
        messages.append(AssistantMessage(text="x"))
        part = ToolResultPart(tool_call_id=str(turn), name="noop", content="1")
        messages.append(ToolResultsMessage(results=(part,)))
    return time.perf_counter() - started


async def main() -> None:
    loop_times, provider_times = [], []
    events = 0
    for _ in range(REPEATS):
        elapsed, events = await run_loop()
        loop_times.append(elapsed)
        provider_times.append(await run_provider_alone())
    total = statistics.median(loop_times)
    provider = statistics.median(provider_times)
    print(f"run: {TOOL_TURNS * DELTAS_PER_TURN:,} text deltas + {TOOL_TURNS} tool calls "
          f"-> {events:,} canonical events (median of {REPEATS})")  # fmt: skip
    rows = [
        ("loop + scripted model", total, events / total),
        ("scripted model alone", provider, None),
        ("the loop's own cost", total - provider, events / (total - provider)),
    ]
    print(f"{'':28}{'total ms':>10}{'events/s':>12}{'us/event':>10}")
    for label, seconds, rate in rows:
        rate_text = f"{rate:12,.0f}" if rate else " " * 12
        print(f"{label:28}{seconds * 1e3:10.1f}{rate_text}{seconds / events * 1e6:10.2f}")


if __name__ == "__main__":
    asyncio.run(main())
