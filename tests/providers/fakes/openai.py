"""OpenAI Chat Completions streaming, as on the wire: ``data:`` chunks ending in ``[DONE]``."""

from __future__ import annotations

import json
from typing import Any

from agentstream.providers._retry import RetryPolicy
from agentstream.providers._timeouts import Timeouts
from agentstream.providers.openai import OpenAIProvider

from . import FakeCall
from .server import FakeUpstream, Recorded, Reply

name = "openai"
secret = "sk-proj-FAKESECRETKEY1234567890abcdef"
MODEL = "gpt-4.1-mini"


def provider(
    server: FakeUpstream,
    *,
    retry: RetryPolicy | None = None,
    timeouts: Timeouts | None = None,
    model: str = MODEL,
) -> OpenAIProvider:
    return OpenAIProvider(
        model, api_key=secret, base_url=f"{server.url}/v1", retry=retry, timeouts=timeouts
    )


def data(payload: Any) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()


DONE = b"data: [DONE]\n\n"


def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
    return data(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1727346182,
            "model": MODEL,
            "system_fingerprint": "fp_1",
            "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            ],
        }
    )


def usage_chunk(
    prompt: int = 44, completion: int = 16, cached: int = 0, reasoning: int = 0
) -> bytes:
    return data(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1727346182,
            "model": MODEL,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached},
                "completion_tokens_details": {"reasoning_tokens": reasoning},
            },
        }
    )


def first() -> bytes:
    return chunk({"role": "assistant", "content": "", "refusal": None})


def call_chunks(index: int, call: FakeCall) -> list[bytes]:
    head = {
        "index": index,
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": ""},
    }
    return [
        chunk({"tool_calls": [head]}),
        *(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": f}}]})
            for f in call.fragments
        ),
    ]


def text(*pieces: str, hang: bool = False) -> Reply:
    body = [first(), *(chunk({"content": p}) for p in pieces)]
    if hang:
        return Reply(chunks=body, hang=True)
    return Reply(chunks=[*body, chunk({}, "stop"), usage_chunk(), DONE])


def truncated(*pieces: str) -> Reply:
    """A turn cut off at the output limit."""
    body = [first(), *(chunk({"content": p}) for p in pieces)]
    return Reply(chunks=[*body, chunk({}, "length"), usage_chunk(), DONE])


def tool_calls(text_: str, *calls: FakeCall) -> Reply:
    body = [first()]
    if text_:
        body.append(chunk({"content": text_}))
    for index, call in enumerate(calls):
        body += call_chunks(index, call)
    return Reply(chunks=[*body, chunk({}, "tool_calls"), usage_chunk(), DONE])


def reasoning(thought: str, text_: str) -> Reply:
    # Compatible servers: Ollama/OpenRouter say "reasoning", DeepSeek/vLLM "reasoning_content".
    half = len(thought) // 2
    return Reply(
        chunks=[
            first(),
            chunk({"reasoning": thought[:half]}),
            chunk({"reasoning_content": thought[half:]}),
            chunk({"content": text_}),
            chunk({}, "stop"),
            usage_chunk(),
            DONE,
        ]
    )


def usage_turn() -> tuple[Reply, dict[str, int]]:
    reply = Reply(
        chunks=[
            first(),
            chunk({"content": "ok"}),
            chunk({}, "stop"),
            usage_chunk(prompt=100, completion=30, cached=40, reasoning=7),
            DONE,
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
            first(),
            chunk({"content": text_}),
            data(
                {
                    "error": {
                        "message": "The server had an error",
                        "type": "server_error",
                        "code": None,
                    }
                }
            ),
        ]
    )


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
}


def http_error(status: int, message: str) -> Reply:
    code = "invalid_api_key" if status == 401 else None
    return Reply.json(
        status,
        {
            "error": {
                "message": message,
                "type": _ERROR_TYPES.get(status),
                "param": None,
                "code": code,
            }
        },
    )


def context_overflow(window: int, requested: int) -> Reply:
    message = (
        f"This model's maximum context length is {window} tokens. However, your messages "
        f"resulted in {requested} tokens. Please reduce the length of the messages."
    )
    error = {
        "message": message,
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
    return Reply.json(400, {"error": error})


def compatible_overflow(window: int, requested: int) -> Reply:
    """vLLM's words (OpenAI's older ones), in its flat error body."""
    message = (
        f"This model's maximum context length is {window} tokens. However, you requested "
        f"{requested} tokens ({requested - 100} in the messages, 100 in the completion). "
        "Please reduce the length of the messages or completion."
    )
    body = {"object": "error", "message": message, "type": "BadRequestError", "param": None}
    return Reply.json(400, {**body, "code": 400})


def llama_cpp_overflow(window: int, requested: int) -> Reply:
    """llama.cpp's server, OpenAI-compatible."""
    error = {
        "code": 400,
        "message": f"request ({requested} tokens) exceeds the available context size "
        f"({window} tokens), try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": requested,
        "n_ctx": window,
    }
    return Reply.json(400, {"error": error})


def malformed() -> Reply:
    return Reply(chunks=[first(), b'data: {"id": "chatcmpl-1", oops\n\n'])


def request_body(recorded: Recorded) -> Any:
    assert recorded.path == "/v1/chat/completions"
    assert recorded.headers["authorization"] == f"Bearer {secret}"
    return recorded.json


def env(server: FakeUpstream) -> dict[str, str]:
    """The SDK's own environment variables, pointing at the fake."""
    return {"OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": secret}
