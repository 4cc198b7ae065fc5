"""Live events handed straight to a response that has caught up with its run's log: written
from the run's task (no wake-up of the stream's), batched when they come in a burst, and
back to reading the log, in order and without a gap, when a write has to wait."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import pytest

from agentstream.events import RunCancelled, RunEvent, RunStarted, TextDelta
from agentstream.principal import Principal
from agentstream.runs.broker import Handoff
from agentstream.runs.local_broker import LocalBroker
from agentstream.server.dialects.tray import TrayEncoder
from agentstream.server.eager import start_eagerly
from agentstream.server.sse import SSE_DATA, EventStream, Frame
from tests.server.helpers import datas, parse_sse

ALICE = Principal(user_id="alice")


def texts(bodies: Sequence[bytes]) -> list[list[str]]:
    """The frames of each write, by type (a delta by its text)."""
    return [
        [f.get("text") or f["type"] for f in datas(parse_sse(body.decode()))] for body in bodies
    ]


async def stream_run(
    publish: Callable[[LocalBroker], Any],
    send: Callable[[Any], Any],
    *,
    encoder: Any = None,
    write_timeout: float = 60.0,
) -> list[str]:
    """A run published by ``publish(broker)`` in a task of its own, streamed by an
    ``EventStream`` reading its log with a hand-off; the cancel reasons it gave."""
    broker = LocalBroker()
    await broker.open_run("r1", ALICE)
    cancels: list[str] = []
    handoff = Handoff()
    stream = EventStream(
        broker.replay("r1", ALICE, handoff=handoff),
        encoder or TrayEncoder(),
        SSE_DATA,
        cancel=cancels.append,
        heartbeat=0,
        write_timeout=write_timeout,
        ready=partial(broker.has_after, "r1"),
        handoff=handoff,
    )

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(30)
        return {"type": "http.disconnect"}

    run = asyncio.create_task(publish(broker))
    await asyncio.wait_for(stream({"type": "http"}, receive, send), 10)
    await run
    return cancels


def bodies_of(sent: list[Any]) -> list[bytes]:
    return [m["body"] for m in sent if m["type"] == "http.response.body" and m["body"]]


async def test_paced_events_are_written_without_waking_the_stream_s_task() -> None:
    writers: list[object] = []
    sent: list[Any] = []

    async def publish(broker: LocalBroker) -> None:
        broker.publish(RunStarted(run_id="r1", seq=0))
        for n in range(3):
            await asyncio.sleep(0.02)
            broker.publish(TextDelta(run_id="r1", seq=n + 1, text=f"t{n}"))
        await asyncio.sleep(0.02)
        broker.publish(RunCancelled(run_id="r1", seq=4, reason="stopped"))

    async def send(message: Any) -> None:
        if message.get("body"):
            writers.append(asyncio.current_task())
        sent.append(message)

    assert await stream_run(publish, send) == []
    bodies = bodies_of(sent)
    assert texts(bodies) == [["status"], ["t0"], ["t1"], ["t2"], ["cancelled"]]
    # The deltas left from a callback the run's task scheduled (no task woke for them); the
    # last event from the stream's own task.
    assert writers[1:4] == [None] * 3
    assert writers[4] is not None
    assert sent[-1]["more_body"] is False


async def test_a_burst_of_handed_over_events_leaves_in_one_write() -> None:
    sent: list[Any] = []

    async def publish(broker: LocalBroker) -> None:
        broker.publish(RunStarted(run_id="r1", seq=0))
        await asyncio.sleep(0.02)
        for n in range(3):  # three deltas without yielding: one write
            broker.publish(TextDelta(run_id="r1", seq=n + 1, text=f"t{n}"))
        await asyncio.sleep(0.02)
        broker.publish(RunCancelled(run_id="r1", seq=4))

    async def send(message: Any) -> None:
        sent.append(message)

    await stream_run(publish, send)
    assert texts(bodies_of(sent)) == [["status"], ["t0", "t1", "t2"], ["cancelled"]]


async def test_a_write_that_waits_sends_what_followed_after_it_in_order() -> None:
    """A slow client: the handed-over write of t1 waits; t2..t5 go to the log meanwhile and
    leave after it, in order, each once."""
    sent: list[Any] = []
    release = asyncio.Event()

    async def publish(broker: LocalBroker) -> None:
        broker.publish(RunStarted(run_id="r1", seq=0))
        for n in range(6):
            await asyncio.sleep(0.01)
            broker.publish(TextDelta(run_id="r1", seq=n + 1, text=f"t{n}"))
            if n == 4:
                release.set()
        await asyncio.sleep(0.01)
        broker.publish(RunCancelled(run_id="r1", seq=7))

    async def send(message: Any) -> None:
        if message.get("body") == b"id: 2\ndata: " + b'{"type":"text_delta","text":"t1"}\n\n':
            await release.wait()  # the server's flow control: the client reads nothing
        sent.append(message)

    assert await stream_run(publish, send) == []
    written = [text for body in texts(bodies_of(sent)) for text in body]
    assert written == ["status", "t0", "t1", "t2", "t3", "t4", "t5", "cancelled"]


async def test_a_handed_over_write_that_never_ends_is_given_up() -> None:
    sent: list[Any] = []

    async def publish(broker: LocalBroker) -> None:
        broker.publish(RunStarted(run_id="r1", seq=0))
        await asyncio.sleep(0.01)
        broker.publish(TextDelta(run_id="r1", seq=1, text="blocked"))
        await asyncio.sleep(0.5)
        broker.publish(RunCancelled(run_id="r1", seq=2))

    async def send(message: Any) -> None:
        if message.get("body") and sent:
            await asyncio.Event().wait()  # never drains
        sent.append(message)

    assert await stream_run(publish, send, write_timeout=0.2) == ["client_stalled"]


class BreaksOnSecondDelta(TrayEncoder):
    def encode(self, event: RunEvent) -> Sequence[Frame]:
        if isinstance(event, TextDelta) and event.text == "boom":
            raise ValueError("cannot encode")
        return super().encode(event)


async def test_an_encoder_failing_on_a_handed_over_event_ends_with_the_error() -> None:
    sent: list[Any] = []

    async def publish(broker: LocalBroker) -> None:
        broker.publish(RunStarted(run_id="r1", seq=0))
        for n, text in enumerate(("fine", "boom", "after")):
            await asyncio.sleep(0.01)
            broker.publish(TextDelta(run_id="r1", seq=n + 1, text=text))
        broker.publish(RunCancelled(run_id="r1", seq=4))

    async def send(message: Any) -> None:
        sent.append(message)

    await stream_run(publish, send, encoder=BreaksOnSecondDelta())
    written = [text for body in texts(bodies_of(sent)) for text in body]
    assert written == ["status", "fine", "error"]
    assert sent[-1]["more_body"] is False


async def test_a_taking_reader_that_leaves_does_not_disturb_another() -> None:
    broker = LocalBroker()
    await broker.open_run("r1", ALICE)
    taken: list[RunEvent] = []
    handoff = Handoff()
    handoff.take = lambda event: taken.append(event) is None
    taking = broker.replay("r1", ALICE, handoff=handoff)
    plain = broker.replay("r1", ALICE)
    first = asyncio.create_task(anext(taking))
    second = asyncio.create_task(anext(plain))
    await asyncio.sleep(0)
    broker.publish(RunStarted(run_id="r1", seq=0))
    assert (await second).seq == 0
    assert [e.seq for e in taken] == [0] and not first.done()  # taken, never yielded
    first.cancel()  # the taking reader leaves
    with pytest.raises(asyncio.CancelledError):
        await first
    following = asyncio.create_task(anext(plain))
    await asyncio.sleep(0)
    broker.publish(TextDelta(run_id="r1", seq=1, text="on"))
    assert (await following).seq == 1
    assert [e.seq for e in taken] == [0]  # the reader that left is given nothing more


async def test_start_eagerly() -> None:
    order: list[str] = []

    async def quick() -> None:
        order.append("quick")

    async def failing() -> None:
        raise OSError("broken pipe")

    gate = asyncio.Event()

    async def slow() -> None:
        order.append("slow started")
        await gate.wait()
        await asyncio.sleep(0)
        order.append("slow done")

    assert start_eagerly(quick()) is None and order == ["quick"]
    with pytest.raises(OSError, match="broken pipe"):
        start_eagerly(failing())
    rest = start_eagerly(slow())
    assert rest is not None and order[-1] == "slow started"  # started here, at once
    gate.set()
    await rest
    assert order[-1] == "slow done"

    stopped: list[str] = []

    async def cancellable() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            stopped.append("cleaned up")

    waiting = start_eagerly(cancellable())
    assert waiting is not None
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert stopped == ["cleaned up"]
