"""Stream timeouts shared by every vendor.

Three limits: ``connect`` (opening the TCP/TLS connection; handed to the SDK's HTTP client),
``first_token`` (from sending the request to the first event after the stream's opening
metadata: covers queueing and a model that thinks silently) and ``idle`` (silence between two
events once streaming). The last two are enforced here, around the vendor's event iterator,
so they mean the same for every SDK; the SDKs' own read timeouts are set no tighter so they
never fire first.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass
from typing import TypeVar

from agentstream.providers.base import MessageStart, ProviderError

__all__ = ["Timeouts", "with_timeouts"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeouts:
    """Seconds. ``None`` disables a limit."""

    connect: float | None = 10.0
    first_token: float | None = 180.0
    idle: float | None = 90.0

    @property
    def read(self) -> float | None:
        """A read timeout for the SDK's HTTP client, loose enough that ours fire first."""
        if self.first_token is None or self.idle is None:
            return None
        return max(self.first_token, self.idle) + 5.0


async def with_timeouts(
    source: AsyncGenerator[T, None], timeouts: Timeouts, vendor: str
) -> AsyncGenerator[T, None]:
    """Yield from ``source``, failing with a ``timeout`` :class:`ProviderError` when the first
    item or any later one takes too long. ``source`` is closed on every exit."""
    limit, phase = timeouts.first_token, "for the first token"
    async with aclosing(source):
        while True:
            try:
                async with asyncio.timeout(limit):
                    item = await anext(source)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise ProviderError(
                    "timeout", f"{vendor}: no response {phase} after {limit:g}s"
                ) from None
            yield item
            if not isinstance(item, MessageStart):
                # A stream's opening metadata (OpenAI-compatible servers send an empty role
                # chunk at once) is not a token: a model thinking silently after it is still
                # within its first-token allowance.
                limit, phase = timeouts.idle, "between tokens"
