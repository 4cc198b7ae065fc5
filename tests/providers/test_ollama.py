"""Ollama specifics: the /api/chat request (options, think, full JSON Schemas for tools),
thinking, whole tool calls with ids made here, and tool history in Ollama's shape, checked on
what the fake received."""

from __future__ import annotations

from typing import Any

import pytest

from agentstream.providers.base import ToolSpec
from agentstream.providers.ollama import OllamaProvider

from .fakes import FakeUpstream
from .fakes import ollama as fake
from .helpers import collect, completion, request, tool_round_trip


@pytest.fixture
async def provider(upstream: FakeUpstream) -> Any:
    p = fake.provider(upstream)
    yield p
    await p.aclose()


NESTED = ToolSpec(
    name="create_rule",
    description="Create a rule.",
    parameters={
        "type": "object",
        "properties": {
            "when": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "equals": {"type": "integer"}},
                "required": ["field"],
                "additionalProperties": False,
            },
            "label": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["when"],
    },
)


async def test_request_shape(upstream: FakeUpstream, provider: OllamaProvider) -> None:
    upstream.queue(fake.text("ok"))
    await collect(
        provider,
        request(tools=(NESTED,), temperature=0.1, options={"reasoning": "high", "stop": "END"}),
    )

    body = fake.request_body(upstream.posts[0])
    assert body["model"] == fake.MODEL
    assert body["stream"] is True
    assert body["think"] == "high"
    assert body["options"] == {"num_predict": 4096, "temperature": 0.1, "stop": ["END"]}
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    # the whole schema, nested keywords included (ollama-python's chat() would drop them)
    assert body["tools"][0]["function"]["parameters"] == NESTED.parameters


@pytest.mark.parametrize(("setting", "think"), [(True, True), (False, False), ("low", "low")])
async def test_think_setting(
    upstream: FakeUpstream, provider: OllamaProvider, setting: object, think: object
) -> None:
    upstream.queue(fake.text("ok"))
    await collect(provider, request(options={"reasoning": setting}))
    assert fake.request_body(upstream.posts[0])["think"] == think


async def test_tool_history_goes_back_in_ollama_shape(
    upstream: FakeUpstream, provider: OllamaProvider
) -> None:
    upstream.queue(fake.text("You're welcome."))
    await collect(provider, request(*tool_round_trip(other_vendor_reasoning=False)))

    messages = fake.request_body(upstream.posts[0])["messages"]
    assert messages[2] == {
        "role": "assistant",
        "content": "Let me check.",
        # Anthropic's signed thinking is not Ollama's
        "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {"function": {"name": "get_weather", "arguments": {"city": "Atlantis"}}},
        ],
    }
    assert messages[3:] == [
        {"role": "tool", "tool_name": "get_weather", "content": "18°C"},
        {"role": "tool", "tool_name": "get_weather", "content": '{"error": "unknown city"}'},
        {"role": "user", "content": "Thanks!"},
    ]


async def test_own_thinking_goes_back(upstream: FakeUpstream, provider: OllamaProvider) -> None:
    from agentstream.messages import AssistantMessage, Reasoning, UserMessage

    upstream.queue(fake.text("ok"))
    history = (
        UserMessage(content="hi"),
        AssistantMessage(text="Hello", reasoning=(Reasoning(text="greet", provider="ollama"),)),
        UserMessage(content="again"),
    )
    await collect(provider, request(*history))
    assert fake.request_body(upstream.posts[0])["messages"][2] == {
        "role": "assistant",
        "content": "Hello",
        "thinking": "greet",
    }


async def test_length_is_max_tokens(upstream: FakeUpstream, provider: OllamaProvider) -> None:
    upstream.queue(fake.ndjson([fake.message(content="a"), fake.done("length")]))
    assert completion(await collect(provider)).stop_reason == "max_tokens"


def test_host_defaults_to_ollama_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "10.1.2.3:9999")
    assert str(OllamaProvider("qwen3").client._client.base_url) == "http://10.1.2.3:9999"
