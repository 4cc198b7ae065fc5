"""A run in progress: the task that drives the loop, and the events it hands the consumer.

The loop runs in a task of its own and the consumer reads events from a queue. That split is
what makes cancellation clean: a cancel token cancels the loop's task (never the consumer's),
so the loop can close the provider stream, cancel its tools and still deliver
``run_cancelled``; and if the consumer's own task is cancelled, the loop's task is cancelled
and awaited before the cancellation propagates, so no task outlives the run.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING

from agentstream.agent.inputs import CancelToken, RunInput
from agentstream.agent.loop import Loop
from agentstream.events import TERMINAL_EVENTS, RunEvent
from agentstream.messages import Message
from agentstream.providers.base import Provider

if TYPE_CHECKING:
    from agentstream.agent.agent import Agent

__all__ = ["AgentRun"]

_TERMINAL_TYPES = frozenset(TERMINAL_EVENTS)


class AgentRun:
    """Iterate it (once) for the run's events; ``new_messages`` is the history it added
    after the user message, including a partial turn if it was interrupted."""

    def __init__(self, agent: Agent, run_input: RunInput, provider: Provider) -> None:
        if run_input.cancel is None:
            run_input = replace(run_input, cancel=CancelToken())
        assert run_input.cancel is not None
        self.cancel_token: CancelToken = run_input.cancel
        self._buffer: deque[RunEvent] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._loop = Loop(agent, run_input, provider, self._put)
        self._task: asyncio.Task[None] | None = None
        self._done = False
        self._sink: Callable[[RunEvent], None] | None = None

    @property
    def run_id(self) -> str:
        return self._loop.run_id

    @property
    def new_messages(self) -> list[Message]:
        return self._loop.new_messages

    @property
    def ready(self) -> bool:
        """Events are waiting: the next ones can be read without waiting for the loop."""
        return bool(self._buffer)

    def cancel(self, reason: str = "cancelled") -> None:
        """Stop the run; its last event will be ``run_cancelled``."""
        self.cancel_token.cancel(reason)

    def forward(self, sink: Callable[[RunEvent], None]) -> None:
        """Hand every event but the last to ``sink`` in the loop's own task, as it is made;
        iterating then yields only the terminal event.

        For a consumer that does nothing asynchronous with most events (the server's run
        task appends them to the run's log): a delta then reaches the log without waking
        the consumer's task, one task switch fewer per event. ``sink`` must not block;
        call this before iterating."""
        if self._task is not None or self._buffer:
            raise RuntimeError("forward() must be called before the run starts")
        self._sink = sink

    def _put(self, event: RunEvent) -> None:
        sink = self._sink
        if sink is not None and type(event) not in _TERMINAL_TYPES:
            sink(event)
            return
        self._buffer.append(event)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _wake(self, *_: object) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _start(self) -> asyncio.Task[None]:
        task = asyncio.create_task(self._loop.execute(), name=f"agentstream-run-{self.run_id}")
        task.add_done_callback(self._wake)
        self._task = task
        self.cancel_token.on_cancel(lambda _reason: task.cancel())
        return task

    def __aiter__(self) -> AgentRun:
        return self

    async def __anext__(self) -> RunEvent:
        if self._done:
            raise StopAsyncIteration
        task = self._task or self._start()
        buffer = self._buffer
        while not buffer:
            if task.done():
                # The loop's task ended without a terminal event: it was cancelled from
                # outside or crashed. Surface that instead of waiting forever.
                self._done = True
                if task.cancelled():
                    if self.cancel_token.reason is not None:  # cancelled before it ran
                        return self._loop.cancelled(self.cancel_token.reason)
                    raise asyncio.CancelledError
                task.result()
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            except asyncio.CancelledError:
                await self._stop(task)
                raise
            finally:
                self._waiter = None
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
