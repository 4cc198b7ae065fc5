"""What a run costs on the path workers share: the runner with the Redis broker, no store.

Runs of a scripted model at zero delay (``--rounds`` tool rounds of ``--deltas`` text deltas
each, then an answer) through :class:`~agentstream.runs.Runner` with a
:class:`~agentstream.runs.RedisBroker` on 127.0.0.1:6379, one after another, each read to its
end by its first reader. Printed: milliseconds per run and microseconds per event (median of
``--repeats``). What a takeover adds to this path is one wait per tool round, for the round's
calls to reach Redis before its tools start; the look for runs of workers that died runs
beside it, once a second, and costs nothing per event. Compare two checkouts with the same
script::

    .venv/bin/python bench/redis_run_path.py [--runs 30] [--rounds 10] [--deltas 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid

from agentstream import Agent, Principal, tool
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import RedisBroker, Runner, RunRequest


@tool
async def noop(n: int) -> int:
    """Return n."""
    return n


def script(rounds: int, deltas: int) -> dict[str, object]:
    turns: list[dict[str, object]] = [
        {"text": ["x "] * deltas, "tool_calls": [{"name": "noop", "arguments": {"n": i}}]}
        for i in range(rounds)
    ]
    turns.append({"text": ["done "] * deltas})
    return {"turns": turns}


async def measure(runs: int, rounds: int, deltas: int) -> tuple[float, float]:
    agent = Agent(model=ScriptedProvider(script(rounds, deltas)), tools=[noop])
    broker = RedisBroker(prefix=f"agentstream-bench:{uuid.uuid4().hex}:")
    runner = Runner(agent, broker=broker)
    await runner.start()
    principal = Principal(user_id="bench")
    events = 0
    try:
        began = time.perf_counter()
        for _ in range(runs):
            session = await runner.begin(RunRequest(message="go", principal=principal))
            async for _event in session.events():
                events += 1
        spent = time.perf_counter() - began
    finally:
        await runner.aclose()
    return spent / runs * 1000, spent / events * 1e6


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--deltas", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    await measure(3, args.rounds, args.deltas)  # warm up
    figures = [await measure(args.runs, args.rounds, args.deltas) for _ in range(args.repeats)]
    per_run = statistics.median(f[0] for f in figures)
    per_event = statistics.median(f[1] for f in figures)
    print(f"{'':24}{'ms/run':>10}{'us/event':>10}")
    print(f"{'runner + Redis broker':24}{per_run:10.2f}{per_event:10.2f}")


if __name__ == "__main__":
    asyncio.run(main())
