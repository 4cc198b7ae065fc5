"""Fake vendor upstreams for the provider tests: one shared server, one framing module per
vendor. Every vendor module offers the same scenario builders (see :class:`VendorFake`), so the
behaviour every provider shares is tested once, parametrized over vendors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from agentstream.providers._retry import RetryPolicy
from agentstream.providers._timeouts import Timeouts
from agentstream.providers.base import Provider

from .server import FakeUpstream, Recorded, Reply

__all__ = ["FakeCall", "FakeUpstream", "Recorded", "Reply", "VendorFake"]


@dataclass(frozen=True)
class FakeCall:
    """A tool call to stream. Vendors that send calls whole join ``fragments`` first."""

    id: str
    name: str
    fragments: tuple[str, ...]

    @property
    def arguments(self) -> str:
        return "".join(self.fragments)


class VendorFake(Protocol):
    name: str
    secret: str

    def provider(
        self,
        server: FakeUpstream,
        *,
        retry: RetryPolicy | None = None,
        timeouts: Timeouts | None = None,
        model: str = ...,
    ) -> Provider: ...

    def text(self, *pieces: str, hang: bool = False) -> Reply: ...

    def truncated(self, *pieces: str) -> Reply:
        """A text turn cut off at the output limit, in the vendor's own way of saying so."""
        ...

    def tool_calls(self, text: str, *calls: FakeCall) -> Reply: ...

    def reasoning(self, thought: str, text: str) -> Reply: ...

    def usage_turn(self) -> tuple[Reply, dict[str, int]]: ...

    def error_after_text(self, text: str) -> Reply: ...

    def http_error(self, status: int, message: str) -> Reply: ...

    def context_overflow(self, window: int, requested: int) -> Reply:
        """The vendor's refusal of a request longer than the model's window, as it sends it."""
        ...

    def malformed(self) -> Reply: ...

    def request_body(self, recorded: Recorded) -> Any: ...
