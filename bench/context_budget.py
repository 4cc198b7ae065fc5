"""What fitting a conversation into the model's window costs per model call.

Before each model call the loop estimates the history's tokens and, when it does not fit,
compacts it (:mod:`agentstream.agent.budget`). This measures that step alone for histories of
10, 100 and 1,000 messages (a mix of questions, answers and tool rounds, one result in ten
large, one message in twenty with an image), for two windows: one the history fits in (only
the estimate runs) and one it overflows (results cut, earlier files named, oldest exchanges
left out). ``first`` is a run's first call (every message estimated), ``next`` a later call
of the same run (two messages more, the rest already counted).

    .venv/bin/python bench/context_budget.py
"""

from __future__ import annotations

import statistics
import time

from agentstream.agent.budget import ContextBudget, ContextLimits, LearnedWindows
from agentstream.attachments import Attachment
from agentstream.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.providers.base import ToolSpec
from agentstream.providers.profiles import ModelProfile

SIZES = (10, 100, 1_000)
WINDOWS = {"fits": 2_000_000, "overflows": 16_000}
REPEATS = 200
IMAGE = Attachment(id="a1", name="chart.png", media_type="image/png", size=80_000, sha256="0" * 64)
TOOLS = tuple(
    ToolSpec(
        name=f"tool_{n}",
        description="Look something up in the service's records. " * 3,
        parameters={"type": "object", "properties": {"query": {"type": "string"}}},
    )
    for n in range(8)
)


def history(count: int) -> list[Message]:
    messages: list[Message] = []
    n = 0
    while len(messages) < count:
        files = (IMAGE,) if n % 5 == 0 else ()
        messages.append(UserMessage(content=f"Question {n}: " + "word " * 60, attachments=files))
        if n % 2:
            call = ToolCall(id=f"c{n}", name="tool_1", arguments={"query": f"q{n}"})
            content = "row of data, " * (4_000 if n % 10 == 1 else 150)
            result = ToolResultPart(tool_call_id=f"c{n}", name="tool_1", content=content)
            messages += [
                AssistantMessage(text="Let me look.", tool_calls=(call,)),
                ToolResultsMessage(results=(result,)),
            ]
        messages.append(AssistantMessage(text="An answer of some length. " * 30))
        n += 1
    return messages[:count]


def budget(window: int) -> ContextBudget:
    return ContextBudget(
        "vendor:model",
        ModelProfile(context_window=window),
        ContextLimits(),
        LearnedWindows(),
        system="You help the on-call engineer. " * 20,
        tools=TOOLS,
    )


def measure(count: int, window: int) -> tuple[float, float, str]:
    messages = history(count)
    later = [*messages, UserMessage(content="One more?"), AssistantMessage(text="Yes.")]
    first: list[float] = []
    after: list[float] = []
    summary = ""
    for _ in range(REPEATS):
        fitting = budget(window)
        started = time.perf_counter()
        fitting.fit(messages, 4_096)
        first.append(time.perf_counter() - started)
        started = time.perf_counter()
        sent = fitting.fit(later, 4_096)
        after.append(time.perf_counter() - started)
        summary = (
            f"{len(sent.messages)} sent, ~{sent.tokens:,} tokens; cut {sent.cut}, "
            f"files named {sent.placeholders}, exchanges left out {sent.dropped}"
        )
    return statistics.median(first) * 1e6, statistics.median(after) * 1e6, summary


def main() -> None:
    print(f"{'messages':>8}  {'window':>9}  {'first µs':>9}  {'next µs':>8}  what was sent")
    for count in SIZES:
        for name, window in WINDOWS.items():
            first, after, summary = measure(count, window)
            print(f"{count:>8}  {name:>9}  {first:>9.1f}  {after:>8.1f}  {summary}")


if __name__ == "__main__":
    main()
