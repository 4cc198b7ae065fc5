"""Google Gemini through the official ``google-genai`` SDK (Gemini Developer API).

Gemini sends each function call whole, with its arguments as an object, so a call becomes a
:class:`ToolUseStart` plus one :class:`ToolInputChunk`. A call may carry a ``thoughtSignature``
that must come back with it in the next request; it rides in ``ToolCall.provider_data`` under
``"google"``, as does the vendor's call id when it sends one. Thought parts (``thought: true``)
are reasoning summaries; they are shown but never sent back.

The SDK's automatic function calling and automatic stream continuation are both turned off:
the agent loop runs the tools, and a stream cut short must fail rather than be resumed behind
the retry policy's back.

Closing: the SDK's stream is a chain of nested async generators, and closing the outer one
does not close the HTTP response underneath (it is left to the garbage collector, which fails
to close it while the inner generator is suspended). So the provider hands the SDK its own
``httpx`` client whose response hook records each response opened by the current attempt
(through a context variable), and closes them itself when the attempt ends.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import uuid
from collections.abc import AsyncGenerator, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, ClassVar

import httpx
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from agentstream.events import Usage
from agentstream.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.providers._errors import (
    from_status,
    incomplete_stream,
    retry_after_seconds,
    safe_message,
)
from agentstream.providers._files import Attached, attached
from agentstream.providers._json import dump_arguments
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

__all__ = ["GoogleProvider", "build_contents", "build_config"]

_PROVIDER_DATA_KEY = "google"

_opened: ContextVar[list[httpx.Response] | None] = ContextVar("_gemini_opened", default=None)


async def _track_response(response: httpx.Response) -> None:
    opened = _opened.get()
    if opened is not None:
        opened.append(response)


_REFUSALS = frozenset(
    {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
)


class GoogleProvider(SDKProvider[genai.Client]):
    """``google:<model>``. The key comes from ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY``, the
    base URL from ``GOOGLE_GEMINI_BASE_URL``, as the SDK reads them."""

    name: ClassVar[str] = "google"
    vendor: ClassVar[str] = "Gemini"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        client: genai.Client | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        super().__init__(model, client=client, timeouts=timeouts, retry=retry)
        self._api_key = api_key
        self._base_url = base_url

    def _make_client(self) -> genai.Client:
        # The SDK applies one timeout (ms) to every phase of a request, so it cannot be the
        # connect limit without also cutting slow streams: it is set to the read limit, and
        # first-token/idle limits are ours.
        read = self.timeouts.read
        options = types.HttpOptions(
            base_url=self._base_url,
            timeout=int(read * 1000) if read is not None else None,
            httpx_async_client=httpx.AsyncClient(event_hooks={"response": [_track_response]}),
        )
        return genai.Client(api_key=self._api_key, http_options=options)

    async def _close_client(self, client: genai.Client) -> None:
        http = client._api_client._http_options.httpx_async_client
        await client.aio.aclose()
        if isinstance(http, httpx.AsyncClient):
            await http.aclose()

    async def _attempt(self, request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        opened: list[httpx.Response] = []
        _opened.set(opened)
        try:
            stream = await self.client.aio.models.generate_content_stream(
                model=self.model,
                contents=build_contents(request.messages, request.files),
                config=build_config(request),
            )
            converter = _StreamConverter()
            async for chunk in stream:
                for out in converter.feed(chunk):
                    yield out
            yield converter.complete(self.vendor)
        finally:
            for response in opened:
                await response.aclose()

    def _translate(self, exc: Exception) -> ProviderError | None:
        secrets = self._secrets()
        if isinstance(exc, genai_errors.APIError):
            status = exc.code if isinstance(exc.code, int) and exc.code >= 400 else None
            error_type = exc.status
            if "API_KEY_INVALID" in str(exc.details):
                error_type = "UNAUTHENTICATED"  # Gemini answers a bad key with 400
            return from_status(
                self.vendor,
                status,
                error_type=error_type,
                detail=exc.message,
                secrets=secrets,
                retry_after=retry_after_seconds(getattr(exc.response, "headers", None)),
            )
        if isinstance(exc, genai_errors.UnknownApiResponseError):
            return ProviderError("provider", f"{self.vendor}: malformed stream (invalid JSON)")
        if isinstance(exc, ValueError) and "API key" in str(exc):
            return ProviderError(
                "auth",
                safe_message(self.vendor, "auth", "set GEMINI_API_KEY", secrets=secrets),
            )
        return None

    def _secrets(self) -> Iterable[str]:
        values = [self._api_key, os.environ.get("GOOGLE_API_KEY"), os.environ.get("GEMINI_API_KEY")]
        return [v for v in values if v]


# --- request ------------------------------------------------------------------------------


def build_config(request: ChatRequest) -> types.GenerateContentConfig:
    config = types.GenerateContentConfig(
        max_output_tokens=request.max_tokens,
        temperature=request.temperature,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        automatic_continuation=False,
    )
    if request.system:
        config.system_instruction = request.system
    if request.tools:
        config.tools = [
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(
                        name=t.name,
                        description=t.description,
                        parameters_json_schema=dict(t.parameters),
                    )
                    for t in request.tools
                ]
            )
        ]
    stop = request.options.get("stop")
    if stop:
        config.stop_sequences = [stop] if isinstance(stop, str) else list(stop)
    budget = reasoning_budget(request.options)
    if budget is not None:
        config.thinking_config = types.ThinkingConfig(include_thoughts=True, thinking_budget=budget)
    elif request.options.get("reasoning") is False:
        config.thinking_config = types.ThinkingConfig(include_thoughts=False)
    return config


def build_contents(
    messages: Sequence[Message], files: Mapping[str, bytes] | None = None
) -> list[types.Content]:
    """Our history as Gemini contents; attachments as inline data parts (their content from
    ``files``, by SHA-256)."""
    files = files or {}
    contents: list[types.Content] = []
    vendor_ids: dict[str, str | None] = {}  # our call id -> Gemini's, for functionResponse.id
    for message in messages:
        match message:
            case UserMessage(content=content, attachments=()):
                contents.append(types.Content(role="user", parts=[types.Part(text=content)]))
            case UserMessage(content=content, attachments=attachments):
                given = [_file_part(f) for f in attached(attachments, files)]
                if content:
                    given.append(types.Part(text=content))
                contents.append(types.Content(role="user", parts=given))
            case AssistantMessage(text=text, tool_calls=calls):
                parts: list[types.Part] = []
                if text:
                    parts.append(types.Part(text=text))
                for call in calls:
                    parts.append(_call_part(call))
                    vendor_ids[call.id] = _google_data(call).get("id")
                if parts:
                    contents.append(types.Content(role="model", parts=parts))
            case ToolResultsMessage(results=results):
                parts = [
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=vendor_ids.get(r.tool_call_id),
                            name=r.name,
                            response=_function_response(r),
                        )
                    )
                    for r in results
                ]
                # Images the tools returned follow their responses, in the same turn.
                parts += [_file_part(f) for r in results for f in attached(r.attachments, files)]
                contents.append(types.Content(role="user", parts=parts))
    return contents


def _file_part(file: Attached) -> types.Part:
    if file.kind == "text":
        return types.Part(text=file.text)
    return types.Part(inline_data=types.Blob(mime_type=file.media_type, data=file.data))


def _google_data(call: ToolCall) -> dict[str, Any]:
    data = (call.provider_data or {}).get(_PROVIDER_DATA_KEY)
    return data if isinstance(data, dict) else {}


def _call_part(call: ToolCall) -> types.Part:
    data = _google_data(call)
    signature: bytes | None = None
    if isinstance(data.get("thought_signature"), str):
        try:
            signature = base64.b64decode(data["thought_signature"], validate=True)
        except (binascii.Error, ValueError):
            signature = None  # sent without one; the API then answers with a clear error
    return types.Part(
        function_call=types.FunctionCall(id=data.get("id"), name=call.name, args=call.arguments),
        thought_signature=signature,
    )


# --- stream -------------------------------------------------------------------------------


class _StreamConverter:
    __slots__ = ("_calls", "_finish", "_started", "_usage")

    def __init__(self) -> None:
        self._started = False
        self._calls = 0
        self._finish: str | None = None
        self._usage: Any = None

    def feed(self, chunk: types.GenerateContentResponse) -> Iterator[ProviderEvent]:
        if chunk.usage_metadata is not None:
            self._usage = chunk.usage_metadata  # running totals: the last one is authoritative
        if not self._started:
            self._started = True
            usage = _usage(self._usage) if self._usage is not None else None
            yield MessageStart(model=chunk.model_version, usage=usage)
        if chunk.prompt_feedback is not None and chunk.prompt_feedback.block_reason:
            self._finish = "BLOCKED"
        if not chunk.candidates:
            return
        candidate = chunk.candidates[0]
        if candidate.content is not None:
            for part in candidate.content.parts or ():
                yield from self._part(part)
        if candidate.finish_reason is not None:
            self._finish = str(getattr(candidate.finish_reason, "value", candidate.finish_reason))

    def _part(self, part: types.Part) -> Iterator[ProviderEvent]:
        if part.function_call is not None:
            yield from self._function_call(part.function_call, part.thought_signature)
        elif part.text:
            yield ReasoningChunk(text=part.text) if part.thought else TextChunk(text=part.text)

    def _function_call(
        self, call: types.FunctionCall, signature: bytes | None
    ) -> Iterator[ProviderEvent]:
        self._calls += 1
        data: dict[str, Any] = {}
        if signature:
            data["thought_signature"] = base64.b64encode(signature).decode("ascii")
        if call.id:
            data["id"] = call.id
        call_id = call.id or f"call_{uuid.uuid4().hex[:24]}"
        yield ToolUseStart(
            call_id=call_id,
            name=call.name or "",
            provider_data={_PROVIDER_DATA_KEY: data} if data else None,
        )
        yield ToolInputChunk(call_id=call_id, fragment=dump_arguments(call.args))

    def complete(self, vendor: str) -> MessageComplete:
        if self._finish is None:
            raise incomplete_stream(vendor)
        return MessageComplete(
            stop_reason=self._stop_reason(self._finish),
            usage=_usage(self._usage),
            raw_stop_reason=self._finish,
        )

    def _stop_reason(self, finish: str) -> StopReason:
        if finish == "STOP":
            # Gemini says STOP after function calls too.
            return "tool_use" if self._calls else "end_turn"
        if finish == "MAX_TOKENS":
            return "max_tokens"
        if finish in _REFUSALS or finish == "BLOCKED":
            return "refusal"
        return "other"


def _usage(meta: Any) -> Usage:
    if meta is None:
        return Usage()
    thoughts = meta.thoughts_token_count or 0
    return Usage(
        input_tokens=meta.prompt_token_count or 0,
        # Gemini counts thinking apart from the answer; ours includes it, as OpenAI's does.
        output_tokens=(meta.candidates_token_count or 0) + thoughts,
        reasoning_tokens=thoughts,
        cache_read_tokens=meta.cached_content_token_count or 0,
    )


def _function_response(part: ToolResultPart) -> dict[str, Any]:
    """Gemini takes a tool's answer as an object: a failed call's ``{"error": "..."}`` text is
    sent as that object, everything else as ``{"result": text}``."""
    if part.is_error:
        try:
            value = json.loads(part.content)
        except ValueError:
            value = None
        if isinstance(value, dict) and "error" in value:
            return value
        return {"error": part.content}
    return {"result": part.content}
