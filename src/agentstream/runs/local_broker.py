"""Runs kept in this process's memory: the broker of a single worker, and the in-process
log every worker keeps of its own runs (:class:`~agentstream.runs.redis_broker.RedisBroker`
wraps one). Without Redis, processes that share a database take turns in a conversation
through the store (:class:`~agentstream.runs.store.SharedTurns`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentstream.errors import RunNotFound
from agentstream.events import TERMINAL_EVENTS, RunEvent
from agentstream.principal import Principal
from agentstream.runs.broker import (
    CancelHandler,
    Handoff,
    LogEnd,
    OrphanHandler,
    TakeoverHandler,
    conversation_key,
)
from agentstream.runs.store import SharedTurns

__all__ = ["LocalBroker"]

log = logging.getLogger("agentstream.broker")

_SHARED_POLL_SECONDS = 0.25
"""How often a run waiting for a conversation another process holds asks the store again."""


@dataclass(slots=True, eq=False)
class _Cursor:
    position: int = 0
    """The run's next event for this reader, counting the ones let go."""
    after: int = -1
    """The reader skips events up to this ``seq``."""
    take: Callable[[RunEvent], bool] | None = None
    """Set while the reader has caught up and takes live events itself (:class:`Handoff`)."""
    arrived: asyncio.Future[None] | None = None
    """What the reader waits on meanwhile."""

    def stop_taking(self) -> None:
        """Back to reading the log: the reader is woken to."""
        self.take = None
        arrived = self.arrived
        if arrived is not None and not arrived.done():
            arrived.set_result(None)


@dataclass(slots=True)
class _LocalRun:
    owner: str
    events: list[RunEvent] = field(default_factory=list)
    dropped: int = 0
    """How many of the run's oldest events were let go (``LocalBroker.max_events``)."""
    waiting: list[asyncio.Future[None]] = field(default_factory=list)
    """One future per reader waiting for events, resolved when they arrive. Bare futures,
    not an ``asyncio.Event``: this is the per-delta path. One each: a reader whose task is
    cancelled cancels the future it awaits, which must not be another reader's."""
    done: bool = False
    reader: Mapping[str, Any] | None = None
    cursors: set[_Cursor] = field(default_factory=set)
    """Where each reader of the run is: events no reader has passed are never let go."""
    taking: list[_Cursor] = field(default_factory=list)
    """Readers that take live events as they are published (:class:`Handoff`)."""

    def hand_off(self, event: RunEvent) -> None:
        """Give ``event`` (just appended) to the readers that take live events; a reader that
        cannot take it now goes back to reading the log, and is woken to."""
        dropped = False
        for cursor in self.taking:
            take = cursor.take
            if take is not None and (event.seq <= cursor.after or take(event)):
                cursor.position += 1
                continue
            cursor.stop_taking()
            dropped = True
        if dropped:
            self.taking = [cursor for cursor in self.taking if cursor.take is not None]

    def wake(self) -> None:
        waiting = self.waiting
        if waiting:
            self.waiting = []
            for reader in waiting:
                if not reader.done():
                    reader.set_result(None)


class LocalBroker:
    """In-memory runs for a single process: the most recent ``keep`` finished runs, and of
    each run at most its latest ``max_events`` events (a reader that asks for older ones
    resumes from the oldest kept), so memory stays bounded however long the runs. A reader
    in the middle of a run never loses events: while one is behind, nothing it has not read
    is let go (a model can write faster than a client reads; a client that stops reading
    is let go by the server's write timeout).

    ``turns``: processes sharing this store's database take turns in a conversation too
    (without it, only this process's runs do)."""

    def __init__(
        self, keep: int = 64, max_events: int = 10_000, *, turns: SharedTurns | None = None
    ) -> None:
        self._runs: dict[str, _LocalRun] = {}
        self._finished: dict[str, None] = {}
        """The finished runs still kept, oldest first (a dict: ordered, O(1) removal), so
        making room costs nothing per run however many are open."""
        self._keep = keep
        self._max_events = max_events
        self._handlers: list[CancelHandler] = []
        self._active: dict[str, str] = {}
        """The run holding each conversation, by owner and conversation id (:meth:`hold`)."""
        self._held: dict[str, str] = {}
        """The conversation key each holding run holds."""
        self._freed: dict[str, list[asyncio.Future[None]]] = {}
        """Who waits for each conversation to be let go (:meth:`freed`)."""
        self._turns = turns
        self._shared: dict[str, tuple[Principal, str]] = {}
        """The conversation each run of this process holds in the store (``turns``)."""

    async def start(
        self,
        on_cancel: CancelHandler,
        on_orphan: OrphanHandler | None = None,
        on_takeover: TakeoverHandler | None = None,
    ) -> None:
        """Several runners (agents) in one process may share the broker. A run of this
        process cannot outlive its worker, so ``on_orphan`` and ``on_takeover`` are never
        called."""
        self._handlers.append(on_cancel)

    async def aclose(self) -> None:
        self._runs.clear()
        self._finished.clear()

    async def open_run(
        self,
        run_id: str,
        owner: Principal,
        reader: Mapping[str, Any] | None = None,
        *,
        request: str | None = None,
    ) -> None:
        self._finished.pop(run_id, None)
        self._runs[run_id] = _LocalRun(owner=owner.owner, reader=reader)
        # The runs that finished longest ago go; runs still going are kept (they are in
        # memory anyway), and one that runs for hours does not stop the others from expiring.
        finished, runs = self._finished, self._runs
        while len(runs) > self._keep and finished:
            oldest = next(iter(finished))
            del finished[oldest]
            runs.pop(oldest, None)

    async def hold(self, run_id: str, owner: Principal, conversation_id: str) -> str | None:
        """This process's hold, then the store's (``turns``). A holder in another process
        that has not stored its run yet is named ``""``."""
        held = self.hold_now(run_id, conversation_key(owner, conversation_id))
        if held is not None or self._turns is None:
            return held
        try:
            taken, holder = await self._turns.take_turn(owner, conversation_id)
        except Exception:
            log.exception("could not hold a conversation in the store: this process's hold only")
            return None
        if not taken:
            self.release_now(run_id)
            return holder or ""
        self._shared[run_id] = (owner, conversation_id)
        return None

    def hold_now(self, run_id: str, key: str) -> str | None:
        """:meth:`hold` by conversation key, without waiting (one step of the event loop
        decides, so two requests of this process never both hold)."""
        holder = self._active.get(key)
        if holder is not None and holder != run_id:
            return holder
        self.held_now(run_id, key)
        return None

    def held_now(self, run_id: str, key: str) -> None:
        """Record that ``run_id`` holds ``key``, as a shared backend decided (Redis)."""
        self._active[key] = run_id
        self._held[run_id] = key

    async def release(self, run_id: str) -> None:
        # The store's hold first: a run of this process that takes the conversation once the
        # hold here is gone must not lose the store's to this release (a record lock is the
        # process's, not the run's).
        shared = self._shared.pop(run_id, None)
        if shared is not None and self._turns is not None:
            try:
                await self._turns.give_back_turn(*shared)
            except Exception:
                log.exception("could not let go of a conversation in the store")
        self.release_now(run_id)

    async def alive(self, run_ids: Sequence[str]) -> Sequence[str]:
        """This process's runs that have not ended (another process's cannot be told)."""
        return [r for r in run_ids if (run := self._runs.get(r)) is not None and not run.done]

    def release_now(self, run_id: str) -> None:
        key = self._held.pop(run_id, None)
        if key is None or self._active.get(key) != run_id:
            return
        del self._active[key]
        for waiter in self._freed.pop(key, ()):
            if not waiter.done():
                waiter.set_result(None)

    async def freed(self, owner: Principal, conversation_id: str, within: float) -> None:
        key = conversation_key(owner, conversation_id)
        if key not in self._active:
            if self._turns is not None:  # held by another process, which tells no one
                await asyncio.sleep(min(within, _SHARED_POLL_SECONDS))
            return
        waiter = asyncio.get_running_loop().create_future()
        waiters = self._freed.setdefault(key, [])
        waiters.append(waiter)
        try:
            await asyncio.wait((waiter,), timeout=within)
        finally:
            if not waiter.done():
                waiter.cancel()
                waiters.remove(waiter)
                if not waiters and self._freed.get(key) is waiters:
                    del self._freed[key]

    def _finish(self, run_id: str, run: _LocalRun) -> None:
        run.done = True  # its hold, if any, goes with ``release`` (its run's, or close_run's)
        self._finished[run_id] = None
        for cursor in run.taking:
            cursor.stop_taking()
        run.taking = []
        run.wake()

    async def flushed(self) -> None:
        """At once: the log is this process's memory."""

    def publish(self, event: RunEvent) -> None:
        run = self._runs.get(event.run_id)
        if run is None:
            return  # never opened, or let go of (:meth:`let_go`)
        events = run.events
        events.append(event)
        if len(events) > self._max_events:
            self._trim(run)
        if run.taking:
            run.hand_off(event)
        if isinstance(event, TERMINAL_EVENTS) and not run.done:
            self._finish(event.run_id, run)
        else:
            run.wake()

    def _trim(self, run: _LocalRun) -> None:
        # Down to the latest half, so trimming costs O(1) per event.
        cut = len(run.events) - self._max_events // 2
        if run.cursors:
            cut = min(cut, min(cursor.position for cursor in run.cursors) - run.dropped)
        if cut > 0:
            del run.events[:cut]
            run.dropped += cut

    def has_after(self, run_id: str, seq: int) -> bool:
        run = self._runs.get(run_id)
        return run is not None and bool(run.events) and run.events[-1].seq > seq

    async def close_run(self, run_id: str) -> None:
        run = self._runs.get(run_id)
        if run is not None and not run.done:
            self._finish(run_id, run)
        await self.release(run_id)

    async def replay(
        self,
        run_id: str,
        requester: Principal,
        after: int = -1,
        *,
        handoff: Handoff | None = None,
    ) -> AsyncGenerator[RunEvent, None]:
        run = self._runs.get(run_id)
        if run is None or run.owner != requester.owner:
            raise RunNotFound(run_id)
        cursor = _Cursor(after=after)
        run.cursors.add(cursor)
        try:
            while True:
                cursor.position = max(cursor.position, run.dropped)
                pending = run.events[cursor.position - run.dropped :]
                if pending:
                    for event in pending:
                        cursor.position += 1
                        if event.seq > after:
                            yield event
                    continue  # more may have arrived while the reader was busy
                if run.done:
                    return
                arrived = asyncio.get_running_loop().create_future()
                if handoff is not None and handoff.take is not None:
                    # Caught up: live events go to the reader as they are published, and
                    # this wakes only when it cannot take one (or the run ends).
                    cursor.take, cursor.arrived = handoff.take, arrived
                    run.taking.append(cursor)
                else:
                    run.waiting.append(arrived)
                try:
                    await arrived
                finally:
                    if cursor.take is not None:  # cancelled while taking
                        cursor.take = None
                        run.taking = [c for c in run.taking if c is not cursor]
                    cursor.arrived = None
        finally:
            run.cursors.discard(cursor)
            if len(run.events) > self._max_events:
                self._trim(run)  # what this reader held back

    async def reader_of(self, run_id: str, requester: Principal) -> Mapping[str, Any] | None:
        run = self._runs.get(run_id)
        if run is None or run.owner != requester.owner:
            raise RunNotFound(run_id)
        return run.reader

    async def active_run(self, conversation_id: str, requester: Principal) -> str | None:
        return self._active.get(conversation_key(requester, conversation_id))

    async def request_cancel(self, run_id: str, requester: Principal, reason: str) -> bool:
        return any(handler(run_id, requester, reason) for handler in self._handlers)

    async def end_of(self, run_id: str, requester: Principal) -> LogEnd:
        run = self._runs.get(run_id)
        if run is None or run.owner != requester.owner:
            raise RunNotFound(run_id)
        return LogEnd(run.events[-1].seq if run.events else -1, run.done)

    async def abandoned(self, running: Callable[[], Awaitable[Sequence[str]]]) -> Sequence[str]:
        """None: without a shared lease this process cannot tell a run of a dead process
        from one of another process serving the same database."""
        return ()

    def has(self, run_id: str) -> bool:
        """Whether this process holds the run (it may have finished)."""
        return run_id in self._runs

    def reading(self) -> int:
        return sum(len(run.cursors) for run in self._runs.values())

    def let_go(self, run_id: str) -> None:
        """Forget a run that another process goes on with (its log is shared): its readers
        here end where they are, without its end, and what it would still publish is
        dropped. Its hold of a conversation stays where it is shared (Redis)."""
        run = self._runs.pop(run_id, None)
        self._finished.pop(run_id, None)
        key = self._held.pop(run_id, None)
        if key is not None and self._active.get(key) == run_id:
            del self._active[key]
        if run is not None and not run.done:
            run.done = True
            for cursor in run.taking:
                cursor.stop_taking()
            run.taking = []
            run.wake()
