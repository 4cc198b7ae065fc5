"""Helpers for running chat mechanisms through the real runner with the scripted model."""

from __future__ import annotations

from typing import Any

from agentstream import Agent
from agentstream.chat import ChatConfig, ChatHooks
from agentstream.events import AnswerShaped, RunCompleted, RunEvent
from agentstream.principal import Principal
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import Runner, RunRequest

USER = Principal(user_id="u1", token="tok-secret-bearer-123456")


def scripted(*turns: dict[str, Any]) -> ScriptedProvider:
    return ScriptedProvider({"turns": list(turns)})


async def run_chat(
    agent: Agent, config: ChatConfig | None = None, **request: Any
) -> list[RunEvent]:
    """Run one request through ``Runner(agent, hooks=ChatHooks(config))``."""
    runner = Runner(agent, hooks=ChatHooks(config))
    request.setdefault("message", "hello")
    request.setdefault("principal", USER)
    session = await runner.begin(RunRequest(**request))
    return [event async for event in session.events()]


def completed(events: list[RunEvent]) -> RunCompleted:
    last = events[-1]
    assert isinstance(last, RunCompleted), f"the run did not complete: {last}"
    return last


def shaped(events: list[RunEvent]) -> AnswerShaped:
    """The answer as the chat hooks shaped it (the event just before ``run_completed``)."""
    completed(events)
    [shown] = [event for event in events if isinstance(event, AnswerShaped)]
    return shown


def provider_of(agent: Agent) -> ScriptedProvider:
    assert isinstance(agent.model, ScriptedProvider)
    return agent.model
