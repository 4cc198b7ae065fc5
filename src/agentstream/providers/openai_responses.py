"""OpenAI's Responses API: ``openai-responses:<model>``, through the official ``openai`` SDK.

A prefix of its own rather than a setting on ``openai:`` because the two are different
protocols with different reach: Chat Completions is what every OpenAI-compatible server speaks,
the Responses API is what OpenAI's reasoning models need to stream their reasoning. Choosing it
in the model id keeps a configuration readable (``openai-responses:gpt-5-mini``) and lets both
be offered side by side.

What it adds over ``openai:``: reasoning summaries (``reasoning={"summary": "auto"}``) stream
as reasoning deltas, and each reasoning item is kept for the next turn as encrypted content
(``store=false`` with ``include=["reasoning.encrypted_content"]``), so no state lives on
OpenAI's side. The item travels in the reasoning block's ``signature`` and goes back only to
this provider. Client, keys, base URL and the error boundary are :class:`OpenAIProvider`'s.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from agentstream.events import Usage
from agentstream.messages import (
    AssistantMessage,
    Message,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.providers._errors import MalformedResponse, from_status, incomplete_stream
from agentstream.providers._files import Attached, attached
from agentstream.providers._json import dump_arguments
from agentstream.providers._sdk import reasoning_effort
from agentstream.providers.base import (
    ChatRequest,
    MessageComplete,
    MessageStart,
    ProviderEvent,
    ReasoningChunk,
    StopReason,
    TextChunk,
    ToolInputChunk,
    ToolUseStart,
)
from agentstream.providers.openai import OpenAIProvider

__all__ = ["OpenAIResponsesProvider", "build_params", "convert_input"]

_INCOMPLETE: dict[str, StopReason] = {
    "max_output_tokens": "max_tokens",
    "content_filter": "refusal",
}


class OpenAIResponsesProvider(OpenAIProvider):
    """``openai-responses:<model>``. Takes the same options as :class:`OpenAIProvider`."""

    name: ClassVar[str] = "openai-responses"

    async def _attempt(self, request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        params = build_params(self.model, request, provider=self.name)
        stream = await self.client.responses.create(**params)
        try:
            converter = _StreamConverter(self.vendor, self._secrets())
            async for event in stream:
                for out in converter.feed(event):
                    yield out
            yield converter.complete()
        finally:
            await stream.close()


# --- request ------------------------------------------------------------------------------


def build_params(model: str, request: ChatRequest, *, provider: str) -> dict[str, Any]:
    """The Responses body for ``request``: streaming, stateless (``store=false``)."""
    params: dict[str, Any] = {
        "model": model,
        "input": convert_input(request.messages, provider=provider, files=request.files),
        "stream": True,
        "store": False,
        "max_output_tokens": request.max_tokens,
    }
    if request.system:
        params["instructions"] = request.system
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": dict(t.parameters),
            }
            for t in request.tools
        ]
    if request.temperature is not None:
        params["temperature"] = request.temperature
    effort = reasoning_effort(request.options)
    if effort is not None:
        params["reasoning"] = {"effort": effort, "summary": "auto"}
        params["include"] = ["reasoning.encrypted_content"]
    return params


def convert_input(
    messages: Sequence[Message], *, provider: str, files: Mapping[str, bytes] | None = None
) -> list[dict[str, Any]]:
    """Our history as Responses input items. Reasoning goes back only when this provider made
    it and kept its encrypted content; other vendors' reasoning is dropped. Attachments are
    ``input_image`` and ``input_file`` parts (their content from ``files``, by SHA-256)."""
    files = files or {}
    out: list[dict[str, Any]] = []
    for message in messages:
        match message:
            case UserMessage(content=content, attachments=()):
                out.append({"role": "user", "content": content})
            case UserMessage(content=content, attachments=attachments):
                parts = [_input_part(f) for f in attached(attachments, files)]
                if content:
                    parts.append({"type": "input_text", "text": content})
                out.append({"role": "user", "content": parts})
            case AssistantMessage(text=text, reasoning=reasoning, tool_calls=calls):
                for block in reasoning:
                    if block.provider == provider and block.signature:
                        out.append(_reasoning_item(block.signature, block.text))
                if text:
                    out.append({"role": "assistant", "content": text})
                out.extend(
                    {
                        "type": "function_call",
                        "call_id": c.id,
                        "name": c.name,
                        "arguments": dump_arguments(c.arguments),
                    }
                    for c in calls
                )
            case ToolResultsMessage(results=results):
                out.extend(
                    {
                        "type": "function_call_output",
                        "call_id": r.tool_call_id,
                        "output": _output(r, files),
                    }
                    for r in results
                )
    return out


def _input_part(file: Attached) -> dict[str, Any]:
    if file.kind == "image":
        return {"type": "input_image", "image_url": file.data_url, "detail": "auto"}
    if file.kind == "pdf":
        return {"type": "input_file", "filename": file.name, "file_data": file.data_url}
    return {"type": "input_text", "text": file.text}


def _output(result: ToolResultPart, files: Mapping[str, bytes]) -> str | list[dict[str, Any]]:
    """A tool's output: its text, and the images it returned as input parts beside it."""
    if not result.attachments:
        return result.content
    parts = [{"type": "input_text", "text": result.content}]
    return parts + [_input_part(f) for f in attached(result.attachments, files)]


def _reasoning_item(signature: str, text: str) -> dict[str, Any]:
    kept = json.loads(signature)
    summary = [{"type": "summary_text", "text": text}] if text else []
    return {
        "type": "reasoning",
        "id": kept["id"],
        "encrypted_content": kept["encrypted_content"],
        "summary": summary,
    }


# --- stream -------------------------------------------------------------------------------


class _StreamConverter:
    """Responses stream events to provider events. Function calls are announced by
    ``output_item.added`` and their argument deltas name the item id; the converter maps item
    ids to call ids. The stream ends with ``response.completed`` (or ``.incomplete``); a
    ``response.failed`` or ``error`` event is raised as the error it describes."""

    __slots__ = ("_calls", "_finish", "_refused", "_secrets", "_usage", "_vendor", "_with_args")

    def __init__(self, vendor: str, secrets: Sequence[str] | Any = ()) -> None:
        self._vendor = vendor
        self._secrets = list(secrets)
        self._calls: dict[str, str] = {}  # item id -> call id
        self._with_args: set[str] = set()  # item ids whose arguments were streamed
        self._finish: StopReason | None = None
        self._refused = False
        self._usage = Usage()

    def feed(self, event: Any) -> Iterator[ProviderEvent]:
        kind = event.type
        if kind == "response.created":
            yield MessageStart(model=event.response.model)
        elif kind == "response.output_text.delta":
            if event.delta:
                yield TextChunk(text=event.delta)
        elif kind == "response.refusal.delta":
            self._refused = True
            if event.delta:
                yield TextChunk(text=event.delta)
        elif kind == "response.reasoning_summary_text.delta":
            if event.delta:
                yield ReasoningChunk(text=event.delta)
        elif kind == "response.reasoning_summary_part.added" and event.summary_index > 0:
            yield ReasoningChunk(text="\n\n")
        elif kind == "response.output_item.added" and event.item.type == "function_call":
            item = event.item
            if not item.name or not item.call_id:
                raise MalformedResponse("function call without a name or call id")
            self._calls[item.id or item.call_id] = item.call_id
            yield ToolUseStart(call_id=item.call_id, name=item.name)
        elif kind == "response.function_call_arguments.delta":
            call_id = self._calls.get(event.item_id)
            if call_id is None:
                raise MalformedResponse("arguments for an unannounced function call")
            if event.delta:
                self._with_args.add(event.item_id)
                yield ToolInputChunk(call_id=call_id, fragment=event.delta)
        elif kind == "response.output_item.done":
            yield from self._item_done(event.item)
        elif kind == "response.completed":
            self._usage = _usage(event.response.usage)
            self._finish = "refusal" if self._refused else "end_turn"
        elif kind == "response.incomplete":
            self._usage = _usage(event.response.usage)
            details = event.response.incomplete_details
            self._finish = _INCOMPLETE.get(getattr(details, "reason", None) or "", "other")
        elif kind == "response.failed":
            error = event.response.error
            raise from_status(
                self._vendor,
                None,
                error_type=getattr(error, "code", None),
                detail=getattr(error, "message", None),
                secrets=self._secrets,
            )
        elif kind == "error":
            raise from_status(
                self._vendor, None, error_type=event.code, detail=event.message,
                secrets=self._secrets,
            )  # fmt: skip

    def _item_done(self, item: Any) -> Iterator[ProviderEvent]:
        if item.type == "reasoning" and item.encrypted_content:
            kept = {"id": item.id, "encrypted_content": item.encrypted_content}
            yield ReasoningChunk(signature=json.dumps(kept, separators=(",", ":")))
        elif item.type == "function_call":
            key = item.id or item.call_id
            if key not in self._calls:  # a call sent whole, without output_item.added
                self._calls[key] = item.call_id
                yield ToolUseStart(call_id=item.call_id, name=item.name)
            if key not in self._with_args and item.arguments:
                self._with_args.add(key)
                yield ToolInputChunk(call_id=item.call_id, fragment=item.arguments)

    def complete(self) -> MessageComplete:
        if self._finish is None:
            raise incomplete_stream(self._vendor)
        stop = self._finish
        if stop == "end_turn" and self._calls:
            stop = "tool_use"
        return MessageComplete(stop_reason=stop, usage=self._usage, raw_stop_reason=stop)


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    input_details = usage.input_tokens_details
    output_details = usage.output_tokens_details
    return Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        reasoning_tokens=(output_details.reasoning_tokens or 0) if output_details else 0,
        cache_read_tokens=(input_details.cached_tokens or 0) if input_details else 0,
    )
