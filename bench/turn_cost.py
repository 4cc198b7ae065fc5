"""What a turn costs the server as its conversation grows: time per turn at 10, 100 and 1,000
prior messages, with a model that answers at once.

One agentstream app on a real uvicorn (in a thread with its own loop), a SQLite file (and a
fresh PostgreSQL database with ``--postgres ADMIN_URL``), and a fake OpenAI-compatible
upstream answering every request at once (``tests/providers/fakes``). Conversations are
seeded through the store's own API with ``--sizes`` prior messages (a 200-character
question and a 1,000-character answer each exchange, about the 600 bytes a message the
measured conversations had), then ``--turns`` turns are timed on each over the chat tray
protocol, request to ``complete``, each asked after the seeded conversation's last answer (a
branch of its own: the conversation keeps its size). The model's window is set with
``--window`` (tokens; the default is a small local model's, so that the longest
conversation is larger than what the model can be sent).

Two readings are compared in the same run, on the same conversations: ``whole`` reads the
whole conversation from the store for every turn (as before runs read only what the model
can be sent), ``recent`` is the default (:mod:`agentstream.runs.reading`). Printed per
reading and size: p50/p90 ms per turn, the request the fake upstream received (KB), and the
ratio of the largest size's p50 to the smallest's. The readings take turns, turn by turn.
The ops protocol's ``conversation`` frame is the whole conversation by definition; its turns
are timed separately (``ops`` rows)::

    .venv/bin/python bench/turn_cost.py [--sizes 10,100,1000] [--turns 20] [--window 16000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))
from bench_postgres import bench_database  # noqa: E402
from stream_overhead import percentile, sqlite_database  # noqa: E402

from tests.providers.fakes import openai as fake_openai  # noqa: E402
from tests.providers.fakes.server import FakeUpstream  # noqa: E402
from tests.server.helpers import LiveServer  # noqa: E402

QUESTION = "Tell me more about the deployment plan and its risks. " * 4  # ~200 characters
ANSWER = "The plan rolls out in three stages, each watched for errors first. " * 15  # ~1,000


async def seed(url: str, sizes: list[int], copies: int) -> dict[int, list[tuple[str, str]]]:
    """``copies`` conversations per size, each with that many prior messages: for each, its
    id and the id its last answer is shown by."""
    from agentstream.events import RunCompleted
    from agentstream.messages import AssistantMessage
    from agentstream.principal import ANONYMOUS
    from agentstream.store import SqlConversationStore

    store = await SqlConversationStore.open(url)
    made: dict[int, list[tuple[str, str]]] = {}
    try:
        for size in sizes:
            for _ in range(copies):
                cid = str(uuid.uuid4())
                rid = ""
                for _ in range(size // 2):
                    rid = uuid.uuid4().hex
                    await store.start_run(
                        ANONYMOUS,
                        run_id=rid,
                        conversation_id=cid,
                        user_message=QUESTION,
                        create_if_missing=True,
                        history_bound=1,  # seeding reads nothing it needs
                    )
                    await store.finish_run(
                        ANONYMOUS,
                        run_id=rid,
                        conversation_id=cid,
                        messages=[AssistantMessage(text=ANSWER)],
                        status="completed",
                        completed=RunCompleted(run_id=rid, seq=3, message=ANSWER),
                        snapshot=False,
                    )
                made.setdefault(size, []).append((cid, rid))
    finally:
        await store.close()
    return made


def app(url: str, upstream: FakeUpstream, window: int) -> Any:
    from agentstream import Agent
    from agentstream.chat import ChatHooks
    from agentstream.providers.profiles import ModelProfiles
    from agentstream.server.app import create_app
    from agentstream.server.settings import Settings

    model = f"openai:{fake_openai.MODEL}"
    profiles = ModelProfiles().with_profiles({model: {"context_window": window}})
    agent = Agent(model=fake_openai.provider(upstream), profiles=profiles, max_tokens=1_000)
    return create_app(
        agent, settings=Settings(host="127.0.0.1"), database_url=url, hooks=ChatHooks()
    )


async def turn(client: httpx.AsyncClient, case: Case, seeded: tuple[str, str]) -> float:
    """One turn, request to the stream's last frame; seconds. It is asked after the seeded
    conversation's last answer (a branch of its own), so the conversation keeps its size."""
    began = time.perf_counter()
    cid, leaf = seeded
    body = {"message": QUESTION, "conversation_id": cid, "parent_message_id": leaf}
    async with client.stream("POST", case.path, json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line.startswith("data:") and json.loads(line[5:]).get("type") == case.last:
                break
    return time.perf_counter() - began


@dataclass(frozen=True)
class Case:
    name: str
    reading: Any
    path: str
    last: str
    """The frame that ends a turn."""
    copy: int
    """Which of each size's seeded conversations it uses."""


async def measure(
    url: str,
    label: str,
    conversations: dict[int, list[tuple[str, str]]],
    args: argparse.Namespace,
) -> None:
    from agentstream.runs.reading import HistoryReading

    upstream = FakeUpstream()
    upstream.respond = lambda _: fake_openai.text("Noted.")
    upstream.start()
    served = app(url, upstream, args.window)
    server = LiveServer(served).start()  # in a thread with its own loop, as in the tests
    runner = served.state.server.runner
    cases = [
        Case("whole", HistoryReading(whole=True), "/api/chat/stream", "complete", 0),
        Case("recent", HistoryReading(), "/api/chat/stream", "complete", 1),
        Case("ops", HistoryReading(), "/agent/stream", "done", 2),
    ]
    times: dict[tuple[str, int], list[float]] = {}
    sent: dict[tuple[str, int], float] = {}
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            for size, seeded in conversations.items():
                # The cases take turns, so that what else the machine does falls on each alike.
                for round_ in range(args.turns + 2):  # two to warm up
                    for case in cases:
                        runner.reading = case.reading
                        took = await turn(client, case, seeded[case.copy])
                        if round_ >= 2:
                            times.setdefault((case.name, size), []).append(took)
                            sent[case.name, size] = len(upstream.requests[-1].body) / 1000
    finally:
        server.stop()
        upstream.stop()
    for case in cases:
        p50s = {}
        for size in conversations:
            taken = times[case.name, size]
            p50s[size] = percentile(taken, 0.5) * 1000
            print(
                f"{label:8} {case.name:7} {size:>6} msgs  p50 {p50s[size]:7.1f} ms"
                f"  p90 {percentile(taken, 0.9) * 1000:7.1f} ms"
                f"  request {sent[case.name, size]:7.1f} KB"
            )
        small, large = min(p50s), max(p50s)
        print(f"{label:8} {case.name:7} ratio {large}/{small}: {p50s[large] / p50s[small]:.2f}x")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--window", type=int, default=16_000)
    parser.add_argument(
        "--postgres", default=None, help="also PostgreSQL: a URL that may create databases"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    async with contextlib.AsyncExitStack() as stack:
        directory = stack.enter_context(tempfile.TemporaryDirectory())
        databases = [("sqlite", await sqlite_database(directory))]
        if args.postgres:
            databases.append(
                ("postgres", await stack.enter_async_context(bench_database(args.postgres)))
            )
        for label, url in databases:
            began = time.perf_counter()
            conversations = await seed(url, sizes, 3)
            print(f"{label}: seeded in {time.perf_counter() - began:.1f} s", flush=True)
            await measure(url, label, conversations, args)


if __name__ == "__main__":
    asyncio.run(main())
