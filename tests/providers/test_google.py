"""Gemini specifics: the generateContent request (system instruction, JSON-Schema tools,
thinking config), thought parts, thought signatures kept with their calls and sent back, and
function responses, checked on what the fake received."""

from __future__ import annotations

from typing import Any

import pytest

from agentstream.messages import UserMessage
from agentstream.providers.base import ProviderError, ToolUseStart
from agentstream.providers.google import GoogleProvider

from .fakes import FakeCall, FakeUpstream, Reply
from .fakes import google as fake
from .helpers import WEATHER, collect, completion, request, tool_round_trip


@pytest.fixture
async def provider(upstream: FakeUpstream) -> Any:
    p = fake.provider(upstream)
    yield p
    await p.aclose()


def _get(mapping: dict[str, Any], camel: str) -> Any:
    """The SDK writes top-level keys in camelCase and some nested ones in snake_case."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return mapping.get(camel, mapping.get(snake))


async def test_request_shape(upstream: FakeUpstream, provider: GoogleProvider) -> None:
    upstream.queue(fake.text("ok"))
    await collect(provider, request(temperature=0.2, options={"reasoning": True, "stop": "END"}))

    body = fake.request_body(upstream.posts[0])
    assert "stream" not in body
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}]
    assert _get(body, "systemInstruction")["parts"] == [{"text": "You are terse."}]
    [tool] = body["tools"]
    [declaration] = _get(tool, "functionDeclarations")
    assert declaration["name"] == "get_weather"
    assert _get(declaration, "parametersJsonSchema") == dict(WEATHER.parameters)
    config = _get(body, "generationConfig")
    assert config["temperature"] == 0.2
    assert _get(config, "maxOutputTokens") == 4096
    assert _get(config, "stopSequences") == ["END"]
    thinking = _get(config, "thinkingConfig")
    assert _get(thinking, "includeThoughts") is True
    assert _get(thinking, "thinkingBudget") == 8192


async def test_thought_signature_is_kept_with_its_call(
    upstream: FakeUpstream, provider: GoogleProvider
) -> None:
    upstream.queue(fake.tool_calls("", FakeCall("g1", "get_weather", ('{"city": "Paris"}',))))
    events = await collect(provider)

    [start] = [e for e in events if isinstance(e, ToolUseStart)]
    assert start.call_id == "g1"
    assert start.provider_data == {"google": {"thought_signature": fake.SIGNATURE, "id": "g1"}}
    assert completion(events).stop_reason == "tool_use"  # Gemini says STOP


async def test_tool_history_goes_back_in_gemini_shape(
    upstream: FakeUpstream, provider: GoogleProvider
) -> None:
    upstream.queue(fake.text("You're welcome."))
    await collect(provider, request(*tool_round_trip()))

    contents = fake.request_body(upstream.posts[0])["contents"]
    model_turn = contents[1]
    assert model_turn["role"] == "model"
    text_part, paris, atlantis = model_turn["parts"]  # no reasoning parts go back
    assert text_part == {"text": "Let me check."}
    assert _get(paris, "functionCall") == {
        "id": "g1",
        "name": "get_weather",
        "args": {"city": "Paris"},
    }
    assert _get(paris, "thoughtSignature") == fake.SIGNATURE
    assert _get(atlantis, "functionCall") == {"name": "get_weather", "args": {"city": "Atlantis"}}
    assert _get(atlantis, "thoughtSignature") is None
    assert contents[2] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "g1",
                    "name": "get_weather",
                    "response": {"result": "18°C"},
                }
            },
            {
                "functionResponse": {
                    "name": "get_weather",
                    "response": {"error": "unknown city"},
                }
            },
        ],
    }
    assert contents[3] == {"role": "user", "parts": [{"text": "Thanks!"}]}


async def test_finish_reasons_are_mapped(upstream: FakeUpstream, provider: GoogleProvider) -> None:
    upstream.queue(
        Reply(chunks=[fake.chunk([{"text": "a"}], finish="MAX_TOKENS")]),
        Reply(chunks=[fake.chunk([], finish="SAFETY")]),
        Reply(chunks=[fake.chunk([], finish="MALFORMED_FUNCTION_CALL")]),
    )
    stops = [completion(await collect(provider)) for _ in range(3)]
    assert [(s.stop_reason, s.raw_stop_reason) for s in stops] == [
        ("max_tokens", "MAX_TOKENS"),
        ("refusal", "SAFETY"),
        ("other", "MALFORMED_FUNCTION_CALL"),
    ]


async def test_missing_key_is_an_auth_error() -> None:
    provider = GoogleProvider("gemini-2.5-flash")
    with pytest.raises(ProviderError) as info:
        await collect(provider, request(UserMessage(content="hi")))
    assert info.value.kind == "auth"
    assert "GEMINI_API_KEY" in info.value.message


async def test_a_rejected_key_is_an_auth_error(
    upstream: FakeUpstream, provider: GoogleProvider
) -> None:
    """Gemini answers an invalid key with 400 INVALID_ARGUMENT and reason API_KEY_INVALID."""
    upstream.queue(
        Reply.json(
            400,
            {
                "error": {
                    "code": 400,
                    "message": "API key not valid. Please pass a valid API key.",
                    "status": "INVALID_ARGUMENT",
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "API_KEY_INVALID",
                            "domain": "googleapis.com",
                        }
                    ],
                }
            },
        )
    )
    with pytest.raises(ProviderError) as info:
        await collect(provider)
    assert info.value.kind == "auth"
    assert "API key not valid" in info.value.message
