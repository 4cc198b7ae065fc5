"""Server CPU per streamed delta of the AI SDK's UI message stream: agentstream's ``ai-sdk``
dialect against pydantic-ai's ``VercelAIAdapter``, both answering the same
``DefaultChatTransport`` request from a model that streams N text deltas.

Servers, each in its own process under uvicorn (uvloop + httptools) on loopback:

* ``agentstream``: ``POST /ai-sdk/chat`` (scripted model -> loop -> canonical events -> run
  pipeline -> ``AiSdkEncoder`` -> SSE), without a store;
* ``pydantic-ai``: a Starlette route calling ``VercelAIAdapter.dispatch_request`` for an
  ``Agent`` on a ``FunctionModel`` that streams the same deltas.

pydantic-ai is not a dependency of agentstream: give the Python of an environment that has
``pydantic-ai-slim``, ``starlette``, ``uvicorn``, ``uvloop`` and ``httptools`` (not agentstream)::

    uv venv /tmp/pai && uv pip install --python /tmp/pai/bin/python \\
        pydantic-ai-slim starlette uvicorn uvloop httptools
    .venv/bin/python bench/aisdk_overhead.py --pydantic-python /tmp/pai/bin/python

For each server: a warm-up answer, then ``--streams`` answers of ``--count`` deltas at once
(``--pace`` seconds between deltas, 0: as fast as possible), read to their end by this
process; the figure is the server process's CPU time (all threads, ``/proc/<pid>/schedstat``)
over the deltas delivered, in microseconds. Compare within one run: other work on the machine
shows in both. Both figures are the whole server (model, agent loop, encoder, HTTP), not the
encoders alone.

On the 2-core development machine (pydantic-ai 2.68): 20 unpaced streams of 500 deltas,
agentstream 5.3 µs per delta, pydantic-ai 127 µs; 20 of 100, 13 µs and 153 µs; 50 streams of
100 deltas paced at 10 ms, 53 µs and 227 µs.
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
PATHS = {"agentstream": "/ai-sdk/chat", "pydantic-ai": "/chat"}


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


def pydantic_ai_app() -> Any:
    from collections.abc import AsyncIterator

    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.ui.vercel_ai import VercelAIAdapter
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

    async def chat(request: Request) -> Response:
        return await VercelAIAdapter.dispatch_request(request, agent=agent)

    return Starlette(routes=[Route("/chat", chat, methods=["POST"])])


def serve(kind: str) -> None:
    import uvicorn

    app = agentstream_app() if kind == "agentstream" else pydantic_ai_app()
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


def body(chat_id: str, pace: float, count: int) -> dict[str, Any]:
    """What ``DefaultChatTransport`` posts for a new message."""
    text = f"pace={pace} n={count}"
    return {
        "id": chat_id,
        "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": text}]}],
        "trigger": "submit-message",
    }


async def one(client: httpx.AsyncClient, path: str, chat_id: str, pace: float, n: int) -> int:
    """Read one answer to its end; the number of text deltas it carried."""
    deltas = 0
    async with client.stream("POST", path, json=body(chat_id, pace, n)) as response:
        assert response.status_code == 200, await response.aread()
        async for line in response.aiter_lines():
            if line.startswith("data: ") and '"text-delta"' in line:
                deltas += 1
    return deltas


async def measure(kind: str, python: str, streams: int, count: int, pace: float) -> float:
    import httpx

    command = [python, str(Path(__file__)), "--serve", kind]
    process = spawn(command)
    try:
        assert process.stdout is not None
        port = int(await asyncio.to_thread(process.stdout.readline))
        path = PATHS[kind]
        limits = httpx.Limits(max_connections=streams + 1)
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:
            for attempt in range(50):  # the server is listening once the port is printed
                try:
                    await one(client, path, "warm-up", 0, 50)
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.1 * (attempt + 1))
            before = cpu_ns(process.pid)
            delivered = await asyncio.gather(
                *(one(client, path, f"chat-{i}", pace, count) for i in range(streams))
            )
            spent = cpu_ns(process.pid) - before
        assert all(d == count for d in delivered), f"{kind}: {delivered[:5]}... of {count}"
        return spent / sum(delivered) / 1e3
    finally:
        process.terminate()
        await asyncio.to_thread(process.wait, 10)


async def main_async(args: argparse.Namespace) -> None:
    print(
        f"AI SDK UI message stream, {args.streams} streams x {args.count} deltas, "
        f"pace {args.pace}s: server CPU per delta"
    )
    results: dict[str, list[float]] = {"agentstream": [], "pydantic-ai": []}
    for _ in range(args.repeat):  # the servers take turns, so drift hits both
        results["agentstream"].append(
            await measure("agentstream", sys.executable, args.streams, args.count, args.pace)
        )
        results["pydantic-ai"].append(
            await measure("pydantic-ai", args.pydantic_python, args.streams, args.count, args.pace)
        )
    for kind, values in results.items():
        shown = ", ".join(f"{v:.1f}" for v in values)
        print(f"  {kind:<12} {min(values):7.1f} us/delta (best of: {shown})")
    ratio = min(results["pydantic-ai"]) / min(results["agentstream"])
    print(f"  pydantic-ai / agentstream: {ratio:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", choices=sorted(PATHS), help=argparse.SUPPRESS)
    parser.add_argument("--pydantic-python", default="", help="a Python with pydantic-ai-slim")
    parser.add_argument("--streams", type=int, default=20)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--pace", type=float, default=0.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    if not args.pydantic_python:
        parser.error("--pydantic-python: the Python of an environment with pydantic-ai-slim")
    started = time.perf_counter()
    asyncio.run(main_async(args))
    print(f"  ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
