"""Gemini ``streamGenerateContent?alt=sse``, as on the wire: ``data:`` lines only, no ``event:``
lines and no ``[DONE]``; calls arrive whole with ``args`` as an object."""

from __future__ import annotations

import json
from typing import Any

from agentstream.providers._retry import RetryPolicy
from agentstream.providers._timeouts import Timeouts
from agentstream.providers.google import GoogleProvider

from . import FakeCall
from .server import FakeUpstream, Recorded, Reply

name = "google"
secret = "AIzaSyFAKESECRETKEY1234567890abcdefghi"
MODEL = "gemini-2.5-flash"
SIGNATURE = "Q2lRQmZpeHR1cmU="


def provider(
    server: FakeUpstream,
    *,
    retry: RetryPolicy | None = None,
    timeouts: Timeouts | None = None,
    model: str = MODEL,
) -> GoogleProvider:
    return GoogleProvider(
        model, api_key=secret, base_url=server.url, retry=retry, timeouts=timeouts
    )


def data(payload: Any) -> bytes:
    return f"data: {json.dumps(payload)}\r\n\r\n".encode()


def chunk(
    parts: list[dict[str, Any]],
    *,
    finish: str | None = None,
    usage: dict[str, int] | None = None,
) -> bytes:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return data(
        {
            "candidates": [candidate],
            "usageMetadata": usage or {"promptTokenCount": 40, "totalTokenCount": 40},
            "modelVersion": MODEL,
            "responseId": "r1",
        }
    )


FINAL_USAGE = {"promptTokenCount": 40, "candidatesTokenCount": 22, "totalTokenCount": 62}


def call_part(call: FakeCall, *, signature: str | None = SIGNATURE) -> dict[str, Any]:
    part: dict[str, Any] = {
        "functionCall": {"name": call.name, "args": json.loads(call.arguments), "id": call.id}
    }
    if signature:
        part["thoughtSignature"] = signature
    return part


def text(*pieces: str, hang: bool = False) -> Reply:
    body = [chunk([{"text": p}]) for p in pieces]
    if hang:
        return Reply(chunks=body, hang=True)
    return Reply(chunks=[*body, chunk([], finish="STOP", usage=FINAL_USAGE)])


def truncated(*pieces: str) -> Reply:
    """A turn cut off at the output limit."""
    body = [chunk([{"text": p}]) for p in pieces]
    return Reply(chunks=[*body, chunk([], finish="MAX_TOKENS", usage=FINAL_USAGE)])


def tool_calls(text_: str, *calls: FakeCall) -> Reply:
    body = [chunk([{"text": text_}])] if text_ else []
    # Parallel calls come in one chunk; only the first carries the thought signature.
    parts = [call_part(c, signature=SIGNATURE if i == 0 else None) for i, c in enumerate(calls)]
    body.append(chunk(parts, finish="STOP", usage=FINAL_USAGE))
    return Reply(chunks=body)


def reasoning(thought: str, text_: str) -> Reply:
    return Reply(
        chunks=[
            chunk([{"text": thought, "thought": True}]),
            chunk([{"text": text_}], finish="STOP", usage=FINAL_USAGE),
        ]
    )


def usage_turn() -> tuple[Reply, dict[str, int]]:
    usage = {
        "promptTokenCount": 100,
        "candidatesTokenCount": 23,
        "thoughtsTokenCount": 7,
        "cachedContentTokenCount": 40,
        "totalTokenCount": 130,
    }
    reply = Reply(
        chunks=[
            chunk([{"text": "o"}], usage={"promptTokenCount": 100, "totalTokenCount": 100}),
            chunk([{"text": "k"}], finish="STOP", usage=usage),
        ]
    )
    expected = {
        "input_tokens": 100,
        "output_tokens": 30,
        "reasoning_tokens": 7,
        "cache_read_tokens": 40,
        "cache_write_tokens": 0,
    }
    return reply, expected


def error_after_text(text_: str) -> Reply:
    return Reply(
        chunks=[
            chunk([{"text": text_}]),
            data(
                {
                    "error": {
                        "code": 503,
                        "message": "The model is overloaded.",
                        "status": "UNAVAILABLE",
                    }
                }
            ),
        ]
    )


_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def http_error(status: int, message: str) -> Reply:
    return Reply.json(
        status,
        {"error": {"code": status, "message": message, "status": _STATUSES.get(status, "UNKNOWN")}},
    )


def context_overflow(window: int, requested: int) -> Reply:
    return http_error(
        400,
        f"The input token count ({requested}) exceeds the maximum number of tokens allowed "
        f"({window}).",
    )


def malformed() -> Reply:
    return Reply(chunks=[chunk([{"text": "a"}]), b'data: {"candidates": [oops\r\n\r\n'])


def request_body(recorded: Recorded) -> Any:
    # The reference shows v1beta; google-genai 3.x defaults to v1. Either is the real API.
    assert recorded.path in (
        f"/v1beta/models/{MODEL}:streamGenerateContent",
        f"/v1/models/{MODEL}:streamGenerateContent",
    )
    assert recorded.query == "alt=sse"
    assert recorded.headers["x-goog-api-key"] == secret
    return recorded.json


def env(server: FakeUpstream) -> dict[str, str]:
    """The SDK's own environment variables, pointing at the fake."""
    return {"GOOGLE_GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": secret}
