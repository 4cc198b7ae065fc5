"""OpenAI and every OpenAI-compatible server, through the official ``openai`` SDK.

Chat Completions is used rather than the Responses API because it is the one protocol every
compatible server speaks (vLLM, llama.cpp, LM Studio, OpenRouter, Ollama's ``/v1``). What that
costs: OpenAI's own reasoning models do not stream reasoning summaries over Chat Completions
(only the Responses API does), so for them only ``reasoning_tokens`` in usage shows the
thinking. Compatible servers that stream reasoning put it in a non-standard ``delta.reasoning``
(Ollama, OpenRouter, newer vLLM) or ``delta.reasoning_content`` (DeepSeek, older vLLM,
llama.cpp); both are read. Reasoning is never sent back: Chat Completions has no field for it.

Tool-call fragments name only an ``index``; :class:`_StreamConverter` maps each index to the
call id announced in its first fragment.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncGenerator, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Literal

import httpx2
import openai

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
from agentstream.providers._json import dump_arguments
from agentstream.providers._retry import RetryPolicy
from agentstream.providers._sdk import SDKProvider, reasoning_effort
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

__all__ = ["OpenAIProvider", "build_params"]

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}

_PLACEHOLDER_KEY = "not-needed"
"""Sent to compatible servers that need no key; the SDK refuses to start without one."""

MaxTokensField = Literal["max_completion_tokens", "max_tokens"]


class OpenAIProvider(SDKProvider[openai.AsyncOpenAI]):
    """``openai:<model>``. Key and base URL default to ``OPENAI_API_KEY``/``OPENAI_BASE_URL``.

    With a base URL other than OpenAI's, a missing key is replaced by a placeholder (most local
    servers ignore it) and the token limit is sent as ``max_tokens``, which older compatible
    servers know; OpenAI itself gets ``max_completion_tokens``. ``max_tokens_field`` overrides.
    """

    name: ClassVar[str] = "openai"
    vendor: ClassVar[str] = "OpenAI"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        max_tokens_field: MaxTokensField | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        super().__init__(model, client=client, timeouts=timeouts, retry=retry)
        self._api_key = api_key
        self._base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        custom = self._base_url is not None and "api.openai.com" not in self._base_url
        self.max_tokens_field: MaxTokensField = max_tokens_field or (
            "max_tokens" if custom else "max_completion_tokens"
        )

    def _make_client(self) -> openai.AsyncOpenAI:
        key = self._api_key or os.environ.get("OPENAI_API_KEY")
        if not key and self._base_url is not None:
            key = _PLACEHOLDER_KEY
        return openai.AsyncOpenAI(
            api_key=key,
            base_url=self._base_url,
            max_retries=0,  # one retry policy: ours
            timeout=httpx2.Timeout(
                connect=self.timeouts.connect, read=self.timeouts.read, write=60.0, pool=60.0
            ),
        )

    async def _close_client(self, client: openai.AsyncOpenAI) -> None:
        await client.close()

    async def _attempt(self, request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        params = build_params(self.model, request, max_tokens_field=self.max_tokens_field)
        # The SDK walks its params through their types before sending them (no message of
        # ours has a key to rename or a file to encode), which took longer than anything
        # else in a turn once a conversation filled a window (12 ms for 70 messages): the
        # messages go in the body as built, over the empty list the SDK sees.
        messages = params.pop("messages")
        stream = await self.client.chat.completions.create(
            **params, messages=[], extra_body={"messages": messages}
        )
        try:
            converter = _StreamConverter()
            async for chunk in stream:
                for out in converter.feed(chunk):
                    yield out
            yield converter.complete(self.vendor)
        finally:
            await stream.close()

    def _translate(self, exc: Exception) -> ProviderError | None:
        secrets = self._secrets()
        if isinstance(exc, openai.APIStatusError):
            return from_status(
                self.vendor,
                exc.status_code,
                error_type=exc.type or exc.code,
                detail=_error_message(exc.body),
                secrets=secrets,
                retry_after=retry_after_seconds(exc.response.headers),
            )
        if isinstance(exc, openai.APITimeoutError):
            return ProviderError("timeout", safe_message(self.vendor, "timeout"), retryable=True)
        if isinstance(exc, openai.APIConnectionError):
            return ProviderError("network", safe_message(self.vendor, "network"), retryable=True)
        if isinstance(exc, openai.APIError):  # an error object inside an open stream
            return from_status(
                self.vendor,
                None,
                error_type=exc.type or exc.code,
                detail=_error_message(exc.body),
                secrets=secrets,
            )
        if isinstance(exc, openai.OpenAIError) and "api_key" in str(exc):
            return ProviderError(
                "auth", safe_message(self.vendor, "auth", "set OPENAI_API_KEY", secrets=secrets)
            )
        return None

    def _secrets(self) -> Iterable[str]:
        values = [self._api_key, os.environ.get("OPENAI_API_KEY")]
        if self._client is not None:
            values.append(self._client.api_key)
        return [v for v in values if v and v != _PLACEHOLDER_KEY]


def _error_message(body: object) -> str | None:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return None


# --- request ------------------------------------------------------------------------------


def build_params(
    model: str,
    request: ChatRequest,
    *,
    max_tokens_field: MaxTokensField = "max_completion_tokens",
) -> dict[str, Any]:
    """The Chat Completions body for ``request`` (streaming, with usage)."""
    params: dict[str, Any] = {
        "model": model,
        "messages": convert_messages(request.system, request.messages, request.files),
        "stream": True,
        "stream_options": {"include_usage": True},
        max_tokens_field: request.max_tokens,
    }
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.parameters),
                },
            }
            for t in request.tools
        ]
    if request.temperature is not None:
        params["temperature"] = request.temperature
    stop = request.options.get("stop")
    if stop:
        params["stop"] = [stop] if isinstance(stop, str) else list(stop)
    effort = reasoning_effort(request.options)
    if effort is not None:
        params["reasoning_effort"] = effort
    return params


def convert_messages(
    system: str, messages: Sequence[Message], files: Mapping[str, bytes] | None = None
) -> list[dict[str, Any]]:
    """Our history as Chat Completions messages; attachments as ``image_url`` and ``file``
    parts (their content from ``files``, by SHA-256)."""
    files = files or {}
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for message in messages:
        match message:
            case UserMessage(content=content, attachments=()):
                out.append({"role": "user", "content": content})
            case UserMessage(content=content, attachments=attachments):
                parts = [_file_part(f) for f in attached(attachments, files)]
                if content:
                    parts.append({"type": "text", "text": content})
                out.append({"role": "user", "content": parts})
            case AssistantMessage(text=text, tool_calls=calls):
                entry: dict[str, Any] = {"role": "assistant", "content": text or None}
                if calls:
                    entry["tool_calls"] = [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": dump_arguments(c.arguments)},
                        }
                        for c in calls
                    ]
                elif not text:
                    continue  # an empty turn (e.g. only reasoning) says nothing to resend
                out.append(entry)
            case ToolResultsMessage(results=results):
                out.extend(
                    {
                        "role": "tool",
                        "tool_call_id": r.tool_call_id,
                        "content": r.content,
                    }
                    for r in results
                )
                out.extend(_tool_images(results, files))
    return out


def _file_part(file: Attached) -> dict[str, Any]:
    if file.kind == "image":
        return {"type": "image_url", "image_url": {"url": file.data_url}}
    if file.kind == "pdf":
        return {"type": "file", "file": {"filename": file.name, "file_data": file.data_url}}
    return {"type": "text", "text": file.text}


def _tool_images(
    results: Sequence[ToolResultPart], files: Mapping[str, bytes]
) -> list[dict[str, Any]]:
    """Images tools returned, in a user message after the results: a ``tool`` message
    carries text only in Chat Completions."""
    parts: list[dict[str, Any]] = []
    for r in results:
        if r.attachments:
            parts.append(
                {"type": "text", "text": f"Images from the {r.name} call {r.tool_call_id}:"}
            )
            parts.extend(_file_part(f) for f in attached(r.attachments, files))
    return [{"role": "user", "content": parts}] if parts else []


# --- stream -------------------------------------------------------------------------------


class _StreamConverter:
    __slots__ = ("_calls", "_finish", "_started", "_usage")

    def __init__(self) -> None:
        self._calls: dict[int, str] = {}
        self._finish: str | None = None
        self._usage = Usage()
        self._started = False

    def feed(self, chunk: Any) -> Iterator[ProviderEvent]:
        if not self._started:
            self._started = True
            yield MessageStart(model=chunk.model)
        if chunk.usage is not None:
            self._usage = _usage(chunk.usage)
        if not chunk.choices:
            return
        choice = chunk.choices[0]
        delta = choice.delta
        if delta is not None:
            yield from self._delta(delta)
        if choice.finish_reason:
            self._finish = choice.finish_reason

    def _delta(self, delta: Any) -> Iterator[ProviderEvent]:
        extra = delta.model_extra
        if extra:
            reasoning = extra.get("reasoning") or extra.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                yield ReasoningChunk(text=reasoning)
        if delta.content:
            yield TextChunk(text=delta.content)
        if delta.refusal:
            yield TextChunk(text=delta.refusal)
            self._finish = self._finish or "content_filter"
        for call in delta.tool_calls or ():
            yield from self._tool_call(call)

    def _tool_call(self, call: Any) -> Iterator[ProviderEvent]:
        index = call.index if call.index is not None else len(self._calls)
        call_id = self._calls.get(index)
        function = call.function
        if call_id is None:
            name = function.name if function is not None else None
            if not name:
                raise MalformedResponse("tool call fragment before the call's name")
            call_id = call.id or f"call_{uuid.uuid4().hex[:24]}"
            self._calls[index] = call_id
            yield ToolUseStart(call_id=call_id, name=name)
        if function is not None and function.arguments:
            yield ToolInputChunk(call_id=call_id, fragment=function.arguments)

    def complete(self, vendor: str) -> MessageComplete:
        if self._finish is None:
            raise incomplete_stream(vendor)
        stop = _STOP_REASONS.get(self._finish, "other")
        if stop == "end_turn" and self._calls:
            stop = "tool_use"  # some compatible servers say "stop" after tool calls
        return MessageComplete(stop_reason=stop, usage=self._usage, raw_stop_reason=self._finish)


def _usage(usage: Any) -> Usage:
    prompt_details = usage.prompt_tokens_details
    completion_details = usage.completion_tokens_details
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        reasoning_tokens=(completion_details.reasoning_tokens or 0) if completion_details else 0,
        cache_read_tokens=(prompt_details.cached_tokens or 0) if prompt_details else 0,
    )
