"""A worker process for the takeover tests: a slow scripted model that answers in three
rounds (a tool that must not run twice, an idempotent one, then a long answer), on a store
and Redis given on the command line. Each tool writes a line to a ledger file as it starts
and as it ends, so a test counts how often it ran.

Run: ``python takeover_worker.py DATABASE_URL REDIS_URL PREFIX LEASE PORT LEDGER``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import uvicorn

from agentstream import Agent, ToolContext, tool
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import RedisBroker
from agentstream.server.app import create_app
from agentstream.server.settings import Settings
from agentstream.store import SqlConversationStore, create_engine

TOOL_SECONDS = 1.5

SCRIPT = {
    "delay": 0.05,
    "turns": [
        {
            "text": "Charging the card now. ",
            "tool_calls": [{"name": "charge", "arguments": {"amount": 5}}],
        },
        {
            "text": "Charged; looking the order up. ",
            "tool_calls": [{"name": "lookup", "arguments": {"order": "A-17"}}],
        },
        {"text": " ".join(f"word{n}" for n in range(60)) + " done."},
    ],
}


def main() -> None:
    database_url, redis_url, prefix, lease, port, ledger = sys.argv[1:]
    path = Path(ledger)

    def note(ctx: ToolContext, what: str) -> None:
        with path.open("a") as out:
            out.write(f"{ctx.run_id} {ctx.tool_name} {ctx.call_id} {what}\n")

    @tool
    async def charge(ctx: ToolContext, amount: int) -> str:
        """Charge the customer's card (must never run twice)."""
        note(ctx, "start")
        await asyncio.sleep(TOOL_SECONDS)
        note(ctx, "end")
        return f"charged {amount}"

    @tool(idempotent=True)
    async def lookup(ctx: ToolContext, order: str) -> str:
        """Look an order up."""
        note(ctx, "start")
        await asyncio.sleep(TOOL_SECONDS)
        note(ctx, "end")
        return f"order {order}: shipped"

    agent = Agent(model=ScriptedProvider(SCRIPT), tools=[charge, lookup])
    app = create_app(
        agent,
        settings=Settings(
            host="127.0.0.1",
            drain_seconds=float(os.environ.get("AGENTSTREAM_DRAIN_SECONDS", "30")),
        ),
        store=SqlConversationStore(create_engine(database_url)),
        broker=RedisBroker(redis_url, prefix=prefix, lease=float(lease), block_ms=500),
    )
    uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning")


if __name__ == "__main__":
    main()
