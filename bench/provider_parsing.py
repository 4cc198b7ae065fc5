"""What each vendor's stream costs to parse, per streamed delta.

Each vendor's official SDK reads a 5,000-delta text stream from that vendor's fake upstream
(tests/providers/fakes: a real HTTP server on loopback speaking the vendor's framing). The
fake sends the whole body in one write, so the figure is the client's cost: HTTP reading, the
SDK's framing and model parsing, and our conversion to provider events, with retries,
timeouts and the error boundary around it.

Three figures per vendor: the SDK alone (iterating its raw stream objects); the full provider
(``provider.stream()``, yielding our events through retry, timeout and error layers); and our
conversion alone (the vendor's stream converter fed the SDK objects already parsed, no I/O).
SDK-only and full runs alternate and the best of several repeats is kept, because the machine
is shared and wall-clock noise is large; the conversion-alone figure is the steady one.

    .venv/bin/python bench/provider_parsing.py
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ollama  # noqa: E402

from agentstream.messages import UserMessage  # noqa: E402
from agentstream.providers import anthropic as anthropic_provider  # noqa: E402
from agentstream.providers import google as google_provider  # noqa: E402
from agentstream.providers import ollama as ollama_provider  # noqa: E402
from agentstream.providers import openai as openai_provider  # noqa: E402
from agentstream.providers._sdk import SDKProvider  # noqa: E402
from agentstream.providers.base import (  # noqa: E402
    ChatRequest,
    MessageComplete,
    ProviderError,
    ProviderEvent,
    TextChunk,
)
from tests.providers.fakes import FakeUpstream, Reply  # noqa: E402
from tests.providers.fakes import anthropic as fake_anthropic  # noqa: E402
from tests.providers.fakes import google as fake_google  # noqa: E402
from tests.providers.fakes import ollama as fake_ollama  # noqa: E402
from tests.providers.fakes import openai as fake_openai  # noqa: E402

DELTAS = 5_000
REPEATS = 7
REQUEST = ChatRequest(system="bench", messages=[UserMessage(content="go")])


async def _raw_anthropic(p: Any) -> list[Any]:
    params = anthropic_provider.build_params(p.model, REQUEST)
    stream = await p.client.messages.create(**params, stream=True)
    return [item async for item in stream]


async def _raw_openai(p: Any) -> list[Any]:
    params = openai_provider.build_params(p.model, REQUEST, max_tokens_field=p.max_tokens_field)
    stream = await p.client.chat.completions.create(**params)
    return [item async for item in stream]


async def _raw_google(p: Any) -> list[Any]:
    stream = await p.client.aio.models.generate_content_stream(
        model=p.model,
        contents=google_provider.build_contents(REQUEST.messages),
        config=google_provider.build_config(REQUEST),
    )
    return [item async for item in stream]


async def _raw_ollama(p: Any) -> list[Any]:
    body = ollama_provider.build_body(p.model, REQUEST)
    stream = await p.client._request(
        ollama.ChatResponse, "POST", "/api/chat", json=body, stream=True
    )
    return [item async for item in stream]


VENDORS: list[tuple[ModuleType, Callable[[Any], Awaitable[list[Any]]], Any]] = [
    (fake_anthropic, _raw_anthropic, anthropic_provider._StreamConverter),
    (fake_openai, _raw_openai, openai_provider._StreamConverter),
    (fake_google, _raw_google, google_provider._StreamConverter),
    (fake_ollama, _raw_ollama, ollama_provider._StreamConverter),
]


def _one_write(reply: Reply) -> Reply:
    return Reply(chunks=[b"".join(reply.chunks)], content_type=reply.content_type)


async def _timed(
    run: Callable[[], Awaitable[object]], upstream: FakeUpstream, reply: Reply
) -> float:
    upstream.queue(reply)
    start = time.perf_counter()
    await run()
    return time.perf_counter() - start


def _convert(converter_cls: Any, items: list[Any]) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        converter = converter_cls()
        for item in items:
            for _event in converter.feed(item):
                pass
        best = min(best, time.perf_counter() - start)
    return best


async def _measure(
    fake: ModuleType, raw: Callable[[Any], Awaitable[list[Any]]], converter: Any, up: FakeUpstream
) -> tuple[float, float, float]:
    reply = _one_write(fake.text(*(f"w{i} " for i in range(DELTAS))))
    provider = fake.provider(up)

    async def full() -> int:
        events = [e async for e in provider.stream(REQUEST)]
        assert sum(isinstance(e, TextChunk) for e in events) == DELTAS
        return len(events)

    await _timed(full, up, reply)  # warm up: client, connection pool, imports
    sdk = ours = float("inf")
    for _ in range(REPEATS):
        sdk = min(sdk, await _timed(lambda: raw(provider), up, reply))
        ours = min(ours, await _timed(full, up, reply))
    up.queue(reply)
    items = await raw(provider)
    await provider.aclose()
    conversion = _convert(converter, items)
    return sdk / DELTAS * 1e6, ours / DELTAS * 1e6, conversion / DELTAS * 1e6


class _Synthetic(SDKProvider[None]):
    """Pre-made events through the shared pipeline only (retry, timeouts, boundary)."""

    name = "synthetic"
    vendor = "Synthetic"

    def _make_client(self) -> None:
        return None

    async def _close_client(self, client: None) -> None:
        return None

    async def _attempt(self, request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        chunk = TextChunk(text="w ")
        for _ in range(DELTAS):
            yield chunk
        yield MessageComplete(stop_reason="end_turn")

    def _translate(self, exc: Exception) -> ProviderError | None:
        return None


async def _pipeline() -> float:
    provider, best = _Synthetic("m"), float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        async for _event in provider.stream(REQUEST):
            pass
        best = min(best, time.perf_counter() - start)
    return best / DELTAS * 1e6


async def main() -> None:
    upstream = FakeUpstream().start()
    try:
        rows = [(f.name, *await _measure(f, raw, conv, upstream)) for f, raw, conv in VENDORS]
    finally:
        upstream.stop()
    print(f"{DELTAS:,} text deltas per stream, best of {REPEATS}; microseconds per delta")
    print(f"{'vendor':<10} {'SDK only':>9} {'provider':>9} {'difference':>11} {'conversion':>11}")
    for name, sdk, full, conversion in rows:
        print(f"{name:<10} {sdk:>9.1f} {full:>9.1f} {full - sdk:>11.1f} {conversion:>11.2f}")
    print(f"shared pipeline alone (retry + timeouts + error boundary): {await _pipeline():.1f}")


if __name__ == "__main__":
    asyncio.run(main())
