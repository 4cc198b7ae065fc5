"""Helpers for the server tests: a real uvicorn on a loopback port, frame parsers, patterns."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import jwt
import uvicorn
from fastapi import FastAPI

from agentstream.server.attachments import SWEEP_TASK

T = TypeVar("T")

SECRET = "test-secret-that-is-long-enough-for-hs256"

WAIT = 30.0
"""How long a test waits for something that should happen at once (a server started, a run
cancelled, an event set): a guard against hanging, not a measure. Waits return as soon as the
thing happens, so a generous limit costs nothing when all is well and holds on a loaded
machine (two CPU hogs beside four test workers) where a few seconds did not."""

PROCESS_START = 180.0
"""How long a process of ours may take to start, or to run a one-shot command: it imports
everything, which on a loaded 2-core machine has taken over a minute. A hang guard too."""


class LiveServer:
    """``app`` served by uvicorn in a thread with its own event loop, on a free loopback port."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, log_level="warning", lifespan="on", loop="asyncio")
        self._server = uvicorn.Server(config)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        # asyncio.Runner cancels the tasks still pending when the server returns before it
        # closes the loop, as asyncio.run does: a task an app leaves behind for the loop's
        # lifetime (sse_starlette's shutdown watcher, which the MCP SDK's streamable HTTP
        # server starts, polls for a signal a server in a thread never gets) is cancelled
        # rather than destroyed pending when the loop is collected.
        with asyncio.Runner() as runner:
            self.loop = runner.get_loop()
            runner.run(self._server.serve(sockets=[self._sock]))

    def start(self) -> LiveServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = WAIT) -> T:
        """Run ``coro`` on the server's event loop (to inspect its tasks)."""
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, **{"timeout": WAIT, **kwargs})


APP_LIFETIME_TASKS = frozenset({SWEEP_TASK})
"""Tasks an app keeps from its start to its end (not a leak)."""


async def other_tasks() -> list[str]:
    """The server loop's tasks, except the ones uvicorn itself runs, the app's own that live
    as long as it does, and this one."""
    current = asyncio.current_task()
    names = []
    for task in asyncio.all_tasks():
        if task is current or task.done() or task.get_name() in APP_LIFETIME_TASKS:
            continue
        coro = task.get_coro()
        name = getattr(coro, "__qualname__", repr(coro))
        if name.startswith(("Server.", "LifespanOn.")):
            continue
        names.append(name)
    return names


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


# --- frames ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sse:
    event: str | None
    data: Any


def parse_sse(text: str) -> list[Sse]:
    """SSE messages (comments skipped), ``data`` parsed as JSON."""
    messages = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        event, data = None, []
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        if data:
            messages.append(Sse(event, json.loads("\n".join(data))))
    return messages


def parse_ndjson(text: str) -> list[Sse]:
    out = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        brace = line.index("{")
        out.append(Sse(line[:brace], json.loads(line[brace:])))
    return out


def named(messages: list[Sse]) -> list[tuple[str | None, Any]]:
    return [(m.event, m.data) for m in messages]


def datas(messages: list[Sse]) -> list[Any]:
    return [m.data for m in messages]


class AnyInt:
    """Equal to any integer (a duration in a golden frame)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, int) and not isinstance(other, bool)

    def __repr__(self) -> str:
        return "AnyInt()"


ANY_INT = AnyInt()


class Like:
    """Equal to any string that fully matches ``pattern`` (ids, timestamps in golden tests)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = re.compile(pattern)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and self.pattern.fullmatch(other) is not None

    def __repr__(self) -> str:
        return f"Like({self.pattern.pattern!r})"


RUN_ID = Like(r"[0-9a-f]{32}")
ISO_MS = Like(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
UUID = Like(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def token(sub: str = "alice", *, secret: str = SECRET, **claims: Any) -> str:
    payload = {"sub": sub, "exp": int(time.time()) + 3600, **claims}
    return jwt.encode(payload, secret, algorithm="HS256")


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


def stream_text(client: httpx.Client, path: str, **kwargs: Any) -> tuple[httpx.Response, str]:
    with client.stream("POST", path, **kwargs) as response:
        body = response.read().decode()
    return response, body


def lines(body: str) -> Iterator[str]:
    return iter(body.split("\n"))


@contextmanager
def serve_process(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Iterator[str]:
    """``agentstream serve ARGS`` as a real process on a free port; yields its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "agentstream.cli", "serve", *args, "--port", "0"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    with serving(process) as url:
        yield url


@contextmanager
def serving(process: subprocess.Popen[bytes]) -> Iterator[str]:
    """The base URL of ``agentstream serve --port 0`` started as ``process``, once it answers;
    the process is stopped when the block ends."""
    try:
        url = served_url(process)
        wait_until_serving(url, process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


SERVED = re.compile(rb"open (http://[\w.:\[\]-]+) in a browser")


def served_url(process: subprocess.Popen[bytes]) -> str:
    """Where ``agentstream serve --port 0`` listens, as it says in its output (a port probed
    free beforehand could be taken by a server of a test running beside this one before this
    one binds it). The rest of its output is then read in a thread, so a chatty server never
    blocks on a full pipe."""
    assert process.stdout is not None
    seen = b""
    for line in iter(process.stdout.readline, b""):
        seen += line
        found = SERVED.search(line)
        if found:
            threading.Thread(target=process.stdout.read, daemon=True).start()
            return found.group(1).decode()
    raise RuntimeError(f"the server exited:\n{seen.decode()}")


def wait_until_serving(url: str, process: subprocess.Popen[bytes]) -> None:
    """Until the server ``process`` started answers at ``url`` (a generous minute and a half,
    for a loaded machine); its output is the error if it exits first."""
    deadline = time.monotonic() + 90
    while True:
        try:
            httpx.get(f"{url}/api/chat/models", timeout=1)
            return
        except httpx.TransportError:
            if process.poll() is not None:
                output = process.stdout.read().decode() if process.stdout else ""
                raise RuntimeError(f"the server exited:\n{output}") from None
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
