"""What every SDK-backed provider does the same way, run against each vendor's fake upstream
through the vendor's official SDK: streaming, tool calls, reasoning, usage, retries, timeouts,
errors and closing."""

from __future__ import annotations

import dataclasses
import json
from types import ModuleType
from typing import Any

import pytest

from agentstream.providers._retry import RetryPolicy
from agentstream.providers._timeouts import Timeouts
from agentstream.providers.base import MessageStart, ProviderError, TextChunk, ToolUseStart

from .conftest import FAST_RETRY
from .fakes import FakeCall, FakeUpstream, Reply
from .helpers import (
    calls_of,
    collect,
    collect_until_error,
    completion,
    reasoning_of,
    request,
    text_of,
)

PARIS = FakeCall("call_1", "get_weather", ('{"ci', 'ty": "Par', 'is"}'))
LONDON = FakeCall("call_2", "get_weather", ('{"city": ', '"London"}'))
SPLITS_ARGUMENTS = {
    "anthropic",
    "openai",
    "openai-responses",
}  # Gemini and Ollama send each call whole


async def test_text_only_turn(upstream: FakeUpstream, vendor: ModuleType, make: Any) -> None:
    upstream.queue(vendor.text("Hello", ", ", "world."))
    events = await collect(make())

    assert isinstance(events[0], MessageStart)
    assert [e.text for e in events if isinstance(e, TextChunk)] == ["Hello", ", ", "world."]
    assert completion(events).stop_reason == "end_turn"
    assert calls_of(events) == []


async def test_text_then_one_tool_call(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    upstream.queue(vendor.tool_calls("Let me check.", PARIS))
    events = await collect(make())

    assert text_of(events) == "Let me check."
    [(call_id, name, fragments)] = calls_of(events)
    assert name == "get_weather"
    assert json.loads("".join(fragments)) == {"city": "Paris"}
    if vendor.name in SPLITS_ARGUMENTS:
        assert call_id == "call_1"
        assert len(fragments) == 3  # streamed as the vendor sent them, not re-chunked
    else:
        assert len(fragments) == 1
    assert completion(events).stop_reason == "tool_use"
    # text comes before the call starts
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("TextChunk") < kinds.index("ToolUseStart")


async def test_two_tool_calls_in_one_turn(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    upstream.queue(vendor.tool_calls("", PARIS, LONDON))
    events = await collect(make())

    calls = calls_of(events)
    assert [json.loads("".join(f)) for _, _, f in calls] == [{"city": "Paris"}, {"city": "London"}]
    assert len({call_id for call_id, _, _ in calls}) == 2
    assert completion(events).stop_reason == "tool_use"


async def test_reasoning(upstream: FakeUpstream, vendor: ModuleType, make: Any) -> None:
    upstream.queue(vendor.reasoning("User wants Paris weather.", "Sunny."))
    events = await collect(make())

    assert reasoning_of(events) == "User wants Paris weather."
    assert text_of(events) == "Sunny."


async def test_usage(upstream: FakeUpstream, vendor: ModuleType, make: Any) -> None:
    reply, expected = vendor.usage_turn()
    upstream.queue(reply)
    events = await collect(make())

    assert dataclasses.asdict(completion(events).usage) == expected


async def test_request_carries_temperature_and_max_tokens(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    upstream.queue(vendor.text("ok"))
    await collect(make(), request(temperature=0.3, max_tokens=321))

    body = json.dumps(vendor.request_body(upstream.posts[0]))
    assert "0.3" in body
    assert "321" in body


async def test_error_in_the_middle_of_the_stream_is_not_retried(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    upstream.queue(vendor.error_after_text("Partial"), vendor.text("never sent"))
    provider = make(retry=FAST_RETRY)

    events, error = await collect_until_error(provider.stream(request()))

    assert text_of(events) == "Partial"
    assert error.kind in ("overloaded", "provider")
    assert error.retryable  # retryable in itself, but output had already gone out
    assert len(upstream.posts) == 1


async def test_429_then_success_is_retried(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    upstream.queue(vendor.http_error(429, "Slow down"), vendor.text("Hello"))
    events = await collect(make(retry=FAST_RETRY))

    assert text_of(events) == "Hello"
    assert sum(isinstance(e, MessageStart) for e in events) == 1
    assert len(upstream.posts) == 2


async def test_retries_give_up_after_max_attempts(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    upstream.queue(*(vendor.http_error(503, "busy") for _ in range(3)))
    provider = make(retry=FAST_RETRY)

    _, error = await collect_until_error(provider.stream(request()))

    assert error.kind in ("overloaded", "provider")
    assert error.status_code == 503
    assert len(upstream.posts) == 3


async def test_bad_request_is_not_retried(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    upstream.queue(vendor.http_error(400, "messages: field required"), vendor.text("no"))
    provider = make(retry=FAST_RETRY)

    _, error = await collect_until_error(provider.stream(request()))

    assert error.kind == "bad_request"
    assert "messages: field required" in error.message
    assert len(upstream.posts) == 1


async def test_malformed_chunk_is_a_provider_error(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    upstream.queue(vendor.malformed())
    _, error = await collect_until_error(make().stream(request()))

    assert error.kind == "provider"
    assert "malformed" in error.message


async def test_secrets_never_reach_error_messages(
    upstream: FakeUpstream, vendor: ModuleType, make: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_API_KEY", vendor.secret)  # Ollama's only key source
    upstream.queue(vendor.http_error(401, f"Incorrect API key provided: {vendor.secret}."))
    provider = make(retry=FAST_RETRY)

    _, error = await collect_until_error(provider.stream(request()))

    assert error.kind == "auth"
    assert not error.retryable
    for text in (str(error), repr(error), error.message):
        assert vendor.secret not in text
        assert vendor.secret[:12] not in text
    assert "Incorrect API key provided" in error.message


async def test_connection_refused_is_a_network_error(vendor: ModuleType) -> None:
    closed = FakeUpstream()  # bound but never started: nothing accepts on it
    closed.stop()
    provider = vendor.provider(closed, retry=RetryPolicy(max_attempts=2, initial_delay=0.01))

    _, error = await collect_until_error(provider.stream(request()))
    await provider.aclose()

    assert error.kind == "network"
    assert error.retryable


# A first-token allowance that holds on a loaded machine: the request must reach the fake
# upstream within it (it is built, sent and answered in this process), or the upstream has
# no response to see closed. 0.3 s was missed under load.
FIRST_TOKEN = 2.0


async def test_first_token_timeout(upstream: FakeUpstream, make: Any) -> None:
    upstream.queue(Reply(chunks=[], hang=True))
    provider = make(retry=FAST_RETRY, timeouts=Timeouts(first_token=FIRST_TOKEN, idle=60))
    assert provider.client is not None  # made now, so its set-up cost is not timed

    _, error = await collect_until_error(provider.stream(request()))

    assert error.kind == "timeout"
    assert "first token" in error.message
    assert len(upstream.posts) == 1  # our own timeouts are not retried
    assert upstream.wait_for_disconnect()


async def test_silence_after_the_opening_metadata_is_still_the_first_token_wait(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    """OpenAI-compatible servers send an empty role chunk at once; a model that then thinks
    in silence is given its first-token allowance, not the shorter idle one."""
    upstream.queue(vendor.text(hang=True))
    provider = make(retry=FAST_RETRY, timeouts=Timeouts(first_token=FIRST_TOKEN, idle=60))
    assert provider.client is not None  # made now, so its set-up cost is not timed

    events, error = await collect_until_error(provider.stream(request()))

    assert text_of(events) == ""
    assert error.kind == "timeout"
    assert "first token" in error.message
    assert upstream.wait_for_disconnect()


async def test_silence_between_tokens_times_out(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    upstream.queue(vendor.text("Hel", "lo", hang=True))
    # Long enough that "lo", sent right after "Hel", arrives within it however loaded the
    # machine; the first token is given far longer, so this can only be the idle limit.
    provider = make(timeouts=Timeouts(first_token=60, idle=1.0))

    events, error = await collect_until_error(provider.stream(request()))

    assert text_of(events) == "Hello"
    assert error.kind == "timeout"
    assert "between tokens" in error.message
    assert upstream.wait_for_disconnect()


async def test_closing_the_stream_closes_the_upstream_response(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    upstream.queue(vendor.text("Hel", "lo", hang=True))
    stream = make().stream(request())

    async for event in stream:
        if isinstance(event, TextChunk):
            break
    await stream.aclose()  # type: ignore[attr-defined]

    assert upstream.wait_for_disconnect()


async def test_stream_cut_short_is_an_error(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    full = vendor.text("Hel", "lo")
    upstream.queue(Reply(chunks=full.chunks[:-1], content_type=full.content_type))
    if vendor.name == "openai":  # drop [DONE], the usage chunk and the finish chunk
        upstream.replies[0] = Reply(chunks=full.chunks[:-3])

    events, error = await collect_until_error(make().stream(request()))

    assert text_of(events).startswith("Hel")
    assert error.kind == "network"
    assert len(upstream.posts) == 1


async def test_tool_use_start_before_its_arguments(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    upstream.queue(vendor.tool_calls("", PARIS))
    events = await collect(make())

    starts = [i for i, e in enumerate(events) if isinstance(e, ToolUseStart)]
    inputs = [i for i, e in enumerate(events) if type(e).__name__ == "ToolInputChunk"]
    assert starts and inputs and starts[0] < min(inputs)


def test_provider_error_is_what_the_stream_raises() -> None:
    assert issubclass(ProviderError, Exception)


async def test_the_agent_loop_runs_through_each_vendor(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    """A whole run: the model asks for a tool, the loop runs it, the result goes back to the
    fake in the vendor's format, and the model answers."""
    from agentstream.agent import Agent
    from agentstream.events import RunCompleted, ToolCallFinished
    from agentstream.tools import tool

    @tool
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return f"18°C in {city}"

    upstream.queue(vendor.tool_calls("Let me check.", PARIS), vendor.text("It is 18°C in Paris."))
    agent = Agent(model=make(), tools=[get_weather], instructions="Be brief.")

    events = [e async for e in agent.run("Weather in Paris?")]

    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(f.name, f.result, f.is_error) for f in finished] == [
        ("get_weather", "18°C in Paris", False)
    ]
    assert isinstance(events[-1], RunCompleted), events[-1]
    assert "It is 18°C in Paris." in events[-1].message
    assert len(upstream.posts) == 2
    second = json.dumps(vendor.request_body(upstream.posts[1]), ensure_ascii=False)
    assert "18°C in Paris" in second  # the tool result went back
    assert "Let me check." in second  # with the assistant turn that asked for it
    if vendor.name == "google":
        assert vendor.SIGNATURE in second  # the call's thought signature went back with it


async def test_an_answer_cut_off_at_the_output_limit_says_so(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    """Each vendor's own way of saying it stopped at the output limit reaches the end of the
    run, so every protocol can tell its client the answer was cut off."""
    from agentstream.agent import Agent
    from agentstream.events import RunCompleted

    upstream.queue(vendor.truncated("The first half of a long", " answer, and th"))
    events = [e async for e in Agent(model=make()).run("Tell me everything.")]

    assert isinstance(events[-1], RunCompleted), events[-1]
    assert events[-1].message == "The first half of a long answer, and th"
    assert events[-1].stop_reason == "max_tokens"
    assert events[-1].cut_off


async def test_a_long_retry_after_fails_at_once(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    if vendor.name == "ollama":
        pytest.skip("ollama-python's ResponseError keeps no response headers")
    limited = vendor.http_error(429, "Slow down")
    limited.headers["retry-after"] = "120"
    upstream.queue(limited, vendor.text("too late"))

    _, error = await collect_until_error(make(retry=FAST_RETRY).stream(request()))

    assert error.kind == "rate_limited"
    assert getattr(error, "retry_after", None) == 120
    assert len(upstream.posts) == 1


async def test_a_short_retry_after_is_waited_for(
    upstream: FakeUpstream, vendor: ModuleType, make: Any
) -> None:
    limited = vendor.http_error(429, "Slow down")
    limited.headers["retry-after"] = "0.05"
    upstream.queue(limited, vendor.text("Hello"))

    events = await collect(make(retry=FAST_RETRY))

    assert text_of(events) == "Hello"
    assert len(upstream.posts) == 2


async def test_keys_and_base_urls_come_from_the_sdks_environment_variables(
    upstream: FakeUpstream, vendor: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentstream.providers.registry import resolve_provider

    for name, value in vendor.env(upstream).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AGENTSTREAM_MODEL", f"{vendor.name}:{vendor.MODEL}")
    upstream.queue(vendor.text("from the environment"))

    provider = resolve_provider(None)
    events = await collect(provider)
    await provider.aclose()  # type: ignore[attr-defined]

    assert text_of(events) == "from the environment"
    vendor.request_body(upstream.posts[0])  # right path and credentials
