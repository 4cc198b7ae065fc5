"""Model providers: one streaming interface, one module per vendor, and a scripted model."""

from agentstream.providers._retry import RetryPolicy
from agentstream.providers._timeouts import Timeouts
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
from agentstream.providers.profiles import ModelProfile, ModelProfiles, Prices
from agentstream.providers.registry import ModelInfo, ModelRegistry, resolve_provider

__all__ = [
    "ChatRequest",
    "MessageComplete",
    "MessageStart",
    "ModelInfo",
    "ModelProfile",
    "ModelProfiles",
    "ModelRegistry",
    "Provider",
    "ProviderError",
    "Prices",
    "ProviderEvent",
    "ReasoningChunk",
    "RetryPolicy",
    "TextChunk",
    "Timeouts",
    "ToolInputChunk",
    "ToolSpec",
    "ToolUseStart",
    "resolve_provider",
]
