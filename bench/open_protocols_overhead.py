"""Server CPU per streamed delta of the open protocols, agentstream against pydantic-ai: the
AI SDK's UI message stream (``--protocol ai-sdk``: the ``ai-sdk`` dialect against
``VercelAIAdapter``, answering what ``DefaultChatTransport`` posts) and AG-UI (``--protocol
ag-ui``: the ``agui`` dialect against ``AGUIAdapter``, answering a ``RunAgentInput``), both from
a model that streams N text deltas.

Servers, each in its own process under uvicorn (uvloop + httptools) on loopback:

* ``agentstream``: ``POST /ai-sdk/chat`` or ``POST /ag-ui`` (scripted model -> loop ->
  canonical events -> run pipeline -> the dialect's encoder -> SSE), without a store;
* ``pydantic-ai``: a Starlette route calling ``VercelAIAdapter.dispatch_request`` or
  ``AGUIAdapter.dispatch_request`` for an ``Agent`` on a ``FunctionModel`` that streams the
  same deltas.

pydantic-ai is not a dependency of agentstream: give the Python of an environment that has
``pydantic-ai-slim[ag-ui]``, ``starlette``, ``uvicorn``, ``uvloop`` and ``httptools`` (not
agentstream)::

    uv venv /tmp/pai && uv pip install --python /tmp/pai/bin/python \\
        "pydantic-ai-slim[ag-ui]" starlette uvicorn uvloop httptools
    .venv/bin/python bench/open_protocols_overhead.py --pydantic-python /tmp/pai/bin/python \\
        --protocol ag-ui

For each server: a warm-up answer, then ``--streams`` answers of ``--count`` deltas at once
(``--pace`` seconds between deltas, 0: as fast as possible), read to their end by this
process; the figure is the server process's CPU time (all threads, ``/proc/<pid>/schedstat``)
over the deltas delivered, in microseconds. Compare within one run: other work on the machine
shows in both. Both figures are the whole server (model, agent loop, encoder, HTTP), not the
encoders alone.

On the 2-core development machine (pydantic-ai 2.68), whole server per delta: 20 unpaced
streams of 500 deltas, AI SDK 11 µs against pydantic-ai's 119 µs, AG-UI 10 µs against 163 µs;
200 streams of 60 deltas at 20 deltas/s (``--streams 200 --count 60 --pace 0.05``), 72 µs
against 374 µs and 72 µs against 370 µs.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import socket
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stream_overhead import cpu_ns, spawn

if TYPE_CHECKING:
    import httpx  # the measuring side only: the pydantic-ai environment need not have it

DELTA = "tick "
PATHS = {
    "ai-sdk": {"agentstream": "/ai-sdk/chat", "pydantic-ai": "/chat"},
    "ag-ui": {"agentstream": "/ag-ui", "pydantic-ai": "/chat"},
}
DELTA_MARK = {"ai-sdk": '"text-delta"', "ag-ui": '"TEXT_MESSAGE_CONTENT"'}
SERVERS = ("agentstream", "pydantic-ai")


def _parameters(message: str) -> tuple[float, int]:
    found = dict(re.findall(r"(\w+)=([\d.]+)", message))
    return float(found.get("pace", 0)), int(found.get("n", 10))


# --- the servers (run in a subprocess: ``--serve KIND``) ----------------------------------


def agentstream_app() -> Any:
    from agentstream import Agent
    from agentstream.providers.base import ChatRequest
    from agentstream.providers.scripted import ScriptedProvider, ScriptedTurn, position
    from agentstream.server.app import create_app
    from agentstream.server.settings import Settings

    def turn(request: ChatRequest) -> ScriptedTurn:
        message, _ = position(request)
        pace, count = _parameters(message)
        return ScriptedTurn(text=[DELTA] * count, delay=pace)

    agent = Agent(model=ScriptedProvider(turn, model="bench"))
    return create_app(agent, settings=Settings(host="127.0.0.1"))


def pydantic_ai_app(protocol: str) -> Any:
    from collections.abc import AsyncIterator

    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        prompt = next(
            part.content
            for message in reversed(messages)
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, UserPromptPart)
        )
        pace, count = _parameters(str(prompt))
        for _ in range(count):
            if pace:
                await asyncio.sleep(pace)
            yield DELTA

    agent = Agent(FunctionModel(stream_function=stream))

    if protocol == "ag-ui":
        from pydantic_ai.ui.ag_ui import AGUIAdapter as Adapter
    else:
        from pydantic_ai.ui.vercel_ai import VercelAIAdapter as Adapter

    async def chat(request: Request) -> Response:
        return await Adapter.dispatch_request(request, agent=agent)

    return Starlette(routes=[Route("/chat", chat, methods=["POST"])])


def serve(kind: str, protocol: str) -> None:
    import uvicorn

    app = agentstream_app() if kind == "agentstream" else pydantic_ai_app(protocol)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", loop="uvloop", http="httptools"
    )
    uvicorn.Server(config).run(sockets=[sock])


# --- the measurement ---------------------------------------------------------------------


def body(protocol: str, chat_id: str, pace: float, count: int) -> dict[str, Any]:
    """What ``DefaultChatTransport`` posts for a new message, or AG-UI's ``RunAgentInput``."""
    text = f"pace={pace} n={count}"
    if protocol == "ag-ui":
        return {
            "threadId": chat_id,
            "runId": f"run-{chat_id}",
            "messages": [{"id": "m1", "role": "user", "content": text}],
            "tools": [],
            "context": [],
            "state": {},
            "forwardedProps": {},
        }
    return {
        "id": chat_id,
        "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": text}]}],
        "trigger": "submit-message",
    }


async def one(
    client: httpx.AsyncClient, protocol: str, path: str, chat_id: str, pace: float, n: int
) -> int:
    """Read one answer to its end; the number of text deltas it carried."""
    deltas, mark = 0, DELTA_MARK[protocol]
    async with client.stream("POST", path, json=body(protocol, chat_id, pace, n)) as response:
        assert response.status_code == 200, await response.aread()
        async for line in response.aiter_lines():
            if line.startswith("data: ") and mark in line:
                deltas += 1
    return deltas


async def measure(
    protocol: str, kind: str, python: str, streams: int, count: int, pace: float
) -> float:
    import httpx

    command = [python, str(Path(__file__)), "--serve", kind, "--protocol", protocol]
    process = spawn(command)
    try:
        assert process.stdout is not None
        port = int(await asyncio.to_thread(process.stdout.readline))
        path = PATHS[protocol][kind]
        limits = httpx.Limits(max_connections=streams + 1)
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:
            for attempt in range(50):  # the server is listening once the port is printed
                try:
                    await one(client, protocol, path, "warm-up", 0, 50)
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.1 * (attempt + 1))
            before = cpu_ns(process.pid)
            delivered = await asyncio.gather(
                *(one(client, protocol, path, f"chat-{i}", pace, count) for i in range(streams))
            )
            spent = cpu_ns(process.pid) - before
        assert all(d == count for d in delivered), f"{kind}: {delivered[:5]}... of {count}"
        return spent / sum(delivered) / 1e3
    finally:
        process.terminate()
        await asyncio.to_thread(process.wait, 10)


async def main_async(args: argparse.Namespace) -> None:
    name = {"ai-sdk": "AI SDK UI message stream", "ag-ui": "AG-UI"}[args.protocol]
    print(
        f"{name}, {args.streams} streams x {args.count} deltas, "
        f"pace {args.pace}s: server CPU per delta"
    )
    results: dict[str, list[float]] = {"agentstream": [], "pydantic-ai": []}
    for _ in range(args.repeat):  # the servers take turns, so drift hits both
        for kind, python in (
            ("agentstream", sys.executable),
            ("pydantic-ai", args.pydantic_python),
        ):
            results[kind].append(
                await measure(args.protocol, kind, python, args.streams, args.count, args.pace)
            )
    for kind, values in results.items():
        shown = ", ".join(f"{v:.1f}" for v in values)
        print(f"  {kind:<12} {min(values):7.1f} us/delta (best of: {shown})")
    ratio = min(results["pydantic-ai"]) / min(results["agentstream"])
    print(f"  pydantic-ai / agentstream: {ratio:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", choices=SERVERS, help=argparse.SUPPRESS)
    parser.add_argument("--protocol", choices=sorted(PATHS), default="ai-sdk")
    parser.add_argument("--pydantic-python", default="", help="a Python with pydantic-ai-slim")
    parser.add_argument("--streams", type=int, default=20)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--pace", type=float, default=0.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.protocol)
        return
    if not args.pydantic_python:
        parser.error("--pydantic-python: the Python of an environment with pydantic-ai-slim")
    started = time.perf_counter()
    asyncio.run(main_async(args))
    print(f"  ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
