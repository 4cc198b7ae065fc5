"""OpenAI Responses API streaming, as on the wire: ``event:``/``data:`` pairs, each event
carrying its ``sequence_number``, no ``[DONE]``; the stream ends with ``response.completed``
(or ``response.failed``, or an ``error`` event)."""

from __future__ import annotations

import json
from typing import Any

from agentstream.providers._retry import RetryPolicy
from agentstream.providers._timeouts import Timeouts
from agentstream.providers.openai_responses import OpenAIResponsesProvider

from . import FakeCall
from . import openai as chat
from .server import FakeUpstream, Recorded, Reply

name = "openai-responses"
secret = chat.secret
MODEL = "gpt-5-mini"
http_error = chat.http_error  # the same error bodies as Chat Completions
env = chat.env


def provider(
    server: FakeUpstream,
    *,
    retry: RetryPolicy | None = None,
    timeouts: Timeouts | None = None,
    model: str = MODEL,
) -> OpenAIResponsesProvider:
    return OpenAIResponsesProvider(
        model, api_key=secret, base_url=f"{server.url}/v1", retry=retry, timeouts=timeouts
    )


def _response(status: str, output: list[Any], usage: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1730000000,
        "status": status,
        "model": MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "usage": usage,
    }


def usage_body(
    input_: int = 50, output: int = 20, cached: int = 0, reasoning: int = 0
) -> dict[str, Any]:
    return {
        "input_tokens": input_,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_ + output,
    }


class Events:
    """Builds one stream, numbering events from 0 and keeping each output item's index."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.output: list[dict[str, Any]] = []
        self.emit("response.created", response=_response("in_progress", [], None))

    def emit(self, kind: str, **fields: Any) -> Events:
        payload = {"type": kind, "sequence_number": len(self.chunks), **fields}
        self.chunks.append(f"event: {kind}\ndata: {json.dumps(payload)}\n\n".encode())
        return self

    def message(self, *pieces: str) -> Events:
        index, item_id = len(self.output), f"msg_{len(self.output)}"
        whole = "".join(pieces)
        part = {"type": "output_text", "text": "", "annotations": []}
        item = {"type": "message", "id": item_id, "status": "in_progress", "role": "assistant"}
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        self.emit("response.output_item.added", output_index=index, item={**item, "content": []})
        self.emit("response.content_part.added", **where, part=part)
        for piece in pieces:
            self.emit("response.output_text.delta", **where, delta=piece, logprobs=[])
        self.emit("response.output_text.done", **where, text=whole, logprobs=[])
        done_part = {**part, "text": whole}
        self.emit("response.content_part.done", **where, part=done_part)
        done = {**item, "status": "completed", "content": [done_part]}
        self.emit("response.output_item.done", output_index=index, item=done)
        self.output.append(done)
        return self

    def reasoning(self, *parts: str, encrypted: str | None = "gAAAAB-encrypted-1") -> Events:
        index, item_id = len(self.output), f"rs_{len(self.output)}"
        item: dict[str, Any] = {"type": "reasoning", "id": item_id, "summary": []}
        self.emit("response.output_item.added", output_index=index, item=item)
        for n, text in enumerate(parts):
            where = {"item_id": item_id, "output_index": index, "summary_index": n}
            part = {"type": "summary_text", "text": ""}
            self.emit("response.reasoning_summary_part.added", **where, part=part)
            half = len(text) // 2
            for piece in (text[:half], text[half:]):
                self.emit("response.reasoning_summary_text.delta", **where, delta=piece)
            self.emit("response.reasoning_summary_text.done", **where, text=text)
            self.emit("response.reasoning_summary_part.done", **where, part={**part, "text": text})
        summary = [{"type": "summary_text", "text": t} for t in parts]
        done = {**item, "summary": summary, "encrypted_content": encrypted}
        self.emit("response.output_item.done", output_index=index, item=done)
        self.output.append(done)
        return self

    def call(self, call: FakeCall) -> Events:
        index, item_id = len(self.output), f"fc_{call.id}"
        item = {
            "type": "function_call", "id": item_id, "call_id": call.id, "name": call.name,
            "arguments": "", "status": "in_progress",
        }  # fmt: skip
        self.emit("response.output_item.added", output_index=index, item=item)
        for fragment in call.fragments:
            self.emit(
                "response.function_call_arguments.delta",
                item_id=item_id, output_index=index, delta=fragment,
            )  # fmt: skip
        self.emit(
            "response.function_call_arguments.done",
            item_id=item_id, output_index=index, name=call.name, arguments=call.arguments,
        )  # fmt: skip
        done = {**item, "arguments": call.arguments, "status": "completed"}
        self.emit("response.output_item.done", output_index=index, item=done)
        self.output.append(done)
        return self

    def completed(self, usage: dict[str, Any] | None = None) -> Reply:
        response = _response("completed", self.output, usage or usage_body())
        self.emit("response.completed", response=response)
        return Reply(chunks=self.chunks)

    def incomplete(self, reason: str) -> Reply:
        """The response stopped early (``max_output_tokens``, ``content_filter``)."""
        response = _response("incomplete", self.output, usage_body(10, 5))
        response["incomplete_details"] = {"reason": reason}
        self.emit("response.incomplete", response=response)
        return Reply(chunks=self.chunks)

    def failed(self, code: str, message: str) -> Reply:
        response = _response("failed", self.output, None)
        response["error"] = {"code": code, "message": message}
        self.emit("response.failed", response=response)
        return Reply(chunks=self.chunks)


def text(*pieces: str, hang: bool = False) -> Reply:
    events = Events().message(*pieces)
    if hang:
        return Reply(chunks=events.chunks, hang=True)
    return events.completed()


def truncated(*pieces: str) -> Reply:
    """A turn cut off at the output limit."""
    return Events().message(*pieces).incomplete("max_output_tokens")


def tool_calls(text_: str, *calls: FakeCall) -> Reply:
    events = Events()
    if text_:
        events.message(text_)
    for call in calls:
        events.call(call)
    return events.completed()


def reasoning(thought: str, text_: str) -> Reply:
    return Events().reasoning(thought).message(text_).completed()


def usage_turn() -> tuple[Reply, dict[str, int]]:
    reply = Events().message("ok").completed(usage_body(100, 30, cached=40, reasoning=7))
    expected = {
        "input_tokens": 100,
        "output_tokens": 30,
        "reasoning_tokens": 7,
        "cache_read_tokens": 40,
        "cache_write_tokens": 0,
    }
    return reply, expected


def error_after_text(text_: str) -> Reply:
    """The mid-stream failure: text went out, then ``response.failed``."""
    events = Events()
    where = {"item_id": "msg_0", "output_index": 0, "content_index": 0}
    item = {"type": "message", "id": "msg_0", "status": "in_progress", "role": "assistant"}
    events.emit("response.output_item.added", output_index=0, item={**item, "content": []})
    part = {"type": "output_text", "text": "", "annotations": []}
    events.emit("response.content_part.added", **where, part=part)
    events.emit("response.output_text.delta", **where, delta=text_, logprobs=[])
    return events.failed("server_error", "The server had an error while processing your request")


def error_event_after_text(text_: str) -> Reply:
    """The other way a stream fails: a bare ``error`` event."""
    reply = error_after_text(text_)
    events = Events()
    events.chunks = list(reply.chunks[:-1])
    events.emit("error", code="rate_limit_exceeded", message="Slow down", param=None)
    return Reply(chunks=events.chunks)


def context_overflow(window: int, requested: int) -> Reply:
    """The Responses API states neither size."""
    error = {
        "message": "Your input exceeds the context window of this model. Please adjust your "
        "input and try again.",
        "type": "invalid_request_error",
        "param": "input",
        "code": "context_length_exceeded",
    }
    return Reply.json(400, {"error": error})


def malformed() -> Reply:
    events = Events()
    events.chunks.append(b'event: response.output_text.delta\ndata: {"type": oops\n\n')
    return Reply(chunks=events.chunks)


def request_body(recorded: Recorded) -> Any:
    assert recorded.path == "/v1/responses"
    assert recorded.headers["authorization"] == f"Bearer {secret}"
    return recorded.json
