"""Starting a coroutine in the caller's task, and finishing it in a task only if it waits.

A stream's write is a coroutine (the ASGI ``send``) that nearly always completes without
waiting: the server writes the bytes to its transport and returns. Only a client slow to read
makes it wait (the server's flow control). Creating a task for every write would cost a task
and a loop iteration per streamed event; awaiting it would need a task that is awake anyway.
:func:`start_eagerly` runs the coroutine at once instead, as Python 3.12's eager tasks do,
and hands it to a task only when it actually suspends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Generator
from typing import Any

__all__ = ["start_eagerly"]


def start_eagerly(awaitable: Awaitable[None]) -> asyncio.Task[None] | None:
    """Run ``awaitable`` (a coroutine) until it first waits. ``None`` when it finished without
    waiting (an exception it raised propagates from here); otherwise a task that runs the
    rest of it."""
    steps = awaitable.__await__()
    try:
        waiting_on = steps.send(None)
    except StopIteration:
        return None
    task = asyncio.get_running_loop().create_task(_rest(steps, waiting_on))
    # A task cancelled before its first step never runs ``_rest``: the coroutine is closed
    # then, so its cleanup runs all the same (closing a finished one does nothing).
    task.add_done_callback(lambda _: steps.close())
    return task


async def _rest(coroutine: Generator[Any, None, None], waiting_on: Any) -> None:
    """The rest of a coroutine started outside any task: what it waits on is passed to this
    task, which resumes it when that is done; a cancellation of this task is thrown into it.
    Once it is started, this is the only way it is resumed, as a task would."""
    try:
        while True:
            try:
                await _Suspend(waiting_on)
            except BaseException as exc:  # this task was cancelled: the coroutine is told
                waiting_on = coroutine.throw(exc)
            else:
                waiting_on = coroutine.send(None)
    except StopIteration:
        return


class _Suspend:
    """Yields to the task what the coroutine yielded (a future it waits on, or ``None`` to
    let others run), exactly as the coroutine would have to its own task."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, None, None]:
        yield self.value
