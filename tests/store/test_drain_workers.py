"""Workers told to stop (``SIGTERM``) drain: real ``agentstream serve`` processes, the signal
for real, on SQLite and PostgreSQL, with and without Redis.

* Without Redis, one worker: a run that can finish within ``AGENTSTREAM_DRAIN_SECONDS``
  finishes (its client reads it to the end), one that cannot is stored as interrupted with
  its partial answer; none is left ``running``. Meanwhile the worker keeps listening:
  ``/readyz`` is 503, a new run is 503 with ``Retry-After``.
* With Redis, a run the drain time cannot finish is handed over: left ``running`` in the
  store, its log without a terminal event, its lease gone (another worker takes it over).
* A rolling restart of ``agentstream serve --workers 3`` (PostgreSQL, Redis): each worker is
  sent ``SIGTERM`` in turn and the command starts its replacement, while 50 runs stream and
  their clients reconnect as the web UI does (from the last event they have, to whichever
  worker answers, after ``Retry-After`` when told 503). No run fails, no client sees an
  error. ``SIGHUP`` to the command replaces its workers one at a time, just as safely.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import redis
from sqlalchemy import select

from agentstream.store import create_engine, upgrade
from agentstream.store.models import MessageRow, RunRow
from tests.server.helpers import PROCESS_START, served_url, wait_until, wait_until_serving

from .test_e2e_server import free_port

REDIS_URL = "redis://127.0.0.1:6379/0"
"""The Redis namespace of ``agentstream serve`` (its runs' ids are unique: tests share it)."""

SLOW_AGENT = """
from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider

agent = Agent(model=ScriptedProvider({{"turns": [{{"text": ["w "] * {chunks}}}], "delay": {delay}}}))
"""


def write_agent(directory: Path, *, chunks: int, delay: float) -> None:
    """``slow:agent``, a scripted model answering ``chunks`` words ``delay`` seconds apart."""
    (directory / "slow.py").write_text(SLOW_AGENT.format(chunks=chunks, delay=delay))


def environment(**extra: str) -> dict[str, str]:
    """The servers' environment: a Redis prefix of the test's own, so that no server of
    another test takes its runs over (nor it theirs)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSTREAM_")}
    src = str(Path(__file__).parents[2] / "src")
    return {**env, "PYTHONPATH": src, "AGENTSTREAM_REDIS_PREFIX": new_prefix(), **extra}


def new_prefix() -> str:
    return f"agentstream-test:{uuid.uuid4().hex}:"


def serve(directory: Path, env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentstream.cli", "serve", "slow:agent", *args],
        cwd=directory,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


@dataclass
class Reader:
    """A tray client reading one run to its end in a thread of its own."""

    base: str
    message: str
    run_id: str | None = None
    frames: list[dict[str, object]] = field(default_factory=list)
    status: int | None = None
    thread: threading.Thread | None = None

    def start(self) -> Reader:
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        return self

    def _read(self) -> None:
        with (
            httpx.Client(base_url=self.base, timeout=60) as client,
            client.stream("POST", "/api/chat/stream", json={"message": self.message}) as answer,
        ):
            self.status = answer.status_code
            self.run_id = answer.headers.get("x-run-id")
            for line in answer.iter_lines():
                if line.startswith("data: "):
                    self.frames.append(json.loads(line[6:]))

    def join(self) -> None:
        assert self.thread is not None
        self.thread.join(timeout=60)
        assert not self.thread.is_alive()


def stored(database_url: str, run_ids: list[str]) -> dict[str, tuple[str, str | None, str]]:
    """Each run's (run status, answer status, answer text) as the store has them (an answer
    not stored yet: ``None`` and ``""``)."""

    async def read() -> dict[str, tuple[str, str | None, str]]:
        engine = create_engine(database_url)
        answers = (
            select(MessageRow.run_id, MessageRow.status, MessageRow.text)
            .where(MessageRow.role == "assistant")
            .subquery()
        )
        try:
            async with engine.connect() as connection:
                rows = await connection.execute(
                    select(RunRow.id, RunRow.status, answers.c.status, answers.c.text)
                    .outerjoin(answers, answers.c.run_id == RunRow.id)
                    .where(RunRow.id.in_(run_ids))
                )
                return {row[0]: (row[1], row[2], row[3] or "") for row in rows}
        finally:
            await engine.dispose()

    return asyncio.run(read())


@pytest.fixture
def migrated(database_url: str) -> str:
    asyncio.run(upgrade(database_url))
    return database_url


def test_sigterm_without_redis_finishes_or_interrupts_every_run(
    migrated: str, tmp_path: Path
) -> None:
    write_agent(tmp_path, chunks=60, delay=0.1)  # 6 s an answer
    env = environment(AGENTSTREAM_DATABASE_URL=migrated, AGENTSTREAM_DRAIN_SECONDS="3")
    process = serve(tmp_path, env, "--port", "0")
    try:
        base = served_url(process)
        wait_until_serving(base, process)
        finishing = Reader(base, "first").start()
        time.sleep(4)  # 2 s left: it ends within the drain time
        cut = Reader(base, "second").start()
        assert wait_until(lambda: len(cut.frames) >= 2)
        process.send_signal(signal.SIGTERM)
        # Still listening: it says it is not ready, and sends new runs elsewhere.
        assert wait_until(lambda: httpx.get(f"{base}/readyz").status_code == 503)
        refused = httpx.post(f"{base}/api/chat/stream", json={"message": "third"})
        assert process.wait(timeout=30) is not None
    finally:
        if process.poll() is None:
            process.kill()
    finishing.join()
    cut.join()
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "1"
    assert finishing.frames[-1]["type"] == "complete"
    assert cut.frames[-1] == {
        "type": "error",
        "message": "The server running this answer stopped before it finished.",
    }
    assert finishing.run_id is not None and cut.run_id is not None
    runs = stored(migrated, [finishing.run_id, cut.run_id])
    assert runs[finishing.run_id] == ("completed", "complete", "w " * 60)
    status, answer, text = runs[cut.run_id]
    assert (status, answer) == ("interrupted", "interrupted")
    assert text.startswith("w w ") and len(text) < len("w " * 60)  # its partial answer


def test_sigterm_with_redis_hands_over_what_it_cannot_finish(
    postgres_url: str, tmp_path: Path
) -> None:
    write_agent(tmp_path, chunks=600, delay=0.05)  # 30 s an answer
    env = environment(
        AGENTSTREAM_DATABASE_URL=postgres_url,
        AGENTSTREAM_REDIS_URL=REDIS_URL,
        AGENTSTREAM_DRAIN_SECONDS="1",
    )
    process = serve(tmp_path, env, "--port", "0")
    try:
        base = served_url(process)
        wait_until_serving(base, process)
        reader = Reader(base, "long").start()
        assert wait_until(lambda: len(reader.frames) >= 3)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    reader.join()
    assert reader.run_id is not None
    # Its client was cut off without an end (it reconnects, with Last-Event-ID, elsewhere).
    assert reader.frames[-1]["type"] not in ("complete", "error", "cancelled")
    shared = redis.Redis.from_url(REDIS_URL)
    key = f"{env['AGENTSTREAM_REDIS_PREFIX']}run:{reader.run_id}"
    assert not shared.exists(f"{key}:alive")  # its lease is gone at once
    logged = [json.loads(fields[b"e"])["type"] for _, fields in shared.xrange(key)]
    assert logged[0] == "run_started" and "text_delta" in logged
    assert not {"run_completed", "run_failed", "run_cancelled"} & set(logged)
    # Still running in the store: no answer stored (its completed rounds would be).
    assert stored(postgres_url, [reader.run_id]) == {reader.run_id: ("running", None, "")}
    shared.delete(*shared.keys(f"{key}*"))


def workers_of(pid: int) -> set[int]:
    """The worker processes of the ``agentstream serve --workers N`` process ``pid`` (one
    that exits between the two reads is not one of them)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return {int(c) for c in children if b"spawn_main" in _command_line(c)}


def _command_line(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return b""


class Broken(Exception):
    """A stream that ended before its run's last event, or a connection that broke."""


@dataclass
class WebClient:
    """A tray client that does what the web UI does (``web/src/app/useChat.ts`` and
    ``web/src/lib/stream.ts``): a request answered 503 with ``Retry-After`` is sent again after
    it (up to 10 times); a stream that breaks off is resumed from the last event it had, at
    whichever worker answers, again each time the resumed stream brought new events (a break
    with nothing new is an error). Once per run it also hangs up on purpose and follows the run
    again from its last event, as a reload does. It asks ``rounds`` questions in turn."""

    base: str
    name: str
    rounds: int = 2
    ends: list[str] = field(default_factory=list)
    """How each of its runs ended, as it saw it."""
    run_ids: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    follows: int = 0
    """Runs it followed again after hanging up (reloads)."""
    reconnects: int = 0
    """Streams it resumed because they broke off."""
    retried: int = 0
    """Requests it sent again after a 503."""

    def run(self) -> None:
        try:
            for round in range(self.rounds):
                self.ends.append(self._ask(f"{self.name}, question {round}"))
        except Exception as exc:  # reported by the test (a thread's error is nobody's)
            self.problems.append(repr(exc))

    def _ask(self, message: str) -> str:
        frames: list[dict[str, object]] = []
        with httpx.Client(base_url=self.base, timeout=60) as client:
            body = {"message": message, "detach": True}
            request = client.build_request("POST", "/api/chat/stream", json=body)
            position = self._drive(client, request, frames, reload_after=random.randint(2, 30))
            if not _ended(frames):  # the reload: a new page follows the run from its mark
                self.follows += 1
                position = self._drive(client, self._follow(client, position), frames)
        return str(frames[-1]["type"])

    def _follow(self, client: httpx.Client, last: str | None) -> httpx.Request:
        headers = {"Last-Event-ID": last} if last is not None else {}
        return client.build_request("GET", f"/api/runs/{self.run_ids[-1]}/stream", headers=headers)

    def _drive(
        self,
        client: httpx.Client,
        request: httpx.Request,
        frames: list[dict[str, object]],
        reload_after: int | None = None,
    ) -> str | None:
        """Stream ``request``'s answer into ``frames`` until the run's end (or, with
        ``reload_after``, until that many frames: a hang-up); the last event id seen."""
        last: str | None = None
        resumed_at: str | None = None
        reconnected = False
        while True:
            try:
                last, hung_up = self._read(client, request, frames, last, reload_after)
                if hung_up or _ended(frames):
                    return last
                raise Broken("the stream ended before the answer")
            except (Broken, httpx.TransportError) as exc:
                if reconnected and last == resumed_at:
                    raise AssertionError(f"broken again with nothing new: {exc!r}") from None
                reconnected, resumed_at = True, last
                self.reconnects += 1
                request = self._follow(client, last)

    def _read(
        self,
        client: httpx.Client,
        request: httpx.Request,
        frames: list[dict[str, object]],
        last: str | None,
        reload_after: int | None,
    ) -> tuple[str | None, bool]:
        for _ in range(10):
            answer = client.send(request, stream=True)
            if answer.status_code != 503 or "retry-after" not in answer.headers:
                break
            answer.close()
            self.retried += 1
            time.sleep(int(answer.headers["retry-after"]))
        try:
            assert answer.status_code == 200, (answer.status_code, answer.read())
            if request.method == "POST":
                self.run_ids.append(answer.headers["x-run-id"])
            seen = 0
            for line in answer.iter_lines():
                if line.startswith("id: "):
                    last = line[4:]
                elif line.startswith("data: "):
                    frame = json.loads(line[6:])
                    frames.append(frame)
                    if frame["type"] == "error":
                        self.problems.append(f"error event: {frame}")
                    seen += 1
                    if _ended(frames):
                        return last, False
                    if reload_after is not None and seen >= reload_after:
                        return last, True
            return last, False
        finally:
            answer.close()


def _ended(frames: list[dict[str, object]]) -> bool:
    return bool(frames) and frames[-1]["type"] in ("complete", "error", "cancelled")


def test_a_rolling_restart_loses_no_run(postgres_url: str, tmp_path: Path) -> None:
    write_agent(tmp_path, chunks=80, delay=0.1)  # 8 s an answer
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = environment(
        AGENTSTREAM_DATABASE_URL=postgres_url,
        AGENTSTREAM_REDIS_URL=REDIS_URL,
        AGENTSTREAM_DRAIN_SECONDS="20",
    )
    process = serve(tmp_path, env, "--workers", "3", "--port", str(port))
    try:
        assert wait_until(lambda: _answers(base), timeout=PROCESS_START)
        assert wait_until(lambda: len(workers_of(process.pid)) == 3, timeout=PROCESS_START)
        clients = [WebClient(base, f"client {n}") for n in range(50)]
        threads = [threading.Thread(target=c.run, daemon=True) for c in clients]
        for thread in threads:
            thread.start()
            time.sleep(0.05)
        for old in sorted(workers_of(process.pid)):
            os.kill(old, signal.SIGTERM)
            # The command starts its replacement once the old worker has drained and exited.
            assert wait_until(
                lambda old=old: (
                    old not in workers_of(process.pid)  # type: ignore[misc]
                    and len(workers_of(process.pid)) == 3
                ),
                timeout=PROCESS_START,
            )
            assert wait_until(lambda: _answers(base), timeout=PROCESS_START)
        for thread in threads:
            thread.join(timeout=120)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
    problems = [p for c in clients for p in c.problems]
    assert problems == []
    assert [c.ends for c in clients] == [["complete", "complete"]] * 50
    assert sum(c.follows for c in clients) == 100  # every run was followed again
    run_ids = [r for c in clients for r in c.run_ids]
    runs = stored(postgres_url, run_ids)
    assert {status for status, _, _ in runs.values()} == {"completed"}
    assert len(runs) == 100
    shared = redis.Redis.from_url(REDIS_URL)
    keys = list(shared.scan_iter(f"{env['AGENTSTREAM_REDIS_PREFIX']}*"))
    if keys:
        shared.delete(*keys)


def _answers(base: str) -> bool:
    try:
        return httpx.get(f"{base}/readyz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def test_sighup_replaces_the_workers_one_at_a_time(postgres_url: str, tmp_path: Path) -> None:
    """``SIGHUP`` to ``agentstream serve --workers 2``: each worker is replaced by a new one,
    which starts before the old one is sent ``SIGTERM`` and drains, however long a worker
    takes to start on a loaded host; no run is lost meanwhile."""
    write_agent(tmp_path, chunks=80, delay=0.1)  # 8 s an answer
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = environment(AGENTSTREAM_DATABASE_URL=postgres_url, AGENTSTREAM_REDIS_URL=REDIS_URL)
    process = serve(tmp_path, env, "--workers", "2", "--port", str(port))
    try:
        assert wait_until(lambda: _answers(base), timeout=PROCESS_START)
        assert wait_until(lambda: len(workers_of(process.pid)) == 2, timeout=PROCESS_START)
        before = workers_of(process.pid)
        clients = [WebClient(base, f"client {n}", rounds=1) for n in range(10)]
        threads = [threading.Thread(target=c.run, daemon=True) for c in clients]
        for thread in threads:
            thread.start()
        assert wait_until(lambda: all(c.run_ids for c in clients), timeout=60)
        process.send_signal(signal.SIGHUP)
        assert wait_until(lambda: len(workers_of(process.pid) - before) == 2, timeout=PROCESS_START)
        for thread in threads:
            thread.join(timeout=120)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
    assert [p for c in clients for p in c.problems] == []
    assert [c.ends for c in clients] == [["complete"]] * 10
