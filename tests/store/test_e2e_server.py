"""Nothing lost, end to end: the real server, the real store, a real client that goes away.

* A client that disconnects mid-stream (in-process uvicorn on a loopback port): the user
  message, the finished tool round-trip and the partial answer are kept, marked interrupted.
* A server process killed with SIGKILL mid-stream (``agentstream serve`` in a subprocess):
  after a restart on the same database, every committed message is there, the conversation is
  served by ``/api/conversations`` and can be continued.
* A detached chat tray run whose client went away is the conversation's ``active_run``; it
  resumes from the client's last ``id:`` and stops from there (what the web UI does on reload).

Both run on SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider
from agentstream.server.app import create_app
from agentstream.server.config import ServerConfig
from agentstream.server.settings import Settings
from agentstream.store import SqlConversationStore, create_engine, upgrade
from agentstream.store.models import RunRow
from tests.server.helpers import PROCESS_START, LiveServer, wait_until

LONG_ANSWER = ["word "] * 400

SCRIPT: dict[str, Any] = {
    "rules": [
        {
            "match": "status",
            "turns": [
                {
                    "text": ["Checking ", "the disk."],
                    "tool_calls": [{"id": "call_1", "name": "check_disk", "arguments": {}}],
                },
                {"text": LONG_ANSWER, "delay": 0.05},
            ],
        },
        {"turns": [{"text": ["Still ", "here."]}]},
    ]
}


def check_disk() -> dict[str, int]:
    """Report free disk space."""
    return {"free_gb": 42}


def read_frames(response: httpx.Response, until: Any) -> list[dict[str, Any]]:
    """SSE ``data:`` frames of ``response`` until ``until(frames)`` is true."""
    frames: list[dict[str, Any]] = []
    for line in response.iter_lines():
        if line.startswith("data: "):
            frames.append(json.loads(line[6:]))
            if until(frames):
                break
    return frames


def mid_answer(frames: list[dict[str, Any]]) -> bool:
    """The tool finished and the second turn has streamed a few words."""
    seen_tool = any(frame.get("type") == "tool_end" for frame in frames)
    words = sum(1 for frame in frames if frame.get("content") == "word ")
    return seen_tool and words >= 3


def conversation_id_of(frames: list[dict[str, Any]]) -> str:
    start = next(frame for frame in frames if frame.get("type") == "start")
    value: str = start["conversation_id"]
    return value


# --- a client that disconnects ----------------------------------------------------------------


@contextmanager
def live_server(
    database_url: str,
    agent: Agent | None = None,
    settings: Settings | None = None,
    server_config: ServerConfig | None = None,
) -> Iterator[LiveServer]:
    """The app on uvicorn in a thread with its own event loop (default: the scripted agent
    of these tests, in anonymous local mode). The store's engine is created without
    connecting, so every connection belongs to the server's loop."""
    asyncio.run(upgrade(database_url))
    store = SqlConversationStore(create_engine(database_url))
    agent = agent or Agent(model=ScriptedProvider(SCRIPT), tools=[check_disk])
    settings = settings or Settings(host="127.0.0.1")
    app = create_app(agent, settings=settings, store=store, server=server_config)
    server = LiveServer(app).start()
    try:
        yield server
    finally:
        server.call(store.close())
        server.stop()


@pytest.fixture
def live(database_url: str) -> Iterator[LiveServer]:
    with live_server(database_url) as server:
        yield server


def test_disconnect_keeps_user_message_and_partial_answer(live: LiveServer) -> None:
    with (
        live.client() as client,
        client.stream("POST", "/agent/stream", json={"message": "What is the status?"}) as resp,
    ):
        assert resp.status_code == 200
        frames = read_frames(resp, mid_answer)
    # The connection is closed here, in the middle of the second turn.
    cid = conversation_id_of(frames)
    streamed = "".join(f["content"] for f in frames if f.get("type") == "token")

    def finished() -> bool:
        body = live.client().get(f"/api/conversations/{cid}").json()
        return len(body["messages"]) == 2 and body["messages"][1]["status"] != "complete"

    assert wait_until(finished)
    body = live.client().get(f"/api/conversations/{cid}").json()
    user, answer = body["messages"]
    assert (user["role"], user["content"], user["status"]) == (
        "user",
        "What is the status?",
        "complete",
    )
    assert answer["status"] == "interrupted"
    # Everything the client saw is saved (and perhaps a little more that was in flight).
    assert answer["content"].startswith(streamed)
    assert answer["content"].startswith("Checking the disk.\n\nword word word ")
    assert [(t["tool_name"], t["text_offset"]) for t in answer["tool_history"]] == [
        ("check_disk", len("Checking the disk."))
    ]


def test_a_detached_run_is_the_conversations_active_run_until_it_is_stopped(
    live: LiveServer,
) -> None:
    """What the web UI relies on after a reload: the conversation names the run still going,
    and the run continues in the chat tray protocol from the last ``id:`` the page had."""
    ids: list[str] = []
    frames: list[dict[str, Any]] = []
    with (
        live.client() as client,
        client.stream(
            "POST", "/api/chat/stream", json={"message": "What is the status?", "detach": True}
        ) as resp,
    ):
        run_id = resp.headers["x-run-id"]
        for line in resp.iter_lines():
            if line.startswith("id: "):
                ids.append(line[4:])
            elif line.startswith("data: "):
                frames.append(json.loads(line[6:]))
                words = sum(1 for frame in frames if frame.get("text") == "word ")
                if words >= 3 and len(ids) >= 1 and frames[-1].get("type") == "text_delta":
                    break
    # The page went away in the middle of the second turn; the run goes on.
    cid = frames[0]["conversation_id"]
    body = live.client().get(f"/api/conversations/{cid}").json()
    assert body["active_run"]["id"] == run_id
    assert body["active_run"]["status"] == "running"
    # Its answer so far (the finished tool round-trip) is there, not yet complete.
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    assert body["messages"][1]["run_id"] == run_id
    assert body["messages"][1]["status"] == "interrupted"

    # The page comes back: it resumes from its last id, then stops the run.
    rest: list[dict[str, Any]] = []
    with (
        live.client() as client,
        client.stream(
            "GET", f"/api/runs/{run_id}/stream", headers={"Last-Event-ID": ids[-1]}
        ) as resp,
    ):
        assert resp.status_code == 200
        for line in resp.iter_lines():
            if not line.startswith("data: "):
                continue
            rest.append(json.loads(line[6:]))
            if len(rest) == 3:
                stopped = live.client().post(f"/api/chat/runs/{run_id}/cancel")
                assert stopped.status_code == 202
            if rest[-1]["type"] == "cancelled":
                break
    assert rest[-1]["type"] == "cancelled"
    streamed = "".join(f["text"] for f in frames + rest if f.get("type") == "text_delta")
    words = streamed.count("word ")
    assert streamed == "Checking the disk.[[tool:0]]\n\n" + "word " * words  # none twice

    def ended() -> bool:
        return live.client().get(f"/api/conversations/{cid}").json()["active_run"] is None

    assert wait_until(ended)
    body = live.client().get(f"/api/conversations/{cid}").json()
    assert body["messages"][1]["error"] == "user_cancelled"


def test_fifty_concurrent_requests_on_one_sqlite_file(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'busy.db'}"

    async def ask(client: httpx.AsyncClient, n: int) -> list[dict[str, Any]]:
        response = await client.post("/agent/stream", json={"message": f"hello {n}"})
        assert response.status_code == 200, response.text
        return [json.loads(line[6:]) for line in response.text.splitlines() if line[:6] == "data: "]

    async def load(base_url: str) -> list[list[dict[str, Any]]]:
        limits = httpx.Limits(max_connections=50)
        async with httpx.AsyncClient(base_url=base_url, timeout=120, limits=limits) as client:
            return await asyncio.gather(*(ask(client, n) for n in range(50)))

    with live_server(url) as server:
        streams = asyncio.run(load(server.url))
        listed = server.client().get("/api/conversations", params={"limit": 100}).json()
    for frames in streams:
        assert [f["type"] for f in frames][-2:] == ["conversation", "done"], frames
        assert "error" not in [f["type"] for f in frames]
    ids = {conversation_id_of(frames) for frames in streams}
    assert len(ids) == 50
    assert {item["id"] for item in listed["items"]} == ids


# --- a server process that is killed ----------------------------------------------------------


AGENT_MODULE = f"""
import json

from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider


def check_disk() -> dict[str, int]:
    \"\"\"Report free disk space.\"\"\"
    return {{"free_gb": 42}}


agent = Agent(model=ScriptedProvider(json.loads({json.dumps(SCRIPT)!r})), tools=[check_disk])
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServerProcess:
    """``agentstream serve`` in its own process, on a free loopback port."""

    def __init__(self, agent_dir: Path, database_url: str, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "AGENTSTREAM_DATABASE_URL": database_url,
            "PYTHONPATH": str(agent_dir),
        }
        env.pop("AGENTSTREAM_JWT_SECRET", None)
        self._log = log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agentstream.cli", "serve", "e2e_agent:agent"]
            + ["--host", "127.0.0.1", "--port", str(self.port)],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        if not wait_until(self._ready, timeout=PROCESS_START):
            self.stop()
            raise RuntimeError(f"the server did not start; see {log}:\n{log.read_text()}")

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"the server exited with {self.process.returncode}")
        try:
            return httpx.get(f"{self.url}/api/conversations", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=10)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._log.close()


def test_sigkill_mid_stream_keeps_every_committed_message(
    tmp_path: Path, database_url: str
) -> None:
    (tmp_path / "e2e_agent.py").write_text(AGENT_MODULE)
    log = tmp_path / "server.log"
    if "sqlite" in database_url:
        database_url = database_url.replace("sqlite+aiosqlite", "sqlite")  # as a user writes it

    first = ServerProcess(tmp_path, database_url, log)
    try:
        with (
            first.client() as client,
            client.stream("POST", "/agent/stream", json={"message": "Disk status?"}) as resp,
        ):
            frames = read_frames(resp, mid_answer)
            first.kill()  # mid-stream: no chance to save anything more
    finally:
        first.stop()
    cid = conversation_id_of(frames)

    second = ServerProcess(tmp_path, database_url, log)
    try:
        with second.client() as client:
            listed = client.get("/api/conversations").json()
            assert cid in [item["id"] for item in listed["items"]]
            body = client.get(f"/api/conversations/{cid}").json()
            assert body["title"] == "Disk status?"
            user, answer = body["messages"]
            assert (user["role"], user["content"]) == ("user", "Disk status?")
            # The finished tool round-trip was committed before the kill; the words of the
            # turn in flight were not (nothing can save them).
            assert answer["status"] == "interrupted"
            assert answer["content"] == "Checking the disk."
            assert [t["tool_name"] for t in answer["tool_history"]] == ["check_disk"]

            # The conversation goes on.
            with client.stream(
                "POST", "/agent/stream", json={"message": "Anything else?", "conversation_id": cid}
            ) as resp:
                rest = read_frames(resp, lambda fs: fs[-1].get("type") == "done")
            assert "".join(f["content"] for f in rest if f.get("type") == "token") == "Still here."
            body = client.get(f"/api/conversations/{cid}").json()
            assert [(m["role"], m["content"], m["status"]) for m in body["messages"]] == [
                ("user", "Disk status?", "complete"),
                ("assistant", "Checking the disk.", "interrupted"),
                ("user", "Anything else?", "complete"),
                ("assistant", "Still here.", "complete"),
            ]
    finally:
        second.stop()


def test_two_hundred_streams_dropped_at_once_all_end_in_the_store(tmp_path: Path) -> None:
    """A disconnect storm on one SQLite file: every run is finished in the store (none left
    ``running``), with the user message and the partial answer of each kept."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'storm.db'}"
    count = 200

    async def open_and_drop(base_url: str) -> list[str]:
        limits = httpx.Limits(max_connections=count)
        arrived, everyone = 0, asyncio.Event()

        async def one(client: httpx.AsyncClient, n: int) -> str:
            nonlocal arrived
            message = {"message": f"What is the status {n}?"}
            async with client.stream("POST", "/agent/stream", json=message) as response:
                assert response.status_code == 200
                frames: list[dict[str, Any]] = []
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        frames.append(json.loads(line[6:]))
                        if mid_answer(frames):
                            break
                arrived += 1
                if arrived == count:
                    everyone.set()
                await everyone.wait()  # all hang up together, in the middle of their answers
                return conversation_id_of(frames)

        async with httpx.AsyncClient(base_url=base_url, timeout=120, limits=limits) as client:
            return await asyncio.gather(*(one(client, n) for n in range(count)))

    with live_server(url) as server:
        ids = asyncio.run(open_and_drop(server.url))

        async def running() -> int:
            engine = create_engine(url)
            try:
                async with engine.connect() as connection:
                    rows = await connection.execute(
                        RunRow.__table__.select().where(RunRow.status == "running")
                    )
                    return len(rows.all())
            finally:
                await engine.dispose()

        assert wait_until(lambda: asyncio.run(running()) == 0, timeout=60)
        with server.client() as client:
            for conversation_id in ids:
                body = client.get(f"/api/conversations/{conversation_id}").json()
                user, answer = body["messages"]
                assert user["status"] == "complete"
                assert answer["status"] == "interrupted"
                assert answer["content"].startswith("Checking the disk.\n\nword ")


STRICT_AGENT_MODULE = """
import asyncio
import os

from agentstream import Agent, tool
from agentstream.providers.openai import OpenAIProvider


@tool
async def lookup(round: int) -> dict:
    \"\"\"Look something up.

    Args:
        round: Which round of lookups this is.
    \"\"\"
    await asyncio.sleep(0.01)
    return {"round": round}


agent = Agent(
    model=OpenAIProvider("strict", api_key="sk-test", base_url=os.environ["STRICT_UPSTREAM"]),
    tools=[lookup],
)
"""


@pytest.mark.timeout(4 * PROCESS_START)  # five server starts: the suite's limit is for one
def test_sigkill_at_random_moments_of_tool_runs_leaves_a_history_the_vendor_accepts(
    tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kill the server at a random frame of a two-round tool run, a few times over one
    conversation: after each restart the conversation goes on, and the upstream (which refuses
    an invalid tool history as the vendors do) never refuses it."""
    import random

    from tests.strict_upstream import StrictUpstream

    (tmp_path / "e2e_agent.py").write_text(STRICT_AGENT_MODULE)
    log = tmp_path / "server.log"
    upstream = StrictUpstream().start()
    monkeypatch.setenv("STRICT_UPSTREAM", upstream.url)
    chosen = random.Random(20261122)
    conversation_id: str | None = None
    server = ServerProcess(tmp_path, database_url, log)
    try:
        for attempt in range(4):
            cut_after = chosen.randrange(2, 16)  # a frame anywhere in the two tool rounds
            body: dict[str, Any] = {"message": f"question {attempt}"}
            if conversation_id is not None:
                body["conversation_id"] = conversation_id
            with (
                server.client() as client,
                client.stream("POST", "/agent/stream", json=body) as response,
            ):
                assert response.status_code == 200
                frames = read_frames(response, lambda fs, n=cut_after: len(fs) >= n)
                server.kill()
            server.stop()
            conversation_id = conversation_id or conversation_id_of(frames)
            server = ServerProcess(tmp_path, database_url, log)
            with (
                server.client() as client,
                client.stream(
                    "POST",
                    "/agent/stream",
                    json={"message": "go on", "conversation_id": conversation_id},
                ) as response,
            ):
                rest = read_frames(response, lambda fs: fs[-1].get("type") in ("done", "error"))
            assert [f["type"] for f in rest if f["type"] == "error"] == [], rest
            assert upstream.refused == []
    finally:
        server.stop()
        upstream.stop()
