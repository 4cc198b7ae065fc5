"""The one retry policy for every vendor.

The SDKs each retry on their own (Anthropic and OpenAI twice by default, with their own
backoff); every provider here turns that off so there is exactly one policy, this one:
retry a retryable :class:`ProviderError` (429, 5xx, overloaded, connection failures) with
exponential backoff and jitter, but only while nothing has been produced. Once a text,
reasoning or tool event has gone out, a retry would make the model say things twice, so the
error goes to the caller instead. A :class:`MessageStart` alone does not count as output; a
retried attempt just does not repeat it. A ``Retry-After`` the upstream sent is honoured when
it is longer than the backoff, up to ``max_retry_after``; a longer wait fails at once instead,
so a caller is not kept waiting for minutes.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import dataclass

from agentstream.providers.base import MessageStart, ProviderError, ProviderEvent

__all__ = ["RetryPolicy", "retrying"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """``max_attempts`` counts the first try. Delays grow ``initial_delay * multiplier**n``
    up to ``max_delay``; ``jitter`` (0..1) takes a random fraction off each delay so clients
    that failed together do not retry together."""

    max_attempts: int = 3
    initial_delay: float = 0.5
    max_delay: float = 8.0
    multiplier: float = 2.0
    jitter: float = 0.5
    max_retry_after: float = 30.0

    def delay(self, retry_number: int) -> float:
        """Seconds to wait before retry ``retry_number`` (1 for the first retry)."""
        base = min(self.max_delay, self.initial_delay * self.multiplier ** (retry_number - 1))
        return base * (1.0 - self.jitter * random.random())


async def retrying(
    attempt: Callable[[], AsyncGenerator[ProviderEvent, None]],
    policy: RetryPolicy,
) -> AsyncGenerator[ProviderEvent, None]:
    """Run ``attempt()`` (a fresh upstream request each call) under ``policy``."""
    started = False  # a MessageStart went out
    retry_number = 0
    while True:
        produced = False
        try:
            async with aclosing(attempt()) as events:
                async for event in events:
                    if isinstance(event, MessageStart):
                        if started:
                            continue
                        started = True
                    else:
                        produced = True
                    yield event
            return
        except ProviderError as error:
            retry_number += 1
            if produced or not error.retryable or retry_number >= policy.max_attempts:
                raise
            hint = getattr(error, "retry_after", None)
            if hint is not None and hint > policy.max_retry_after:
                raise
            delay = max(policy.delay(retry_number), hint or 0.0)
        await asyncio.sleep(delay)
