"""Agents the telemetry tests serve with ``agentstream serve tests.telemetry.agents:NAME``."""

from __future__ import annotations

from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider

slow = Agent(model=ScriptedProvider({"turns": [{"text": ["tick "] * 400}], "delay": 0.05}))
"""Streams a word every 50 ms for 20 s: long enough to follow and stop from elsewhere."""

quick = Agent(
    model=ScriptedProvider(
        {
            "turns": [
                {"text": ["Hello ", "there."], "usage": {"input_tokens": 7, "output_tokens": 3}}
            ]
        }
    )
)
"""Answers at once, with the vendor's usage."""


def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"{topic}: found"


tools = Agent(
    model=ScriptedProvider(
        {
            "rules": [
                {"match": "slow", "turns": [{"text": ["tick "] * 400, "delay": 0.05}]},
                {
                    "turns": [
                        {
                            "text": ["Looking."],
                            "tool_calls": [{"name": "lookup", "arguments": {"topic": "x"}}],
                            "usage": {"input_tokens": 11, "output_tokens": 4},
                        },
                        {"text": ["Found it."], "usage": {"input_tokens": 20, "output_tokens": 3}},
                    ]
                },
            ]
        }
    ),
    tools=[lookup],
)
"""Calls a tool then answers, with the vendor's usage; streams for 20 s when asked "slow"."""
