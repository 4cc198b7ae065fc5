"""Anthropic (Claude) through the official ``anthropic`` SDK's Messages API.

Three parts: :func:`build_params` turns a :class:`ChatRequest` into the Messages request,
:class:`_StreamConverter` turns the SDK's raw stream events into provider events, and
:meth:`AnthropicProvider._translate` is the error boundary. Thinking blocks come back in the
next request exactly as received (text plus signature, or the redacted data), which the API
requires when thinking and tools are combined; reasoning made by another vendor is dropped.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import anthropic
import httpx2

from agentstream.events import Usage
from agentstream.messages import (
    AssistantMessage,
    Message,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.providers._errors import (
    MalformedResponse,
    from_status,
    incomplete_stream,
    retry_after_seconds,
    safe_message,
)
from agentstream.providers._files import Attached, attached
from agentstream.providers._retry import RetryPolicy
from agentstream.providers._sdk import SDKProvider, reasoning_budget
from agentstream.providers._timeouts import Timeouts
from agentstream.providers.base import (
    ChatRequest,
    MessageComplete,
    MessageStart,
    ProviderError,
    ProviderEvent,
    ReasoningChunk,
    StopReason,
    TextChunk,
    ToolInputChunk,
    ToolUseStart,
)

__all__ = ["AnthropicProvider", "build_params"]

_MIN_THINKING_BUDGET = 1024

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "model_context_window_exceeded": "max_tokens",
}


class AnthropicProvider(SDKProvider[anthropic.AsyncAnthropic]):
    """``anthropic:<model>``. The key and base URL default to ``ANTHROPIC_API_KEY`` (or
    ``ANTHROPIC_AUTH_TOKEN``) and ``ANTHROPIC_BASE_URL``, as the SDK reads them."""

    name: ClassVar[str] = "anthropic"
    vendor: ClassVar[str] = "Anthropic"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: anthropic.AsyncAnthropic | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        super().__init__(model, client=client, timeouts=timeouts, retry=retry)
        self._api_key = api_key
        self._base_url = base_url

    def _make_client(self) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=self._api_key,
            base_url=self._base_url,
            max_retries=0,  # one retry policy: ours
            timeout=httpx2.Timeout(
                connect=self.timeouts.connect, read=self.timeouts.read, write=60.0, pool=60.0
            ),
        )

    async def _close_client(self, client: anthropic.AsyncAnthropic) -> None:
        await client.close()

    async def _attempt(self, request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        params = build_params(self.model, request)
        stream = await self.client.messages.create(**params, stream=True)
        try:
            converter = _StreamConverter()
            async for event in stream:
                for out in converter.feed(event):
                    yield out
            if not converter.finished:
                raise incomplete_stream(self.vendor)
        finally:
            await stream.close()

    def _translate(self, exc: Exception) -> ProviderError | None:
        secrets = self._secrets()
        if isinstance(exc, anthropic.APIStatusError):
            message = _error_message(exc.body)
            return from_status(
                self.vendor,
                exc.status_code if exc.status_code >= 400 else None,
                error_type=exc.type,
                detail=message,
                secrets=secrets,
                retry_after=retry_after_seconds(exc.response.headers),
            )
        if isinstance(exc, anthropic.APITimeoutError):
            return ProviderError("timeout", safe_message(self.vendor, "timeout"), retryable=True)
        if isinstance(exc, anthropic.APIConnectionError):
            return ProviderError("network", safe_message(self.vendor, "network"), retryable=True)
        if isinstance(exc, anthropic.CredentialsError):
            return ProviderError(
                "auth", safe_message(self.vendor, "auth", "set ANTHROPIC_API_KEY", secrets=secrets)
            )
        if isinstance(exc, anthropic.AnthropicError) and "api_key" in str(exc).lower():
            return ProviderError(
                "auth", safe_message(self.vendor, "auth", "set ANTHROPIC_API_KEY", secrets=secrets)
            )
        return None

    def _secrets(self) -> Iterable[str]:
        client = self._client
        values = [self._api_key, client.api_key if client else None]
        values.append(client.auth_token if client else None)
        return [v for v in values if v]


def _error_message(body: object) -> str | None:
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return None


# --- request ------------------------------------------------------------------------------


def build_params(model: str, request: ChatRequest) -> dict[str, Any]:
    """Keyword arguments for ``messages.create`` (without ``stream``) for ``request``."""
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": convert_messages(request.messages, request.files),
    }
    if request.system:
        params["system"] = request.system
    if request.tools:
        params["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
            for t in request.tools
        ]
    stop = request.options.get("stop")
    if stop:
        params["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    budget = reasoning_budget(request.options)
    if budget is not None:
        budget = min(budget, request.max_tokens - 1)
        if budget < _MIN_THINKING_BUDGET:
            raise ProviderError(
                "bad_request",
                f"Anthropic: reasoning needs max_tokens above {_MIN_THINKING_BUDGET}",
            )
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
    elif request.temperature is not None:
        # Extended thinking only accepts the default temperature, so it is sent without one.
        # anthropic 2.x no longer lists ``temperature`` among create()'s arguments; the
        # Messages API body still takes it, so it goes in ``extra_body``.
        params["extra_body"] = {"temperature": request.temperature}
    return params


def convert_messages(
    messages: Sequence[Message], files: Mapping[str, bytes] | None = None
) -> list[dict[str, Any]]:
    """Our history as Messages API messages; attachments as image and document blocks
    (their content from ``files``, by SHA-256)."""
    files = files or {}
    out: list[dict[str, Any]] = []
    for message in messages:
        match message:
            case UserMessage(content=content, attachments=()):
                out.append({"role": "user", "content": content})
            case UserMessage(content=content, attachments=attachments):
                blocks = [_file_block(f) for f in attached(attachments, files)]
                if content:
                    blocks.append({"type": "text", "text": content})
                out.append({"role": "user", "content": blocks})
            case AssistantMessage():
                blocks = _assistant_blocks(message)
                if blocks:
                    out.append({"role": "assistant", "content": blocks})
            case ToolResultsMessage(results=results):
                out.append(
                    {
                        "role": "user",
                        "content": [_tool_result(r, files) for r in results],
                    }
                )
    return out


def _file_block(file: Attached) -> dict[str, Any]:
    """An attachment as Claude reads it: images and PDFs natively (base64), text as text."""
    if file.kind == "text":
        return {"type": "text", "text": file.text}
    source = {"type": "base64", "media_type": file.media_type, "data": file.base64}
    if file.kind == "image":
        return {"type": "image", "source": source}
    return {"type": "document", "source": source, "title": file.name}


def _tool_result(result: ToolResultPart, files: Mapping[str, bytes]) -> dict[str, Any]:
    content: str | list[dict[str, Any]] = result.content
    if result.attachments:
        content = [{"type": "text", "text": result.content}]
        content += [_file_block(f) for f in attached(result.attachments, files)]
    return {
        "type": "tool_result",
        "tool_use_id": result.tool_call_id,
        "content": content,
        "is_error": result.is_error,
    }


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for reasoning in message.reasoning:
        if reasoning.provider not in (None, AnthropicProvider.name):
            continue  # another vendor's reasoning means nothing to Claude
        if reasoning.redacted is not None:
            blocks.append({"type": "redacted_thinking", "data": reasoning.redacted})
        elif reasoning.signature:
            blocks.append(
                {"type": "thinking", "thinking": reasoning.text, "signature": reasoning.signature}
            )
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    blocks.extend(
        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
        for c in message.tool_calls
    )
    return blocks


# --- stream -------------------------------------------------------------------------------


class _StreamConverter:
    """Raw Messages stream events in, provider events out. Tool-use blocks are tracked by
    content-block index because deltas name only the index."""

    __slots__ = ("_calls", "_raw_stop", "_usage", "finished")

    def __init__(self) -> None:
        self._calls: dict[int, str] = {}
        self._usage: dict[str, int] = {}
        self._raw_stop: str | None = None
        self.finished = False

    def feed(self, event: Any) -> Iterator[ProviderEvent]:
        kind = event.type
        if kind == "content_block_delta":
            yield from self._delta(event.index, event.delta)
        elif kind == "content_block_start":
            yield from self._block_start(event.index, event.content_block)
        elif kind == "message_start":
            self._add_usage(event.message.usage)
            yield MessageStart(model=event.message.model, usage=self._final_usage())
        elif kind == "message_delta":
            self._raw_stop = event.delta.stop_reason or self._raw_stop
            self._add_usage(event.usage)
        elif kind == "message_stop":
            self.finished = True
            yield MessageComplete(
                stop_reason=_STOP_REASONS.get(self._raw_stop or "", "other"),
                usage=self._final_usage(),
                raw_stop_reason=self._raw_stop,
            )

    def _block_start(self, index: int, block: Any) -> Iterator[ProviderEvent]:
        if block.type == "tool_use":
            self._calls[index] = block.id
            yield ToolUseStart(call_id=block.id, name=block.name)
        elif block.type == "redacted_thinking":
            yield ReasoningChunk(redacted=block.data)
        elif block.type == "text" and block.text:
            yield TextChunk(text=block.text)

    def _delta(self, index: int, delta: Any) -> Iterator[ProviderEvent]:
        kind = delta.type
        if kind == "text_delta":
            yield TextChunk(text=delta.text)
        elif kind == "input_json_delta":
            if delta.partial_json:
                call_id = self._calls.get(index)
                if call_id is None:
                    raise MalformedResponse("input_json_delta outside a tool_use block")
                yield ToolInputChunk(call_id=call_id, fragment=delta.partial_json)
        elif kind == "thinking_delta":
            yield ReasoningChunk(text=delta.thinking)
        elif kind == "signature_delta":
            yield ReasoningChunk(signature=delta.signature)

    def _add_usage(self, usage: Any) -> None:
        # message_delta counts are cumulative: later values replace earlier ones.
        for field in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = getattr(usage, field, None)
            if value is not None:
                self._usage[field] = value
        details = getattr(usage, "output_tokens_details", None)
        if details is not None and details.thinking_tokens is not None:
            self._usage["thinking_tokens"] = details.thinking_tokens

    def _final_usage(self) -> Usage:
        u = self._usage
        cache_read = u.get("cache_read_input_tokens", 0)
        cache_write = u.get("cache_creation_input_tokens", 0)
        return Usage(
            # Anthropic counts cached prompt tokens apart; ours includes them, as OpenAI's does.
            input_tokens=u.get("input_tokens", 0) + cache_read + cache_write,
            output_tokens=u.get("output_tokens", 0),
            reasoning_tokens=u.get("thinking_tokens", 0),
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
        )
