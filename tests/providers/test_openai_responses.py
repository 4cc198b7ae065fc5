"""OpenAI Responses API specifics, with the official SDK against the fake: the stateless
request we send, reasoning summaries as reasoning deltas, reasoning items carried to the next
turn as encrypted content, both ways a stream fails midway, and truncated answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentstream.agent import Agent
from agentstream.events import ReasoningDelta, RunCompleted
from agentstream.messages import UserMessage
from agentstream.providers.base import ProviderError
from agentstream.providers.openai_responses import OpenAIResponsesProvider
from agentstream.tools import tool

from .fakes import FakeCall, FakeUpstream
from .fakes import openai_responses as fake
from .helpers import (
    collect,
    collect_until_error,
    completion,
    reasoning_of,
    request,
    text_of,
    tool_round_trip,
)

PARIS = FakeCall(id="call_1", name="get_weather", fragments=('{"city":', ' "Paris"}'))


@pytest.fixture
async def provider(upstream: FakeUpstream) -> Any:
    p = fake.provider(upstream)
    yield p
    await p.aclose()


async def test_request_is_stateless_and_asks_for_summaries(
    upstream: FakeUpstream, provider: OpenAIResponsesProvider
) -> None:
    upstream.queue(fake.text("ok"))
    await collect(provider, request(UserMessage(content="hi"), options={"reasoning": "high"}))

    body = fake.request_body(upstream.posts[0])
    assert body["store"] is False
    assert body["stream"] is True
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["instructions"] == "You are terse."
    assert body["input"] == [{"role": "user", "content": "hi"}]
    assert body["tools"][0]["type"] == "function"
    assert body["tools"][0]["name"] == "get_weather"  # flat, no nested "function"
    assert "previous_response_id" not in body


async def test_without_reasoning_nothing_is_asked(
    upstream: FakeUpstream, provider: OpenAIResponsesProvider
) -> None:
    upstream.queue(fake.text("ok"))
    await collect(provider, request(UserMessage(content="hi")))
    body = fake.request_body(upstream.posts[0])
    assert "reasoning" not in body and "include" not in body


async def test_summary_parts_are_separated(
    upstream: FakeUpstream, provider: OpenAIResponsesProvider
) -> None:
    upstream.queue(
        fake.Events().reasoning("First idea.", "Second idea.").message("Done.").completed()
    )
    events = await collect(provider)
    assert reasoning_of(events) == "First idea.\n\nSecond idea."
    assert text_of(events) == "Done."


async def test_history_goes_back_as_items(
    upstream: FakeUpstream, provider: OpenAIResponsesProvider
) -> None:
    upstream.queue(fake.text("ok"))
    await collect(provider, request(*tool_round_trip()))

    items = fake.request_body(upstream.posts[0])["input"]
    assert items[0] == {"role": "user", "content": "Weather in Paris and Atlantis?"}
    assert all(item.get("type") != "reasoning" for item in items)  # other vendors' reasoning
    assert {"role": "assistant", "content": "Let me check."} in items
    calls = [i for i in items if i.get("type") == "function_call"]
    assert [(c["call_id"], json.loads(c["arguments"])) for c in calls] == [
        ("call_1", {"city": "Paris"}),
        ("call_2", {"city": "Atlantis"}),
    ]
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    assert [(o["call_id"], o["output"]) for o in outputs] == [
        ("call_1", "18°C"),
        ("call_2", '{"error": "unknown city"}'),
    ]


async def test_reasoning_items_are_kept_for_the_next_turn(upstream: FakeUpstream) -> None:
    """A whole run through the agent loop: the reasoning item's encrypted content, with its
    summary, is sent back ahead of the function call it led to."""

    @tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return f"18°C in {city}"

    first = fake.Events().reasoning("Need the weather tool.", encrypted="gAAAAB-secret-state")
    upstream.queue(first.call(PARIS).completed(), fake.text("It is 18°C."))
    model = fake.provider(upstream)
    agent = Agent(model=model, tools=[get_weather], model_options={"reasoning": "low"})

    events = [e async for e in agent.run("Weather in Paris?")]
    await model.aclose()

    assert isinstance(events[-1], RunCompleted), events[-1]
    thinking = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert thinking == "Need the weather tool."
    items = fake.request_body(upstream.posts[1])["input"]
    kinds = [i.get("type", i.get("role")) for i in items]
    assert kinds == ["user", "reasoning", "function_call", "function_call_output"]
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_0",
        "encrypted_content": "gAAAAB-secret-state",
        "summary": [{"type": "summary_text", "text": "Need the weather tool."}],
    }


async def test_an_error_event_midway_is_raised(
    upstream: FakeUpstream, provider: OpenAIResponsesProvider
) -> None:
    upstream.queue(fake.error_event_after_text("Part"))
    events, error = await collect_until_error(provider.stream(request()))
    assert text_of(events) == "Part"
    assert error.kind == "rate_limited"
    assert "Slow down" in error.message
    assert len(upstream.posts) == 1  # output had gone out: no retry


async def test_a_failed_response_carries_its_message(
    upstream: FakeUpstream, provider: OpenAIResponsesProvider
) -> None:
    upstream.queue(fake.error_after_text("Part"))
    with pytest.raises(ProviderError) as info:
        await collect(provider)
    assert info.value.message.startswith("OpenAI: ")
    assert "processing your request" in info.value.message


async def test_an_incomplete_response_is_a_max_tokens_stop(
    upstream: FakeUpstream, provider: OpenAIResponsesProvider
) -> None:
    upstream.queue(fake.Events().message("Cut").incomplete("max_output_tokens"))

    done = completion(await collect(provider))
    assert done.stop_reason == "max_tokens"
    assert done.usage.output_tokens == 5
