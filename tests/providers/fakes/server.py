"""A real HTTP server on a loopback port that plays back scripted vendor responses.

One raw ASGI app under uvicorn, in a background thread with its own event loop, so the
official SDKs talk to it over real TCP exactly as they would to the vendor. Each POST takes
the next queued :class:`Reply` (vendor fakes build them in their real framing); GETs are
answered from ``routes`` (model lists). Every request is recorded for assertions, and a reply
can hold its connection open so tests can see the client close it.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import uvicorn

__all__ = ["FakeUpstream", "Recorded", "Reply"]


@dataclass
class Reply:
    """One HTTP response. ``chunks`` are written in order (each flushed on its own);
    ``pauses`` maps a chunk index to seconds to wait before writing it; with ``hang`` the
    response stays open after the last chunk until the client disconnects."""

    status: int = 200
    chunks: Sequence[bytes] = ()
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    pauses: dict[int, float] = field(default_factory=dict)
    hang: bool = False

    @classmethod
    def json(cls, status: int, body: Any) -> Reply:
        return cls(
            status=status, chunks=[json.dumps(body).encode()], content_type="application/json"
        )


@dataclass
class Recorded:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class FakeUpstream:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.respond: Callable[[Recorded], Reply] | None = None
        """Answers each POST from its request when nothing is queued (an upstream that
        enforces a context window)."""
        self.routes: dict[str, Reply] = {}
        self.requests: list[Recorded] = []
        self.disconnects = 0
        self.open = 0
        """Responses in progress: a client that let go of every stream leaves none."""
        self._disconnected = threading.Event()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        config = uvicorn.Config(
            self._app,
            interface="asgi3",
            lifespan="off",
            log_level="warning",
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeUpstream:
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("fake upstream failed to start")
            threading.Event().wait(0.01)
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.should_exit = True
            self._thread.join(timeout=10)
        self._sock.close()

    def reset(self) -> None:
        self.replies.clear()
        self.respond = None
        self.routes.clear()
        self.requests.clear()
        self.disconnects = 0
        self.open = 0
        self._disconnected.clear()

    def queue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    @property
    def posts(self) -> list[Recorded]:
        return [r for r in self.requests if r.method == "POST"]

    def wait_for_disconnect(self, timeout: float = 30.0) -> bool:
        """True once a held-open response saw its client go away."""
        return self._disconnected.wait(timeout)

    # --- the ASGI app ---------------------------------------------------------------------

    async def _app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        path, query = scope["path"], scope["query_string"].decode()
        self.requests.append(Recorded(scope["method"], path, query, headers, body))
        reply = self._reply_for(scope["method"], path, self.requests[-1])
        self.open += 1
        try:
            await self._respond(reply, receive, send)
        finally:
            self.open -= 1

    async def _respond(self, reply: Reply, receive: Any, send: Any) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": reply.status,
                "headers": [
                    (b"content-type", reply.content_type.encode()),
                    *((k.encode(), v.encode()) for k, v in reply.headers.items()),
                ],
            }
        )
        for index, chunk in enumerate(reply.chunks):
            if index in reply.pauses:
                await asyncio.sleep(reply.pauses[index])
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if reply.hang:
            while (await receive())["type"] != "http.disconnect":
                pass
            self.disconnects += 1
            self._disconnected.set()
            return
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _reply_for(self, method: str, path: str, recorded: Recorded) -> Reply:
        if method == "GET" and path in self.routes:
            return self.routes[path]
        if method == "POST" and self.replies:
            return self.replies.popleft()
        if method == "POST" and self.respond is not None:
            return self.respond(recorded)
        return Reply.json(404, {"error": {"message": f"fake upstream: nothing queued for {path}"}})
