"""Ollama ``/api/chat`` streaming, as on the wire: NDJSON, one object per line, no blank lines;
calls arrive whole with ``arguments`` as an object."""

from __future__ import annotations

import json
from typing import Any

from agentstream.providers._retry import RetryPolicy
from agentstream.providers._timeouts import Timeouts
from agentstream.providers.ollama import OllamaProvider

from . import FakeCall
from .server import FakeUpstream, Recorded, Reply

name = "ollama"
secret = "ollama-FAKESECRETKEY1234567890"
MODEL = "qwen3:14b"
NDJSON = "application/x-ndjson"


def provider(
    server: FakeUpstream,
    *,
    retry: RetryPolicy | None = None,
    timeouts: Timeouts | None = None,
    model: str = MODEL,
) -> OllamaProvider:
    return OllamaProvider(model, host=server.url, retry=retry, timeouts=timeouts)


def line(payload: Any) -> bytes:
    return (json.dumps(payload) + "\n").encode()


def message(**fields: Any) -> bytes:
    return line(
        {
            "model": MODEL,
            "created_at": "2025-07-07T20:22:19.10Z",
            "message": {"role": "assistant", "content": "", **fields},
            "done": False,
        }
    )


def done(reason: str = "stop", prompt: int = 169, output: int = 15) -> bytes:
    return line(
        {
            "model": MODEL,
            "created_at": "2025-07-07T20:22:19.19Z",
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": reason,
            "total_duration": 182242375,
            "load_duration": 41295167,
            "prompt_eval_count": prompt,
            "prompt_eval_duration": 24573166,
            "eval_count": output,
            "eval_duration": 115959084,
        }
    )


def ndjson(chunks: list[bytes], *, hang: bool = False) -> Reply:
    return Reply(chunks=chunks, content_type=NDJSON, hang=hang)


def call_entry(index: int, call: FakeCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "function": {"index": index, "name": call.name, "arguments": json.loads(call.arguments)},
    }


def text(*pieces: str, hang: bool = False) -> Reply:
    body = [message(content=p) for p in pieces]
    return ndjson(body, hang=True) if hang else ndjson([*body, done()])


def truncated(*pieces: str) -> Reply:
    """A turn cut off at the output limit."""
    return ndjson([*(message(content=p) for p in pieces), done("length")])


def tool_calls(text_: str, *calls: FakeCall) -> Reply:
    body = [message(content=text_)] if text_ else []
    body += [message(tool_calls=[call_entry(i, c)]) for i, c in enumerate(calls)]
    return ndjson([*body, done()])


def reasoning(thought: str, text_: str) -> Reply:
    return ndjson([message(thinking=thought), message(content=text_), done()])


def usage_turn() -> tuple[Reply, dict[str, int]]:
    expected = {
        "input_tokens": 100,
        "output_tokens": 30,
        "reasoning_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
    }
    return ndjson([message(content="ok"), done(prompt=100, output=30)]), expected


def error_after_text(text_: str) -> Reply:
    return ndjson(
        [message(content=text_), line({"error": "model runner has unexpectedly stopped"})]
    )


def http_error(status: int, message_: str) -> Reply:
    return Reply.json(status, {"error": message_})


def context_overflow(window: int, requested: int) -> Reply:
    """Ollama (with ``truncate: false``) passes on its runner's llama.cpp error as a string."""
    inner = {
        "error": {
            "code": 400,
            "message": f"request ({requested} tokens) exceeds the available context size "
            f"({window} tokens), try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": requested,
            "n_ctx": window,
        }
    }
    return http_error(400, json.dumps(inner))


def malformed() -> Reply:
    return ndjson([message(content="a"), b'{"model": oops\n'])


def request_body(recorded: Recorded) -> Any:
    assert recorded.path == "/api/chat"
    return recorded.json


def env(server: FakeUpstream) -> dict[str, str]:
    """The SDK's own environment variable, pointing at the fake."""
    return {"OLLAMA_HOST": server.url}
