"""The shared stream: disconnects stop the work, heartbeats, headers, a broken source."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncGenerator
from typing import Any

from agentstream import Agent
from agentstream.events import RunEvent, RunStarted, TextDelta
from agentstream.providers.scripted import ScriptedProvider
from agentstream.server.dialects.tray import TrayEncoder
from agentstream.server.sse import NDJSON, SSE_DATA, SSE_NAMED, EventStream
from agentstream.tools import tool
from tests.server.agents import slow_agent
from tests.server.conftest import Serve
from tests.server.helpers import WAIT, datas, other_tasks, parse_sse, stream_text, wait_until

TRAY = "/api/chat/stream"


def test_client_disconnect_closes_the_provider_stream(serve: Serve) -> None:
    agent, provider = slow_agent(delay=0.05, chunks=400)  # 20 s if nobody stops it
    server = serve(agent)
    with server.client() as client, client.stream("POST", TRAY, json={"message": "go"}) as stream:
        deltas = 0
        lines = stream.iter_lines()  # held: dropping it would close the connection early
        for line in lines:
            if line.startswith("data: ") and json.loads(line[6:])["type"] == "text_delta":
                deltas += 1
                if deltas == 3:
                    break
        assert provider.closed_early == 0
        assert server.call(other_tasks()) != []  # the run's tasks, while it streams
    # Leaving the block closes the connection before the answer finished.
    assert wait_until(lambda: provider.closed_early == 1)
    assert wait_until(lambda: server.call(other_tasks()) == [], timeout=5)
    assert len(provider.requests) == 1


def test_a_client_that_stops_reading_is_let_go(serve: Serve) -> None:
    """A client that keeps the connection open but reads nothing blocks the server's writes
    once the socket buffers fill; after the write timeout its run is stopped like a
    disconnect, instead of waiting forever."""
    import socket

    line = "x" * 4000 + " "
    # 20,000 chunks of 4 KB a millisecond apart: the socket buffers fill within a second or
    # two, long before the model would finish (20 s and 80 MB if nobody stopped it).
    provider = ScriptedProvider({"turns": [{"text": [line] * 20_000, "delay": 0.001}]})
    server = serve(Agent(model=provider), write_timeout_seconds=0.5)
    body = json.dumps({"message": "flood me"}).encode()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", server.port))
    try:
        sock.sendall(
            b"POST " + TRAY.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
        )  # and then never read
        assert wait_until(lambda: provider.closed_early == 1)
        assert wait_until(lambda: server.call(other_tasks()) == [], timeout=5)
    finally:
        sock.close()


def test_client_disconnect_cancels_a_running_tool(serve: Serve) -> None:
    started, cancelled = threading.Event(), threading.Event()

    @tool
    async def crunch() -> str:
        """Think for a long time."""
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "done"

    provider = ScriptedProvider(
        {"turns": [{"tool_calls": [{"name": "crunch", "arguments": {}}]}, {"text": "never"}]}
    )
    server = serve(Agent(model=provider, tools=[crunch]))
    with server.client() as client, client.stream("POST", TRAY, json={"message": "go"}) as response:
        for line in response.iter_lines():
            if '"tool_start"' in line:
                break
        assert started.wait(WAIT)
    assert cancelled.wait(WAIT)
    assert len(provider.requests) == 1
    assert wait_until(lambda: server.call(other_tasks()) == [], timeout=5)


def test_heartbeat_comments_while_a_tool_is_quiet(serve: Serve) -> None:
    @tool
    async def wait_a_bit() -> str:
        """Take half a second."""
        await asyncio.sleep(0.5)
        return "ok"

    provider = ScriptedProvider(
        {"turns": [{"tool_calls": [{"name": "wait_a_bit", "arguments": {}}]}, {"text": "done"}]}
    )
    server = serve(Agent(model=provider, tools=[wait_a_bit]), heartbeat_seconds=0.1)
    with server.client() as client:
        _, text = stream_text(client, TRAY, json={"message": "go"})
    assert text.count(": ping\n\n") >= 2
    before, _, after = text.partition(": ping\n\n")
    assert '"tool_start"' in before and '"complete"' in after
    assert datas(parse_sse(text))[-1]["type"] == "complete"


def test_ndjson_heartbeat_is_a_blank_line(serve: Serve) -> None:
    @tool
    async def wait_a_bit() -> str:
        """Take a moment."""
        await asyncio.sleep(0.4)
        return "ok"

    provider = ScriptedProvider(
        {"turns": [{"tool_calls": [{"name": "wait_a_bit", "arguments": {}}]}, {"text": "done"}]}
    )
    server = serve(Agent(model=provider, tools=[wait_a_bit]), heartbeat_seconds=0.1)
    with server.client() as client:
        _, text = stream_text(
            client,
            "/api/chat/agent-chat/stream?brandRef=b",
            json={"brandRef": "b", "model": "scripted:script", "content": "go"},
            headers={"Accept": "application/x-ndjson"},
        )
    assert "\n\n" in text
    assert [line.split("{", 1)[0] for line in text.splitlines() if line][-1] == "status"


def test_a_source_that_breaks_mid_stream_ends_with_the_dialect_error() -> None:
    async def events() -> AsyncGenerator[RunEvent, None]:
        yield RunStarted(run_id="r1", seq=0)
        yield TextDelta(run_id="r1", seq=1, text="Hel")
        raise RuntimeError("the store went away")

    sent: list[Any] = []
    cancels: list[str] = []

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(10)
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    async def main() -> None:
        stream = EventStream(events(), TrayEncoder(), SSE_DATA, cancel=cancels.append, heartbeat=0)
        await stream({"type": "http"}, receive, send)

    asyncio.run(main())
    assert sent[0]["status"] == 200
    assert dict(sent[0]["headers"])[b"x-accel-buffering"] == b"no"
    bodies = b"".join(m.get("body", b"") for m in sent[1:]).decode()
    assert [f["type"] for f in datas(parse_sse(bodies))] == ["status", "text_delta", "error"]
    assert sent[-1]["more_body"] is False
    assert all(m["more_body"] for m in sent[1:-1])
    assert cancels == []


def test_wire_formats() -> None:
    frames = (("message", '{"delta":"a"}'), ("status", '{"state":"completed"}'))
    # The event's seq is the id of its last frame: a client resuming from it has them all.
    assert SSE_NAMED.render(frames, 7) == (
        b'event: message\ndata: {"delta":"a"}\n\n'
        b'id: 7\nevent: status\ndata: {"state":"completed"}\n\n'
    )
    assert SSE_DATA.render(frames[:1], 3) == b'id: 3\ndata: {"delta":"a"}\n\n'
    assert SSE_DATA.render(frames, 3) == (
        b'data: {"delta":"a"}\n\nid: 3\ndata: {"state":"completed"}\n\n'
    )
    # Frames of no event (a failure the source could not report) carry no id.
    assert SSE_DATA.render(frames[:1], -1) == b'data: {"delta":"a"}\n\n'
    assert NDJSON.render(frames, 7) == b'message{"delta":"a"}\nstatus{"state":"completed"}\n'


def _run_stream(
    events: AsyncGenerator[RunEvent, None],
    send: Any,
    *,
    ready: Any = None,
    write_timeout: float = 60.0,
    on_cancel: Any = None,
) -> list[str]:
    cancels: list[str] = []

    def cancel(reason: str) -> None:
        cancels.append(reason)
        if on_cancel is not None:
            on_cancel()

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(30)
        return {"type": "http.disconnect"}

    async def main() -> None:
        stream = EventStream(
            events,
            TrayEncoder(),
            SSE_DATA,
            cancel=cancel,
            heartbeat=0,
            write_timeout=write_timeout,
            ready=ready,
        )
        await asyncio.wait_for(stream({"type": "http"}, receive, send), 10)

    asyncio.run(main())
    return cancels


def test_a_paced_event_is_written_by_the_stream_task_itself() -> None:
    """Nothing else being written, each event leaves from the task running the stream, as
    soon as it is encoded: no hand-over to a writer task."""
    writers: list[object] = []
    bodies: list[bytes] = []

    async def events() -> AsyncGenerator[RunEvent, None]:
        writers.append(asyncio.current_task())  # the generator runs in the stream's task
        yield RunStarted(run_id="r1", seq=0)
        for n in range(3):
            await asyncio.sleep(0.01)
            yield TextDelta(run_id="r1", seq=n + 1, text=f"t{n}")

    async def send(message: Any) -> None:
        if message["type"] == "http.response.body" and message["body"]:
            writers.append(asyncio.current_task())
            bodies.append(message["body"])

    assert _run_stream(events(), send) == []
    assert len(set(map(id, writers))) == 1
    texts = [f.get("text") for body in bodies for f in datas(parse_sse(body.decode()))]
    assert texts == [None, "t0", "t1", "t2"]  # status first, then one write per delta


def test_events_waiting_together_leave_in_one_write() -> None:
    waiting = [0]

    async def events() -> AsyncGenerator[RunEvent, None]:
        yield RunStarted(run_id="r1", seq=0)
        await asyncio.sleep(0.01)
        waiting[0] = 3  # a burst: three deltas handed over at once
        for n in range(3):
            waiting[0] -= 1
            yield TextDelta(run_id="r1", seq=n + 1, text=f"t{n}")
        await asyncio.sleep(0.01)

    bodies: list[bytes] = []

    async def send(message: Any) -> None:
        if message["type"] == "http.response.body" and message["body"]:
            bodies.append(message["body"])

    assert _run_stream(events(), send, ready=lambda seq: waiting[0] > 0) == []
    per_write = [[f.get("text") for f in datas(parse_sse(b.decode()))] for b in bodies]
    assert per_write == [[None], ["t0", "t1", "t2"]]


def test_a_write_blocked_in_the_stream_task_is_given_up_after_the_timeout() -> None:
    """The stream's own write blocks (a client that stopped reading): after the write
    timeout the run is told the client stalled, and the stream ends once the run has."""
    stop = asyncio.Event()

    async def events() -> AsyncGenerator[RunEvent, None]:
        yield RunStarted(run_id="r1", seq=0)
        yield TextDelta(run_id="r1", seq=1, text="blocked")
        await stop.wait()  # the run winds down once cancelled
        yield TextDelta(run_id="r1", seq=2, text="never sent")

    sent: list[bytes] = []

    async def send(message: Any) -> None:
        if message["type"] != "http.response.body":
            return
        if sent:
            await asyncio.Event().wait()  # never drains
        sent.append(message["body"])

    cancels = _run_stream(events(), send, write_timeout=0.2, on_cancel=stop.set)
    assert cancels == ["client_stalled"]
    assert len(sent) == 1
