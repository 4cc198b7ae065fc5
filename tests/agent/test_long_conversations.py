"""Conversations longer than the model's window go on answering.

Every vendor's official SDK talks to a fake of its upstream that enforces a window and refuses
what does not fit with that vendor's real error (:mod:`tests.providers.fakes.window`), counting
each request higher than agentstream's estimate does. The loop fits each request into the
window, and a refusal is sent again smaller, once, and learned from, so later turns are not
refused. What the model is sent changes; what the run keeps does not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from agentstream import Agent, RunInput, tool
from agentstream.agent import ContextLimits
from agentstream.agent.compaction import placeholder
from agentstream.events import RunCompleted, RunEvent, RunFailed, RunWarning, ToolCallFinished
from agentstream.messages import Message, ToolResultsMessage, UserMessage
from agentstream.providers._retry import RetryPolicy
from agentstream.providers.base import Provider
from agentstream.providers.openai import OpenAIProvider
from agentstream.providers.profiles import ModelProfiles
from tests.attachments.samples import IMAGE
from tests.providers.fakes import FakeCall, anthropic, google, ollama, openai, openai_responses
from tests.providers.fakes.server import FakeUpstream, Recorded
from tests.providers.fakes.window import Window
from tests.strict_upstream import StrictUpstream

from .test_files import Kept

VENDORS = [anthropic, openai, openai_responses, google, ollama]
WINDOW = 3_000
RESERVE = 200
"""The answer's limit: the agents' ``max_tokens``."""
FAST = RetryPolicy(max_attempts=2, initial_delay=0.01, max_delay=0.02)


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeUpstream]:
    server = FakeUpstream().start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _reset(upstream: FakeUpstream) -> Iterator[None]:
    upstream.reset()
    yield
    upstream.reset()


def agent_for(provider: Provider, window: int | None = WINDOW, **kw: Any) -> Agent:
    described = {"context_window": window} if window else {}
    model = f"{provider.name}:{provider.model}"
    profiles = ModelProfiles().with_profiles({model: described}) if described else ModelProfiles()
    return Agent(model=provider, max_tokens=RESERVE, profiles=profiles, **kw)


async def converse(
    agent: Agent, turns: int, *, size: int = 100, files: Kept | None = None
) -> tuple[list[Message], list[list[RunEvent]]]:
    """``turns`` user messages, each answered, the history carried from run to run."""
    history: list[Message] = []
    runs: list[list[RunEvent]] = []
    for turn in range(turns):
        attachments = (IMAGE,) if files is not None and turn % 3 == 0 else ()
        user = UserMessage(content=f"Message {turn}: " + "m" * size, attachments=attachments)
        run = agent.run(
            RunInput(message=user.content, attachments=attachments, history=history, files=files)
        )
        events = [event async for event in run]
        assert isinstance(events[-1], RunCompleted), (turn, events[-1])
        history = [*history, user, *run.new_messages]
        runs.append(events)
    return history, runs


def warnings(runs: list[list[RunEvent]], code: str) -> int:
    return sum(1 for events in runs for e in events if isinstance(e, RunWarning) and e.code == code)


@pytest.mark.parametrize("vendor", VENDORS, ids=[v.name for v in VENDORS])
async def test_a_500_turn_conversation_keeps_answering(
    upstream: FakeUpstream, vendor: ModuleType
) -> None:
    window = Window(vendor, WINDOW, RESERVE, answer=lambda _: vendor.text("Noted, " + "a" * 80))
    upstream.respond = window
    agent = agent_for(vendor.provider(upstream, retry=FAST))

    history, runs = await converse(agent, 500)

    # Nothing is lost from the conversation: every message and every answer is kept.
    assert len(history) == 1_000
    assert [m.content for m in history[::2]] == [  # type: ignore[union-attr]
        f"Message {turn}: " + "m" * 100 for turn in range(500)
    ]
    # The estimate runs low for this upstream: the first refusal is sent again smaller and
    # learned from, and no later turn is refused.
    assert len(window.refused) == 1
    assert warnings(runs, "context_overflow") == 1
    assert warnings(runs, "context_compacted") > 400
    assert max(size for size in window.sizes if size not in window.refused) <= WINDOW - RESERVE


@pytest.mark.parametrize("vendor", VENDORS, ids=[v.name for v in VENDORS])
async def test_a_model_nobody_described_pays_the_retry_once(
    upstream: FakeUpstream, vendor: ModuleType
) -> None:
    window = Window(vendor, WINDOW, RESERVE, answer=lambda _: vendor.text("Noted."))
    upstream.respond = window
    agent = agent_for(vendor.provider(upstream, retry=FAST, model="house-model"), window=None)

    _, runs = await converse(agent, 100)

    assert len(window.refused) == 1
    assert warnings(runs, "context_overflow") == 1
    # The next agent of this process knows nothing yet; this one keeps what it learned.
    assert agent.learned_windows.get(f"{agent.model_id}") is not None


async def test_a_refusal_after_the_retry_fails_the_run(upstream: FakeUpstream) -> None:
    upstream.respond = Window(openai, 100, RESERVE)
    agent = agent_for(openai.provider(upstream, retry=FAST), window=None)

    events = [e async for e in agent.run("Hello " + "x" * 1_000)]

    failed = events[-1]
    assert isinstance(failed, RunFailed) and failed.kind == "context_overflow"
    assert failed.message.startswith("OpenAI: the conversation is longer than the model's")
    assert len(upstream.posts) == 2


async def test_compaction_can_be_turned_off(upstream: FakeUpstream) -> None:
    window = Window(openai, WINDOW, RESERVE, answer=lambda _: openai.text("Noted."))
    upstream.respond = window
    agent = agent_for(
        openai.provider(upstream, retry=FAST), context_limits=ContextLimits(compact=False)
    )
    history = [UserMessage(content="word " * 5_000)]

    events = [e async for e in agent.run(RunInput(message="And?", history=history))]

    assert isinstance(events[-1], RunFailed) and events[-1].kind == "context_overflow"
    assert len(upstream.posts) == 1


LOG = "request served in 12 ms\n" * 2_000


@tool
async def logs(service: str) -> str:
    """Read a service's logs.

    Args:
        service: Which service.
    """
    return f"{service}: " + LOG


def tool_then_text(recorded: Recorded) -> Any:
    """A model that reads the logs once per user message, then answers."""
    last = recorded.json["messages"][-1]
    if last["role"] == "user":
        return openai.tool_calls("", FakeCall("c1", "logs", (json.dumps({"service": "api"}),)))
    return openai.text("The logs look fine.")


async def test_large_tool_results_and_files_stay_within_the_window(
    upstream: FakeUpstream,
) -> None:
    window = Window(openai, WINDOW * 4, RESERVE, answer=tool_then_text)
    upstream.respond = window
    agent = agent_for(openai.provider(upstream, retry=FAST), window=WINDOW * 4, tools=[logs])

    history, runs = await converse(agent, 30, files=Kept())

    accepted = [size for size in window.sizes if size not in window.refused]
    assert max(accepted) <= WINDOW * 4 - RESERVE
    # The first answer's result was cut; later ones also leave earlier messages out.
    told = [[e.message for e in events if isinstance(e, RunWarning)] for events in runs]
    assert told[0] == [
        "A tool result is longer than the model's context window allows: the model reads it "
        "cut down."
    ]
    assert "reads the latest messages in full" in told[-1][0]
    assert len(window.refused) <= 1
    last = upstream.posts[-1].body.decode()
    assert "Result cut to fit the model's context window" in last
    assert json.dumps(placeholder([IMAGE.name]))[1:-1] in last
    # The run keeps every result whole, and every file.
    results = [m for m in history if isinstance(m, ToolResultsMessage)]
    assert len(results) == 30
    assert all(r.results[0].content == "api: " + LOG for r in results)
    finished = [e for events in runs for e in events if isinstance(e, ToolCallFinished)]
    assert [e.result for e in finished] == ["api: " + LOG] * 30  # what the UI is shown
    assert sum(len(m.attachments) for m in history if isinstance(m, UserMessage)) == 10


async def test_the_strict_upstream_accepts_every_request_of_a_long_conversation() -> None:
    upstream = StrictUpstream(window=WINDOW).start()
    try:
        provider = OpenAIProvider("strict", api_key="sk-test", base_url=upstream.url)
        profiles = ModelProfiles().with_profiles({"openai:strict": {"context_window": WINDOW}})

        @tool
        async def lookup(round: int) -> dict[str, int]:
            """Look something up.

            Args:
                round: Which round of lookups this is.
            """
            return {"round": round}

        agent = Agent(model=provider, tools=[lookup], max_tokens=RESERVE, profiles=profiles)
        history, _ = await converse(agent, 200, size=60)
    finally:
        upstream.stop()
    assert upstream.refused == []  # no tool call was ever sent without its result
    assert upstream.too_long <= 1
    assert upstream.requests == 600 + upstream.too_long
    assert len(history) == 200 * 6
