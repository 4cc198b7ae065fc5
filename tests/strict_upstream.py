"""An OpenAI-compatible upstream that refuses an invalid tool history, as the vendors do (and, given a window, a request that does
not fit).

Real uvicorn on a loopback port, spoken to by the official ``openai`` SDK through
:class:`~agentstream.providers.openai.OpenAIProvider`. Each request's history is checked the
way OpenAI and Anthropic check it: every ``tool`` message answers a tool call of the assistant
message before it, and every tool call is answered before the conversation goes on. A history
that breaks either rule gets the vendor's 400. Otherwise the reply depends only on the request
(no state): ``rounds`` tool rounds after the latest user message, then a text answer, so any
number of concurrent conversations can share one server.

Run standalone (``python -m tests.strict_upstream PORT``) it serves in the foreground: the
SIGKILL tests start it in a process of its own.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
from typing import Any

import uvicorn

from tests.providers.fakes.openai import context_overflow
from tests.providers.fakes.window import count

__all__ = ["StrictUpstream", "history_problem"]

ROUNDS = 2
"""Tool rounds per user message (each a call to ``lookup``), then the answer."""


def history_problem(messages: list[dict[str, Any]]) -> str | None:
    """Why a vendor would refuse ``messages``, or None."""
    open_calls: set[str] = set()
    for position, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_calls:
                return (
                    f"messages.[{position}]: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'."
                )
            open_calls.discard(call_id)
            continue
        if open_calls:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                f"responding to each 'tool_call_id'. Missing: {sorted(open_calls)}"
            )
        if role == "assistant":
            open_calls = {call["id"] for call in message.get("tool_calls") or ()}
    if open_calls:
        return f"tool calls without results: {sorted(open_calls)}"
    return None


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-strict",
        "object": "chat.completion.chunk",
        "created": 1727346182,
        "model": "strict",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


def _reply(messages: list[dict[str, Any]], pause: float) -> list[tuple[float, bytes]]:
    last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    turn = sum(1 for m in messages[last_user:] if m.get("role") == "assistant")
    question = str(messages[last_user].get("content"))
    frames: list[tuple[float, bytes]] = [(0.0, _chunk({"role": "assistant", "content": ""}))]
    if turn < ROUNDS:
        call = {
            "index": 0,
            "id": f"call_{sum(m.get('role') == 'user' for m in messages)}_{turn}",
            "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps({"round": turn + 1})},
        }
        frames += [
            (pause, _chunk({"content": f"Round {turn + 1}. "})),
            (pause, _chunk({"tool_calls": [call]})),
            (0.0, _chunk({}, "tool_calls")),
        ]
    else:
        frames += [
            (pause, _chunk({"content": f"Answer to {question}."})),
            (0.0, _chunk({}, "stop")),
        ]
    return [*frames, (0.0, b"data: [DONE]\n\n")]


class StrictUpstream:
    """The server in a background thread (``start``/``stop``), or a process (``__main__``).
    ``pause`` seconds pass before each content frame; ``requests`` counts the POSTs and
    ``refused`` lists the problems of the histories it refused."""

    def __init__(self, pause: float = 0.0, port: int = 0, window: int | None = None) -> None:
        self.pause = pause
        self.window = window
        """With a window, a request that does not fit (by the count of
        :mod:`tests.providers.fakes.window`, its ``max_tokens`` included) gets OpenAI's
        context-length error; ``too_long`` counts them."""
        self.too_long = 0
        self.last: dict[str, Any] = {}
        """The latest request's body."""
        self.requests = 0
        self.refused: list[str] = []
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port))
        self.port: int = self._sock.getsockname()[1]
        config = uvicorn.Config(self._app, interface="asgi3", lifespan="off", log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> StrictUpstream:
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )
        self._thread.start()
        while not self._server.started:
            threading.Event().wait(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._sock.close()

    def serve_forever(self) -> None:
        self._server.run(sockets=[self._sock])

    async def _app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.requests += 1
        request = json.loads(body or b"{}")
        self.last = request
        problem = history_problem(request.get("messages", []))
        if problem is not None:
            self.refused.append(problem)
            error = {"message": problem, "type": "invalid_request_error", "param": "messages"}
            await _send(
                send, 400, "application/json", [(0.0, json.dumps({"error": error}).encode())]
            )
            return
        if self.window is not None:
            size = count(body) + int(request.get("max_tokens") or 0)
            if size > self.window:
                self.too_long += 1
                refusal = context_overflow(self.window, size)
                await _send(send, 400, "application/json", [(0.0, bytes(refusal.chunks[0]))])
                return
        await _send(send, 200, "text/event-stream", _reply(request["messages"], self.pause))


async def _send(
    send: Any, status: int, content_type: str, frames: list[tuple[float, bytes]]
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type.encode())],
        }
    )
    for pause, frame in frames:
        if pause:
            await asyncio.sleep(pause)
        await send({"type": "http.response.body", "body": frame, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


if __name__ == "__main__":
    StrictUpstream(
        pause=float(sys.argv[2]) if len(sys.argv) > 2 else 0.0, port=int(sys.argv[1])
    ).serve_forever()
