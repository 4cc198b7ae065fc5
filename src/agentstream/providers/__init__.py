"""Model providers: one streaming interface, one module per vendor, and a scripted model."""

from agentstream.providers.base import (
    ChatRequest,
    MessageComplete,
    MessageStart,
    Provider,
    ProviderError,
    ProviderEvent,
    ReasoningChunk,
    TextChunk,
    ToolInputChunk,
    ToolSpec,
    ToolUseStart,
)

__all__ = [
    "ChatRequest",
    "MessageComplete",
    "MessageStart",
    "Provider",
    "ProviderError",
    "ProviderEvent",
    "ReasoningChunk",
    "TextChunk",
    "ToolInputChunk",
    "ToolSpec",
    "ToolUseStart",
]
