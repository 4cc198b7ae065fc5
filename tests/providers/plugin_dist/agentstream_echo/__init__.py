"""A third-party provider as a distribution would ship it: a declaration in a light module,
the provider class imported only when a model is asked for. The tests install it into a
temporary directory with a ``dist-info`` naming it in the ``agentstream.providers`` group."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from agentstream.providers.base import (
    ChatRequest,
    MessageComplete,
    MessageStart,
    ProviderEvent,
    TextChunk,
)
from agentstream.providers.catalog import ProviderSpec


class EchoProvider:
    """Says back the last user message."""

    name = "echo"

    def __init__(self, model: str, *, api_key: str | None = None) -> None:
        self.model = model
        self._api_key = api_key

    async def stream(self, request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        yield MessageStart(model=self.model)
        last = request.messages[-1]
        yield TextChunk(text=f"echo: {getattr(last, 'content', '')}")
        yield MessageComplete(stop_reason="end_turn")


PROVIDER = ProviderSpec(
    prefix="echo",
    label="Echo",
    aliases=("parrot",),
    factory=EchoProvider,
    key_env=("ECHO_API_KEY",),
)
