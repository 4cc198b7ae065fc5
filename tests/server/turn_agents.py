"""The agent ``test_double_texting_workers`` serves in two processes: each answer holds a mark
in a directory both processes share for a second, and says whether another answer held it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider


async def occupy() -> str:
    """Hold the conversation for a second."""
    mark = Path(os.environ["DOUBLE_TEXTING_DIR"]) / "answering"
    try:
        handle = os.open(mark, os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        return "overlap"
    try:
        await asyncio.sleep(1.0)
    finally:
        os.close(handle)
        mark.unlink()
    return "alone"


agent = Agent(
    model=ScriptedProvider(
        {
            "rules": [
                {
                    "match": "^go$",
                    "turns": [
                        {"text": ["Working."], "tool_calls": [{"name": "occupy", "arguments": {}}]},
                        {"text": ["Done."]},
                    ],
                },
                {"turns": [{"text": ["Hello."]}]},
            ]
        }
    ),
    tools=[occupy],
)
