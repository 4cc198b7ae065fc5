"""OpenAI Chat Completions specifics: the request we send (to OpenAI and to compatible
servers), tool-call fragments accumulated by index, reasoning deltas from compatible servers,
and tool history in Chat Completions' shape, checked on what the fake received."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentstream.messages import UserMessage
from agentstream.providers.base import ProviderError
from agentstream.providers.openai import OpenAIProvider, build_params

from .fakes import FakeUpstream, Reply
from .fakes import openai as fake
from .helpers import WEATHER, calls_of, collect, completion, request, text_of, tool_round_trip


@pytest.fixture
async def provider(upstream: FakeUpstream) -> Any:
    p = fake.provider(upstream)
    yield p
    await p.aclose()


async def test_request_shape(upstream: FakeUpstream, provider: OpenAIProvider) -> None:
    upstream.queue(fake.text("ok"))
    await collect(provider, request(options={"stop": ["END"], "reasoning": "high"}))

    body = fake.request_body(upstream.posts[0])
    assert body["model"] == fake.MODEL
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city.",
                "parameters": dict(WEATHER.parameters),
            },
        }
    ]
    assert body["stop"] == ["END"]
    assert body["reasoning_effort"] == "high"
    # a custom base URL means a compatible server: the widely known field name
    assert body["max_tokens"] == 4096


def test_openai_itself_gets_max_completion_tokens() -> None:
    provider = OpenAIProvider("gpt-4.1-mini", api_key="k")
    assert provider.max_tokens_field == "max_completion_tokens"
    params = build_params("gpt-4.1-mini", request(), max_tokens_field=provider.max_tokens_field)
    assert params["max_completion_tokens"] == 4096
    assert "max_tokens" not in params


async def test_compatible_server_without_a_key(upstream: FakeUpstream) -> None:
    upstream.queue(fake.text("ok"))
    provider = OpenAIProvider("qwen3", base_url=f"{upstream.url}/v1")
    events = await collect(provider)
    await provider.aclose()

    assert text_of(events) == "ok"
    assert upstream.posts[0].headers["authorization"] == "Bearer not-needed"


async def test_tool_history_goes_back_in_chat_completions_shape(
    upstream: FakeUpstream, provider: OpenAIProvider
) -> None:
    upstream.queue(fake.text("You're welcome."))
    await collect(provider, request(*tool_round_trip()))

    messages = fake.request_body(upstream.posts[0])["messages"]
    assistant = messages[2]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == "Let me check."
    assert "reasoning" not in assistant and "reasoning_content" not in assistant
    assert [
        (c["id"], c["type"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in assistant["tool_calls"]
    ] == [
        ("call_1", "function", "get_weather", {"city": "Paris"}),
        ("call_2", "function", "get_weather", {"city": "Atlantis"}),
    ]
    assert messages[3:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "18°C"},
        {"role": "tool", "tool_call_id": "call_2", "content": '{"error": "unknown city"}'},
        {"role": "user", "content": "Thanks!"},
    ]


async def test_tool_calls_accumulate_by_index_not_id(
    upstream: FakeUpstream, provider: OpenAIProvider
) -> None:
    """Later fragments carry only the index; a call made whole in one chunk works too
    (Ollama's /v1 sends calls that way)."""
    upstream.queue(
        Reply(
            chunks=[
                fake.first(),
                fake.chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_a",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": '{"city":'},
                            }
                        ]
                    }
                ),
                fake.chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Oslo"}'}}]}),
                fake.chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 1,
                                "id": "call_b",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'},
                            }
                        ]
                    }
                ),
                fake.chunk({}, "tool_calls"),
                fake.DONE,
            ]
        )
    )
    events = await collect(provider)

    assert [(i, n, "".join(f)) for i, n, f in calls_of(events)] == [
        ("call_a", "get_weather", '{"city":"Oslo"}'),
        ("call_b", "get_weather", '{"city":"Rome"}'),
    ]
    assert completion(events).stop_reason == "tool_use"


async def test_finish_stop_after_tool_calls_means_tool_use(
    upstream: FakeUpstream, provider: OpenAIProvider
) -> None:
    """Some compatible servers finish a tool-call turn with "stop"."""
    call = {
        "index": 0,
        "id": "call_x",
        "type": "function",
        "function": {"name": "get_weather", "arguments": "{}"},
    }
    upstream.queue(
        Reply(
            chunks=[
                fake.first(),
                fake.chunk({"tool_calls": [call]}),
                fake.chunk({}, "stop"),
                fake.DONE,
            ]
        )
    )
    assert completion(await collect(provider)).stop_reason == "tool_use"


async def test_length_and_content_filter(upstream: FakeUpstream, provider: OpenAIProvider) -> None:
    upstream.queue(
        Reply(
            chunks=[fake.first(), fake.chunk({"content": "a"}), fake.chunk({}, "length"), fake.DONE]
        ),
        Reply(chunks=[fake.first(), fake.chunk({}, "content_filter"), fake.DONE]),
    )
    first = completion(await collect(provider))
    second = completion(await collect(provider))
    assert (first.stop_reason, second.stop_reason) == ("max_tokens", "refusal")


async def test_missing_key_for_openai_itself_is_an_auth_error() -> None:
    provider = OpenAIProvider("gpt-4.1-mini")
    with pytest.raises(ProviderError) as info:
        await collect(provider, request(UserMessage(content="hi")))
    assert info.value.kind == "auth"
    assert "OPENAI_API_KEY" in info.value.message


async def test_a_client_passed_in_is_used_and_left_open(upstream: FakeUpstream) -> None:
    import openai

    client = openai.AsyncOpenAI(api_key=fake.secret, base_url=f"{upstream.url}/v1", max_retries=0)
    upstream.queue(fake.text("one"), fake.text("two"))
    provider = OpenAIProvider(fake.MODEL, client=client)

    assert text_of(await collect(provider)) == "one"
    await provider.aclose()
    assert text_of(await collect(provider)) == "two"  # still the caller's open client
    await client.close()
