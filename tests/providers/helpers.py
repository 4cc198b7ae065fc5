"""Small helpers for reading provider streams in tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from agentstream.messages import Message
from agentstream.providers.base import (
    ChatRequest,
    MessageComplete,
    Provider,
    ProviderError,
    ProviderEvent,
    ReasoningChunk,
    TextChunk,
    ToolInputChunk,
    ToolSpec,
    ToolUseStart,
)

WEATHER = ToolSpec(
    name="get_weather",
    description="Weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)


def request(*messages: Message, tools: Sequence[ToolSpec] = (WEATHER,), **kw: Any) -> ChatRequest:
    from agentstream.messages import UserMessage

    return ChatRequest(
        system="You are terse.",
        messages=messages or (UserMessage(content="Weather in Paris?"),),
        tools=tools,
        **kw,
    )


async def collect(provider: Provider, req: ChatRequest | None = None) -> list[ProviderEvent]:
    return [e async for e in provider.stream(req or request())]


async def collect_until_error(
    stream: AsyncIterator[ProviderEvent],
) -> tuple[list[ProviderEvent], ProviderError]:
    events: list[ProviderEvent] = []
    try:
        async for event in stream:
            events.append(event)
    except ProviderError as error:
        return events, error
    raise AssertionError(f"the stream did not fail: {events}")


def text_of(events: Sequence[ProviderEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextChunk))


def reasoning_of(events: Sequence[ProviderEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, ReasoningChunk))


def calls_of(events: Sequence[ProviderEvent]) -> list[tuple[str, str, list[str]]]:
    """(call id, name, argument fragments) per call, in order."""
    calls: dict[str, tuple[str, str, list[str]]] = {}
    for e in events:
        if isinstance(e, ToolUseStart):
            calls[e.call_id] = (e.call_id, e.name, [])
        elif isinstance(e, ToolInputChunk):
            calls[e.call_id][2].append(e.fragment)
    return list(calls.values())


def completion(events: Sequence[ProviderEvent]) -> MessageComplete:
    last = events[-1]
    assert isinstance(last, MessageComplete), last
    return last


def tool_round_trip(other_vendor_reasoning: bool = True) -> tuple[Message, ...]:
    """A finished tool round: question, assistant turn with reasoning and two calls (one of
    which failed), their results, and a follow-up question."""
    from agentstream.messages import (
        AssistantMessage,
        Reasoning,
        ToolCall,
        ToolResultPart,
        ToolResultsMessage,
        UserMessage,
    )

    return (
        UserMessage(content="Weather in Paris and Atlantis?"),
        AssistantMessage(
            text="Let me check.",
            reasoning=(
                Reasoning(text="Two cities.", signature="c2lnLWZpeHR1cmU=", provider="anthropic"),
                Reasoning(redacted="RU5DUllQVEVE", provider="anthropic"),
                *(
                    (Reasoning(text="foreign thought", provider="somebody-else"),)
                    if other_vendor_reasoning
                    else ()
                ),
            ),
            tool_calls=(
                ToolCall(
                    id="call_1",
                    name="get_weather",
                    arguments={"city": "Paris"},
                    provider_data={"google": {"thought_signature": "Q2lRQmZpeHR1cmU=", "id": "g1"}},
                ),
                ToolCall(id="call_2", name="get_weather", arguments={"city": "Atlantis"}),
            ),
        ),
        ToolResultsMessage(
            results=(
                ToolResultPart(tool_call_id="call_1", name="get_weather", content="18°C"),
                ToolResultPart(
                    tool_call_id="call_2",
                    name="get_weather",
                    content='{"error": "unknown city"}',
                    outcome="error",
                ),
            )
        ),
        UserMessage(content="Thanks!"),
    )
