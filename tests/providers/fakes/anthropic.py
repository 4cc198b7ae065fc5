"""Anthropic Messages API streaming, as on the wire: ``event:``/``data:`` SSE pairs."""

from __future__ import annotations

import json
from typing import Any

from agentstream.providers._retry import RetryPolicy
from agentstream.providers._timeouts import Timeouts
from agentstream.providers.anthropic import AnthropicProvider

from . import FakeCall
from .server import FakeUpstream, Recorded, Reply

name = "anthropic"
secret = "sk-ant-api03-FAKESECRETKEY1234567890"
MODEL = "claude-sonnet-4-6"


def provider(
    server: FakeUpstream,
    *,
    retry: RetryPolicy | None = None,
    timeouts: Timeouts | None = None,
    model: str = MODEL,
) -> AnthropicProvider:
    return AnthropicProvider(
        model, api_key=secret, base_url=server.url, retry=retry, timeouts=timeouts
    )


def event(name_: str, data: dict[str, Any]) -> bytes:
    return f"event: {name_}\ndata: {json.dumps(data)}\n\n".encode()


def message_start(input_tokens: int = 12, cache_read: int = 0, cache_write: int = 0) -> bytes:
    return event(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_01",
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": input_tokens,
                    "cache_creation_input_tokens": cache_write,
                    "cache_read_input_tokens": cache_read,
                    "output_tokens": 1,
                },
            },
        },
    )


def block_start(index: int, block: dict[str, Any]) -> bytes:
    return event(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )


def delta(index: int, d: dict[str, Any]) -> bytes:
    return event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})


def block_stop(index: int) -> bytes:
    return event("content_block_stop", {"type": "content_block_stop", "index": index})


def text_block(index: int, *pieces: str) -> list[bytes]:
    return [
        block_start(index, {"type": "text", "text": ""}),
        *(delta(index, {"type": "text_delta", "text": p}) for p in pieces),
        block_stop(index),
    ]


def tool_block(index: int, call: FakeCall) -> list[bytes]:
    return [
        block_start(
            index,
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": {},
                "caller": {"type": "direct"},
            },
        ),
        delta(index, {"type": "input_json_delta", "partial_json": ""}),
        *(delta(index, {"type": "input_json_delta", "partial_json": f}) for f in call.fragments),
        block_stop(index),
    ]


def thinking_block(index: int, thought: str, signature: str) -> list[bytes]:
    return [
        block_start(index, {"type": "thinking", "thinking": "", "signature": ""}),
        event("ping", {"type": "ping"}),
        delta(index, {"type": "thinking_delta", "thinking": thought}),
        delta(index, {"type": "signature_delta", "signature": signature}),
        block_stop(index),
    ]


def message_end(stop_reason: str, output_tokens: int = 20, **usage: Any) -> list[bytes]:
    return [
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens, **usage},
            },
        ),
        event("message_stop", {"type": "message_stop"}),
    ]


def sse(chunks: list[bytes], *, hang: bool = False) -> Reply:
    return Reply(chunks=chunks, hang=hang)


def text(*pieces: str, hang: bool = False) -> Reply:
    if hang:
        return sse([message_start(), *text_block(0, *pieces)[:-1]], hang=True)
    return sse([message_start(), *text_block(0, *pieces), *message_end("end_turn")])


def truncated(*pieces: str) -> Reply:
    """A turn cut off at the output limit."""
    return sse([message_start(), *text_block(0, *pieces), *message_end("max_tokens")])


def tool_calls(text_: str, *calls: FakeCall) -> Reply:
    chunks = [message_start()]
    index = 0
    if text_:
        chunks += text_block(0, text_)
        index = 1
    for call in calls:
        chunks += tool_block(index, call)
        index += 1
    return sse([*chunks, *message_end("tool_use")])


def reasoning(thought: str, text_: str) -> Reply:
    return sse(
        [
            message_start(),
            *thinking_block(0, thought, "c2lnLWZpeHR1cmU="),
            block_start(1, {"type": "redacted_thinking", "data": "RU5DUllQVEVE"}),
            block_stop(1),
            *text_block(2, text_),
            *message_end("end_turn"),
        ]
    )


def usage_turn() -> tuple[Reply, dict[str, int]]:
    reply = sse(
        [
            message_start(input_tokens=100, cache_read=40, cache_write=10),
            *text_block(0, "ok"),
            *message_end(
                "end_turn", output_tokens=30, output_tokens_details={"thinking_tokens": 7}
            ),
        ]
    )
    expected = {
        "input_tokens": 150,
        "output_tokens": 30,
        "reasoning_tokens": 7,
        "cache_read_tokens": 40,
        "cache_write_tokens": 10,
    }
    return reply, expected


def error_after_text(text_: str) -> Reply:
    return sse(
        [
            message_start(),
            block_start(0, {"type": "text", "text": ""}),
            delta(0, {"type": "text_delta", "text": text_}),
            event(
                "error",
                {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            ),
        ]
    )


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def http_error(status: int, message: str) -> Reply:
    return Reply.json(
        status,
        {
            "type": "error",
            "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message},
        },
    )


def context_overflow(window: int, requested: int) -> Reply:
    return http_error(400, f"prompt is too long: {requested} tokens > {window} maximum")


def malformed() -> Reply:
    return sse([message_start(), b"event: content_block_start\ndata: {not json\n\n"])


def request_body(recorded: Recorded) -> Any:
    assert recorded.path == "/v1/messages"
    # anthropic 2.x sends the key as a bearer token; older SDKs used x-api-key.
    auth = recorded.headers.get("x-api-key") or recorded.headers.get("authorization", "")
    assert auth in (secret, f"Bearer {secret}")
    assert recorded.headers["anthropic-version"]  # 2023-06-01 in the reference; newer SDKs differ
    return recorded.json


def env(server: FakeUpstream) -> dict[str, str]:
    """The SDK's own environment variables, pointing at the fake."""
    return {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": secret}
