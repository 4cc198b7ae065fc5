"""Ollama's native ``/api/chat`` through the official ``ollama`` SDK.

Ollama streams NDJSON; each tool call arrives whole (arguments as an object) and carries no id
the SDK keeps, so ids are made here. ``think`` turns reasoning on (``True`` or an effort word);
thinking comes back in ``message.thinking``.

The request body is built here and sent with the SDK's own request machinery
(``AsyncClient._request``) instead of ``AsyncClient.chat()``: ``chat()`` re-validates tools
through a pydantic model that silently drops every JSON Schema keyword it does not list
(nested ``properties``, ``anyOf``, ``additionalProperties``...), which would hide argument
structure from the model. Streaming, framing and errors stay the SDK's.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import httpx
import ollama

from agentstream.events import Usage
from agentstream.messages import AssistantMessage, Message, ToolResultsMessage, UserMessage
from agentstream.providers._errors import from_status, incomplete_stream, safe_message
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

__all__ = ["OllamaProvider", "build_body"]


class OllamaProvider(SDKProvider[ollama.AsyncClient]):
    """``ollama:<model>`` (e.g. ``ollama:qwen3:14b``). The host defaults to ``OLLAMA_HOST``
    (else ``127.0.0.1:11434``), as the SDK reads it."""

    name: ClassVar[str] = "ollama"
    vendor: ClassVar[str] = "Ollama"

    def __init__(
        self,
        model: str,
        *,
        host: str | None = None,
        base_url: str | None = None,
        client: ollama.AsyncClient | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        super().__init__(model, client=client, timeouts=timeouts, retry=retry)
        self._host = host or base_url

    def _make_client(self) -> ollama.AsyncClient:
        t = self.timeouts
        return ollama.AsyncClient(
            host=self._host,
            timeout=httpx.Timeout(connect=t.connect, read=t.read, write=60.0, pool=60.0),
        )

    async def _close_client(self, client: ollama.AsyncClient) -> None:
        await client._client.aclose()  # AsyncClient.close() is untyped

    async def _attempt(self, request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        body = build_body(self.model, request)
        stream = await self.client._request(
            ollama.ChatResponse, "POST", "/api/chat", json=body, stream=True
        )
        try:
            converter = _StreamConverter()
            async for chunk in stream:
                for out in converter.feed(chunk):
                    yield out
            yield converter.complete(self.vendor)
        finally:
            await stream.aclose()  # type: ignore[attr-defined]

    def _translate(self, exc: Exception) -> ProviderError | None:
        if isinstance(exc, ollama.ResponseError):
            status = exc.status_code if exc.status_code >= 400 else None
            return from_status(self.vendor, status, detail=exc.error, secrets=self._secrets())
        if isinstance(exc, ollama.RequestError):
            return ProviderError("bad_request", safe_message(self.vendor, "bad_request", exc.error))
        return None  # connection failures are plain httpx/OS errors: the shared boundary

    def _secrets(self) -> list[str]:
        key = os.environ.get("OLLAMA_API_KEY")
        return [key] if key else []


# --- request ------------------------------------------------------------------------------


def build_body(model: str, request: ChatRequest) -> dict[str, Any]:
    """The ``/api/chat`` body for ``request``."""
    options: dict[str, Any] = {"num_predict": request.max_tokens}
    if request.temperature is not None:
        options["temperature"] = request.temperature
    stop = request.options.get("stop")
    if stop:
        options["stop"] = [stop] if isinstance(stop, str) else list(stop)
    body: dict[str, Any] = {
        "model": model,
        "messages": convert_messages(request.system, request.messages, request.files),
        "stream": True,
        "options": options,
        # Ollama's default shortens a prompt longer than its context without a word, system
        # prompt first; refused instead, the agent's own compaction decides what goes.
        "truncate": False,
    }
    if request.tools:
        body["tools"] = [
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
    setting = request.options.get("reasoning")
    if isinstance(setting, bool):
        body["think"] = setting
    elif setting is not None:
        effort = reasoning_effort(request.options)
        body["think"] = effort if effort in ("low", "medium", "high") else True
    return body


def convert_messages(
    system: str, messages: Sequence[Message], files: Mapping[str, bytes] | None = None
) -> list[dict[str, Any]]:
    """Our history as Ollama chat messages; images in ``images`` (base64), text files in
    the content (their content from ``files``, by SHA-256). Ollama reads no PDFs: the model
    profiles refuse them before the call."""
    files = files or {}
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for message in messages:
        match message:
            case UserMessage(content=content, attachments=()):
                out.append({"role": "user", "content": content})
            case UserMessage(content=content, attachments=attachments):
                out.append({"role": "user", **_with_files(content, attached(attachments, files))})
            case AssistantMessage(text=text, tool_calls=calls, reasoning=reasoning):
                entry: dict[str, Any] = {"role": "assistant", "content": text}
                thinking = "".join(
                    r.text for r in reasoning if r.provider in (None, OllamaProvider.name)
                )
                if thinking:
                    entry["thinking"] = thinking
                if calls:
                    entry["tool_calls"] = [
                        {"function": {"name": c.name, "arguments": c.arguments}} for c in calls
                    ]
                out.append(entry)
            case ToolResultsMessage(results=results):
                out.extend(
                    {
                        "role": "tool",
                        "tool_name": r.name,
                        **_with_files(r.content, attached(r.attachments, files)),
                    }
                    for r in results
                )
    return out


def _with_files(content: str, files: list[Attached]) -> dict[str, Any]:
    """``content`` and ``images``: text files written before the text, images base64."""
    if any(f.kind == "pdf" for f in files):
        raise ProviderError("bad_request", "Ollama reads no PDF documents")
    texts = [f.text for f in files if f.kind == "text"]
    entry: dict[str, Any] = {"content": "\n\n".join([*texts, content] if content else texts)}
    images = [f.base64 for f in files if f.kind == "image"]
    if images:
        entry["images"] = images
    return entry


# --- stream -------------------------------------------------------------------------------


class _StreamConverter:
    __slots__ = ("_calls", "_done", "_started", "_usage")

    def __init__(self) -> None:
        self._started = False
        self._calls = 0
        self._done: str | None = None
        self._usage = Usage()

    def feed(self, chunk: ollama.ChatResponse) -> Iterator[ProviderEvent]:
        if not self._started:
            self._started = True
            yield MessageStart(model=chunk.model)
        message = chunk.message
        if message.thinking:
            yield ReasoningChunk(text=message.thinking)
        if message.content:
            yield TextChunk(text=message.content)
        for call in message.tool_calls or ():
            self._calls += 1
            call_id = f"call_{uuid.uuid4().hex[:24]}"
            yield ToolUseStart(call_id=call_id, name=call.function.name)
            yield ToolInputChunk(call_id=call_id, fragment=dump_arguments(call.function.arguments))
        if chunk.done:
            self._done = chunk.done_reason or "stop"
            self._usage = Usage(
                input_tokens=chunk.prompt_eval_count or 0,
                output_tokens=chunk.eval_count or 0,
            )

    def complete(self, vendor: str) -> MessageComplete:
        if self._done is None:
            raise incomplete_stream(vendor)
        stop: StopReason
        if self._done == "length":
            stop = "max_tokens"
        elif self._done == "stop":
            # Ollama says "stop" after tool calls too.
            stop = "tool_use" if self._calls else "end_turn"
        else:
            stop = "other"
        return MessageComplete(stop_reason=stop, usage=self._usage, raw_stop_reason=self._done)
