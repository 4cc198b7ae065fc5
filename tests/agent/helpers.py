"""Small helpers for driving the loop in tests."""

from __future__ import annotations

from typing import Any

from agentstream import Agent, RunInput
from agentstream.events import RunEvent
from agentstream.providers.scripted import ScriptedProvider


def scripted(*turns: dict[str, Any], delay: float = 0.0) -> ScriptedProvider:
    return ScriptedProvider({"turns": list(turns), "delay": delay})


async def collect(agent: Agent, run_input: RunInput | str = "hi") -> list[RunEvent]:
    return [event async for event in agent.run(run_input)]


def types(events: list[RunEvent]) -> list[str]:
    return [e.type for e in events]


def of_type(events: list[RunEvent], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]
