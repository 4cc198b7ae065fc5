"""A worker told to stop (``SIGTERM``) drains before it goes: a deploy loses no answer.

On ``SIGTERM`` the worker keeps listening, and from that moment answers ``/readyz`` with 503
(a balancer that probes it takes it out of rotation) and every request for a new run with
503 and ``Retry-After`` in that protocol's error shape (:class:`~agentstream.errors.Draining`;
the answer closes its connection, so the retry reaches another worker). Its runs go on to
their end and their clients read them to the end, for up to ``AGENTSTREAM_DRAIN_SECONDS``
(30); then what is left is given up (:meth:`~agentstream.runs.Runner.drain`): handed over to
another worker with Redis, else stopped and stored as interrupted with its partial answer;
and the streams following other workers' runs are ended, for their clients to follow those
runs elsewhere. Only then does the server itself stop: it stops listening, ends its idle
connections, waits for the others and shuts the app down, as it does on any ``SIGTERM``.

Why the signal, and why here. Uvicorn handles ``SIGTERM`` itself, and its graceful shutdown
stops accepting connections first: a balancer's probe would meet a refused connection rather
than a 503, a client's retry would find nothing listening on a one-worker host, and its
``timeout_graceful_shutdown`` then cuts the streams that have not ended. So the app takes the
signal over while it runs, from its lifespan (the one code path shared by ``agentstream
serve``, its ``--workers N`` processes and ``uvicorn myapp:app``), and hands it back to the
server once it has drained: the server's own handler is called as if the signal had just
arrived. A second ``SIGTERM`` while draining goes to the server at once (stop now). Ctrl+C
(``SIGINT``) is left to the server: a person at a terminal stops at once.

Signal handlers belong to a process's main thread: an app served from another thread (tests
run apps in threads) leaves the signal alone, as uvicorn does; so does an app whose server
left ``SIGTERM`` to the default action, which has no handler to hand back to.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
import time
from collections.abc import AsyncIterator
from types import FrameType
from typing import Any

from agentstream.server.state import ServerContext

__all__ = ["draining_on_sigterm"]

log = logging.getLogger("agentstream.drain")


@contextlib.asynccontextmanager
async def draining_on_sigterm(server: ServerContext, within: float) -> AsyncIterator[None]:
    """While inside, ``SIGTERM`` drains the worker (:meth:`ServerContext.drain
    <agentstream.server.state.ServerContext.drain>`, for at most ``within`` seconds), then
    passes the signal on to the handler that was there before (the server's). Entered in
    the app's lifespan, on the server's event loop."""
    runner = server.runner
    previous: Any = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield
        return
    loop = asyncio.get_running_loop()
    draining: asyncio.Task[None] | None = None
    signalled = False

    async def drain_then_stop() -> None:
        began = time.monotonic()
        log.warning(
            "SIGTERM: draining (%d runs in progress; new runs are refused, for up to %gs)",
            runner.running,
            within,
        )
        try:
            await server.drain(within)
            log.warning("drained in %.1fs; stopping", time.monotonic() - began)
        finally:
            previous(signal.SIGTERM, None)

    def start() -> None:
        nonlocal draining
        draining = loop.create_task(drain_then_stop(), name="agentstream drain")

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        nonlocal signalled
        if signalled:  # a second one: the server stops now
            previous(signum, frame)
            return
        signalled = True
        # At once, in the loop's own thread between two of its steps: no new run is taken
        # from here on, before the drain's task gets to run.
        runner.draining = True
        loop.call_soon_threadsafe(start)

    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGTERM) is on_sigterm:
            signal.signal(signal.SIGTERM, previous)
        if draining is not None and not draining.done():
            draining.cancel()  # the server stopped another way meanwhile (a second signal)
            await asyncio.gather(draining, return_exceptions=True)
