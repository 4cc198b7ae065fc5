"""Anthropic specifics: the Messages request we send, thinking blocks and their signatures,
redacted thinking, and tool history in Anthropic's shape, checked on what the fake received."""

from __future__ import annotations

from typing import Any

import pytest

from agentstream.messages import UserMessage
from agentstream.providers.anthropic import AnthropicProvider, build_params
from agentstream.providers.base import ProviderError, ReasoningChunk

from .fakes import FakeUpstream
from .fakes import anthropic as fake
from .helpers import WEATHER, collect, completion, request, tool_round_trip


@pytest.fixture
async def provider(upstream: FakeUpstream) -> Any:
    p = fake.provider(upstream)
    yield p
    await p.aclose()


async def test_request_shape(upstream: FakeUpstream, provider: AnthropicProvider) -> None:
    upstream.queue(fake.text("ok"))
    await collect(provider, request(options={"stop": "END"}))

    body = fake.request_body(upstream.posts[0])
    assert body["model"] == fake.MODEL
    assert body["stream"] is True
    assert body["system"] == "You are terse."
    assert body["messages"] == [{"role": "user", "content": "Weather in Paris?"}]
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather for a city.",
            "input_schema": dict(WEATHER.parameters),
        }
    ]
    assert body["stop_sequences"] == ["END"]
    assert "thinking" not in body


async def test_thinking_signature_and_redacted_block(
    upstream: FakeUpstream, provider: AnthropicProvider
) -> None:
    upstream.queue(fake.reasoning("Hmm.", "Done."))
    events = await collect(provider)

    reasoning = [e for e in events if isinstance(e, ReasoningChunk)]
    assert [(r.text, r.signature, r.redacted) for r in reasoning] == [
        ("Hmm.", None, None),
        ("", "c2lnLWZpeHR1cmU=", None),
        ("", None, "RU5DUllQVEVE"),
    ]


async def test_tool_history_goes_back_in_anthropic_shape(
    upstream: FakeUpstream, provider: AnthropicProvider
) -> None:
    upstream.queue(fake.text("You're welcome."))
    await collect(provider, request(*tool_round_trip()))

    messages = fake.request_body(upstream.posts[0])["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": [
            # thinking exactly as received; the other vendor's reasoning is dropped
            {"type": "thinking", "thinking": "Two cities.", "signature": "c2lnLWZpeHR1cmU="},
            {"type": "redacted_thinking", "data": "RU5DUllQVEVE"},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
            {
                "type": "tool_use",
                "id": "call_2",
                "name": "get_weather",
                "input": {"city": "Atlantis"},
            },
        ],
    }
    assert messages[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "18°C", "is_error": False},
            {
                "type": "tool_result",
                "tool_use_id": "call_2",
                "content": '{"error": "unknown city"}',
                "is_error": True,
            },
        ],
    }
    assert messages[3] == {"role": "user", "content": "Thanks!"}


async def test_reasoning_option_enables_thinking_without_temperature(
    upstream: FakeUpstream, provider: AnthropicProvider
) -> None:
    upstream.queue(fake.text("ok"))
    await collect(provider, request(max_tokens=8000, temperature=0.5, options={"reasoning": "low"}))

    body = fake.request_body(upstream.posts[0])
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in body  # thinking only accepts the default


def test_reasoning_budget_is_capped_below_max_tokens() -> None:
    params = build_params("m", request(max_tokens=4000, options={"reasoning_budget": 10_000}))
    assert params["thinking"]["budget_tokens"] == 3999


def test_reasoning_with_too_few_max_tokens_is_a_clear_error() -> None:
    with pytest.raises(ProviderError) as info:
        build_params("m", request(max_tokens=500, options={"reasoning": True}))
    assert info.value.kind == "bad_request"
    assert "max_tokens" in info.value.message


async def test_stop_reasons_are_mapped(upstream: FakeUpstream, provider: AnthropicProvider) -> None:
    upstream.queue(
        fake.sse([fake.message_start(), *fake.text_block(0, "a"), *fake.message_end("max_tokens")]),
        fake.sse([fake.message_start(), *fake.message_end("refusal")]),
        fake.sse([fake.message_start(), *fake.message_end("pause_turn")]),
    )
    stops = [completion(await collect(provider)) for _ in range(3)]
    assert [(s.stop_reason, s.raw_stop_reason) for s in stops] == [
        ("max_tokens", "max_tokens"),
        ("refusal", "refusal"),
        ("other", "pause_turn"),
    ]


async def test_overloaded_529_is_retryable(upstream: FakeUpstream) -> None:
    from .conftest import FAST_RETRY

    upstream.queue(fake.http_error(529, "Overloaded"), fake.text("fine"))
    p = fake.provider(upstream, retry=FAST_RETRY)
    events = await collect(p)
    await p.aclose()
    assert completion(events).stop_reason == "end_turn"
    assert len(upstream.posts) == 2


async def test_missing_key_is_an_auth_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", "/nonexistent-agentstream-test")
    p = AnthropicProvider(fake.MODEL, base_url="http://127.0.0.1:9")
    with pytest.raises(ProviderError) as info:
        await collect(p, request(UserMessage(content="hi")))
    await p.aclose()
    assert info.value.kind == "auth"
    assert "ANTHROPIC_API_KEY" in info.value.message


async def test_error_after_message_start_but_before_output_is_retried(
    upstream: FakeUpstream,
) -> None:
    """message_start is not output: an overloaded error right after it is retried, and the
    consumer sees one MessageStart."""
    from agentstream.providers.base import MessageStart

    from .conftest import FAST_RETRY

    overloaded = fake.event(
        "error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    upstream.queue(fake.sse([fake.message_start(), overloaded]), fake.text("fine"))
    p = fake.provider(upstream, retry=FAST_RETRY)
    events = await collect(p)
    await p.aclose()

    assert sum(isinstance(e, MessageStart) for e in events) == 1
    assert completion(events).stop_reason == "end_turn"
    assert len(upstream.posts) == 2


async def test_agent_loop_sends_signed_thinking_back(upstream: FakeUpstream) -> None:
    """Thinking + tool use, then the answer: the second request carries the thinking block
    with its signature (and the redacted block) ahead of the tool_use, as the API requires."""
    from agentstream.agent import Agent
    from agentstream.events import ReasoningDelta, RunCompleted
    from agentstream.tools import tool

    from .fakes import FakeCall

    @tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return "18°C"

    call = FakeCall("toolu_01", "get_weather", ('{"city": ', '"Paris"}'))
    upstream.queue(
        fake.sse(
            [
                fake.message_start(),
                *fake.thinking_block(0, "Need the tool.", "c2lnLWZpeHR1cmU="),
                fake.block_start(1, {"type": "redacted_thinking", "data": "RU5DUllQVEVE"}),
                fake.block_stop(1),
                *fake.tool_block(2, call),
                *fake.message_end("tool_use"),
            ]
        ),
        fake.text("18°C in Paris."),
    )
    p = fake.provider(upstream)
    agent = Agent(model=p, tools=[get_weather], model_options={"reasoning": True}, max_tokens=16000)
    events = [e async for e in agent.run("Weather in Paris?")]
    await p.aclose()

    assert isinstance(events[-1], RunCompleted)
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Need the tool."
    second = fake.request_body(upstream.posts[1])
    assert second["thinking"]["type"] == "enabled"
    assert second["messages"][1]["content"][:3] == [
        {"type": "thinking", "thinking": "Need the tool.", "signature": "c2lnLWZpeHR1cmU="},
        {"type": "redacted_thinking", "data": "RU5DUllQVEVE"},
        {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
    ]
    assert second["messages"][2]["content"][0]["tool_use_id"] == "toolu_01"
