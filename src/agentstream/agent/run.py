"""A run in progress: the task that drives the loop, and the events it hands the consumer.

The loop runs in a task of its own and the consumer reads events from a queue. That split is
what makes cancellation clean: a cancel token cancels the loop's task (never the consumer's),
so the loop can close the provider stream, cancel its tools and still deliver
``run_cancelled``; and if the consumer's own task is cancelled, the loop's task is cancelled
and awaited before the cancellation propagates, so no task outlives the run.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any

from agentstream.agent.inputs import CancelToken, RunInput
from agentstream.agent.loop import Loop
from agentstream.events import TERMINAL_EVENTS, RunEvent, RunUsage
from agentstream.messages import Message
from agentstream.providers.base import Provider

if TYPE_CHECKING:
    from agentstream.agent.agent import Agent

__all__ = ["AgentRun"]

_TERMINAL_TYPES = frozenset(TERMINAL_EVENTS)


class _Outbox:
    """Where the loop puts its events: each handed to the driver's sink as it is made, or
    buffered for a reader, who is woken. An object of its own rather than methods of
    :class:`AgentRun`, so the loop (which the run holds) does not hold the run: a finished
    run is freed as soon as it is dropped, not when the garbage collector gets to it."""

    __slots__ = ("buffer", "sink", "waiter")

    def __init__(self) -> None:
        self.buffer: deque[RunEvent] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.sink: Callable[[RunEvent], None] | None = None

    def put(self, event: RunEvent) -> None:
        sink = self.sink
        if sink is not None and type(event) not in _TERMINAL_TYPES:
            sink(event)
            return
        self.buffer.append(event)
        self.wake()

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class AgentRun:
    """Iterate it (once) for the run's events; ``new_messages`` is the history it added
    after the user message, including a partial turn if it was interrupted."""

    def __init__(self, agent: Agent, run_input: RunInput, provider: Provider) -> None:
        if run_input.cancel is None:
            run_input = replace(run_input, cancel=CancelToken())
        assert run_input.cancel is not None
        self.cancel_token: CancelToken = run_input.cancel
        self._outbox = _Outbox()
        self._loop = Loop(agent, run_input, provider, self._outbox.put)
        self._task: asyncio.Task[None] | None = None
        self._done = False

    @property
    def run_id(self) -> str:
        return self._loop.run_id

    @property
    def new_messages(self) -> list[Message]:
        return self._loop.new_messages

    @property
    def state(self) -> dict[str, Any]:
        """The shared state as the run's tool calls have left it so far
        (:mod:`agentstream.state`)."""
        return self._loop.state

    @property
    def usage(self) -> RunUsage:
        """The run's tokens so far, as billed, however it ends: the vendors' counts, and
        estimates for model calls cut short or never reported
        (:mod:`agentstream.agent.usage`)."""
        return self._loop.usage

    @property
    def ready(self) -> bool:
        """Events are waiting: the next ones can be read without waiting for the loop."""
        return bool(self._outbox.buffer)

    def cancel(self, reason: str = "cancelled") -> None:
        """Stop the run; its last event will be ``run_cancelled``."""
        self.cancel_token.cancel(reason)

    def fail(self, kind: str, message: str) -> None:
        """Stop the run as a failure (a limit it crossed); its last event will be
        ``run_failed`` with ``kind`` and ``message``, its partial answer kept."""
        self.cancel_token.fail(kind, message)

    async def drive(self, sink: Callable[[RunEvent], None]) -> RunEvent:
        """Run the loop in the calling task, hand every event but the last to ``sink`` as it
        is made, and return the last.

        For a consumer that does nothing asynchronous with most events (the server's run
        task appends them to the run's log): no second task, and a delta reaches ``sink``
        without a task switch. ``sink`` must not block. The cancel token then cancels the
        calling task while the loop runs (the loop turns that into ``run_cancelled``), never
        afterwards, so the caller may go on to store the outcome."""
        outbox = self._outbox
        if self._task is not None or outbox.buffer or self._done:
            raise RuntimeError("a run is driven or iterated, once")
        outbox.sink = sink
        self._done = True
        if self.cancel_token.cancelled:  # stopped before it started
            return self._loop.stopped(self.cancel_token)
        task = asyncio.current_task()
        assert task is not None
        looping, cancelled = True, False

        def on_cancel(_reason: str) -> None:
            nonlocal cancelled
            if looping and not cancelled:
                cancelled = True
                task.cancel()

        self.cancel_token.on_cancel(on_cancel)
        try:
            await self._loop.execute()
        finally:
            looping = False
            # Neither the token nor the loop keeps the caller (its task, its sink) any longer.
            self.cancel_token.forget(on_cancel)
            outbox.sink = None
        if cancelled:
            # The loop turned the cancellation into ``run_cancelled``, or ended before it
            # landed: absorb it either way, so the caller's next await is not cancelled.
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0)
            task.uncancel()
        if not outbox.buffer:
            raise RuntimeError(f"run {self.run_id} ended without a terminal event")
        return outbox.buffer.popleft()

    def _start(self) -> asyncio.Task[None]:
        task = asyncio.create_task(self._loop.execute(), name=f"agentstream-run-{self.run_id}")
        self._task = task
        token, outbox = self.cancel_token, self._outbox

        def cancel(_reason: str) -> None:
            task.cancel()

        def ended(_task: object) -> None:
            token.forget(cancel)
            outbox.wake()

        token.on_cancel(cancel)
        task.add_done_callback(ended)
        return task

    def __aiter__(self) -> AgentRun:
        return self

    async def __anext__(self) -> RunEvent:
        if self._done:
            raise StopAsyncIteration
        task = self._task or self._start()
        outbox = self._outbox
        buffer = outbox.buffer
        while not buffer:
            if task.done():
                # The loop's task ended without a terminal event: it was cancelled from
                # outside or crashed. Surface that instead of waiting forever.
                self._done = True
                if task.cancelled():
                    if self.cancel_token.cancelled:  # cancelled before it ran
                        return self._loop.stopped(self.cancel_token)
                    raise asyncio.CancelledError
                task.result()
                raise StopAsyncIteration
            outbox.waiter = asyncio.get_running_loop().create_future()
            try:
                await outbox.waiter
            except asyncio.CancelledError:
                await self._stop(task)
                raise
            finally:
                outbox.waiter = None
        event = buffer.popleft()
        if isinstance(event, TERMINAL_EVENTS):
            self._done = True
            await asyncio.wait((task,))
        return event

    async def _stop(self, task: asyncio.Task[None]) -> None:
        self._done = True
        if not task.done():
            task.cancel()
        await asyncio.wait((task,))

    async def aclose(self) -> None:
        """Stop the run if it is still going and wait until its task has ended."""
        if self._task is not None:
            await self._stop(self._task)
        self._done = True

    async def __aenter__(self) -> AgentRun:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
