"""Run events and cancel signals that reach every worker: what a broker is.

One process keeps runs in memory (:class:`~agentstream.runs.local_broker.LocalBroker`).
Several workers or hosts share Redis (:class:`~agentstream.runs.redis_broker.RedisBroker`):
each run's canonical events go to a Redis stream, so a client that reconnects to *any* worker
can replay the run from the last event it saw, and a stop request that lands on another
worker is published on a channel that the worker running the run listens to.

Publishing is off the per-event path: :meth:`RunBroker.publish` never waits.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from agentstream.events import RunEvent
from agentstream.principal import Principal

__all__ = [
    "INTERRUPTED_KIND",
    "WORKER_LOST_MESSAGE",
    "CancelHandler",
    "Claim",
    "Handoff",
    "HandsOver",
    "LogEnd",
    "OrphanHandler",
    "RunBroker",
    "TakeoverHandler",
    "conversation_key",
]

CancelHandler = Callable[[str, Principal, str], bool]
"""Called with (run_id, requester, reason); cancels the run if it runs here and the requester
owns it, and says whether it did."""

OrphanHandler = Callable[[str], None]
"""Called with the id of a run whose worker is gone (its lease lapsed before its last event)
and that nobody took over: the runner records it as interrupted in the store."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Claim:
    """A run whose worker is gone, claimed by this worker (and by no other) to go on with:
    its lease is this worker's now. ``request`` is what the run was opened with
    (:meth:`RunBroker.open_run`), ``events`` its log so far, ``takeovers`` how many times it
    has been claimed (a run that kills every worker it lands on is not taken over forever)."""

    run_id: str
    request: str | None
    reader: Mapping[str, Any] | None
    events: Sequence[RunEvent]
    takeovers: int
    give_up: bool = False
    """Taken over too often already: the run ends as interrupted rather than again."""
    cancel: str | None = None
    """Why a stop request reached the run while it had no worker (``None``: none did)."""


TakeoverHandler = Callable[[Claim], Awaitable[None]]
"""Called with each run this worker claimed: the runner continues it, or ends it as
interrupted when it cannot (see :mod:`agentstream.runs.takeover`)."""

WORKER_LOST_MESSAGE = "The server running this answer stopped before it finished."
"""Why a run whose worker died ended: its followers' ``run_failed`` and the store's mark; also
why a run a stopping worker could neither finish nor hand over ended."""

INTERRUPTED_KIND = "interrupted"
"""The ``run_failed`` kind of a run its worker stopped before it ended (the run is stored as
``interrupted``, not ``failed``)."""


@dataclass(frozen=True, slots=True)
class LogEnd:
    """Where a run's log stands: the ``seq`` of its last event (-1: none yet) and whether that
    event ends the run."""

    last: int
    done: bool


def conversation_key(principal: Principal, conversation_id: str) -> str:
    """A conversation's key: its owner's and its id (ids are only unique per owner)."""
    return f"{principal.owner}\x1f{conversation_id}"


class RunBroker(Protocol):
    async def start(
        self,
        on_cancel: CancelHandler,
        on_orphan: OrphanHandler | None = None,
        on_takeover: TakeoverHandler | None = None,
    ) -> None:
        """Begin listening for cancel requests from other workers. ``on_orphan`` hears of
        runs found without a live worker that nobody took over (a follower or a stop
        request that finds the worker's lease lapsed); ``on_takeover`` is given the runs
        of workers that died that this worker claimed (a broker whose runs cannot outlive
        their process never calls it)."""
        ...

    async def aclose(self) -> None: ...

    async def open_run(
        self,
        run_id: str,
        owner: Principal,
        reader: Mapping[str, Any] | None = None,
        *,
        request: str | None = None,
    ) -> None:
        """Open a run's log. ``reader`` is what a reader on any worker needs to continue the
        run in the protocol that started it (JSON-able; the dialect's name and options);
        ``request`` what a worker needs to go on with the run if this one dies
        (:func:`~agentstream.runs.takeover.request_record`; ``None``: it cannot be). A run
        this worker claimed (:class:`Claim`) is opened again, with the log it has."""
        ...

    async def hold(self, run_id: str, owner: Principal, conversation_id: str) -> str | None:
        """Make ``run_id`` the owner's conversation's run in progress (its
        :meth:`active_run`) unless another run holds it, atomically across workers: ``None``
        when it holds it now, else the holder's id. A holder whose worker died lets go
        within a lease (see :mod:`agentstream.runs.turns`)."""
        ...

    async def release(self, run_id: str) -> None:
        """Let go of the conversation ``run_id`` holds, if any (again is nothing). A run lets
        go once its end is stored, before its last event is published; closing its log
        lets go too."""
        ...

    async def freed(self, owner: Principal, conversation_id: str, within: float) -> None:
        """Wait until the conversation's run in progress may have let go, at most
        ``within`` seconds (then :meth:`hold` tells)."""
        ...

    async def alive(self, run_ids: Sequence[str]) -> Sequence[str]:
        """Those of ``run_ids`` that a live worker runs or holds open (waiting for their
        turn), as far as this broker can tell: this process's, and with Redis those with a
        lease."""
        ...

    async def active_run(self, conversation_id: str, requester: Principal) -> str | None:
        """The run of the requester's conversation that has not ended yet, if any (a client
        that reloads resumes it without knowing its id)."""
        ...

    async def reader_of(self, run_id: str, requester: Principal) -> Mapping[str, Any] | None:
        """The ``reader`` the run was opened with. Raises
        :class:`~agentstream.errors.RunNotFound` for runs the requester does not own (or
        unknown, or expired)."""
        ...

    def publish(self, event: RunEvent) -> None:
        """Queue an event of an open run; never blocks."""
        ...

    async def flushed(self) -> None:
        """Until the events published so far are where every worker reads them (at once
        for a broker of one process). Awaited before a round's tools start."""
        ...

    def has_after(self, run_id: str, seq: int) -> bool:
        """Whether this process already holds an event of the run after ``seq`` (a reader
        behind the log batches its writes). Cheap: on every event's way out."""
        ...

    async def close_run(self, run_id: str) -> None:
        """Flush the run's events; called once its terminal event was published."""
        ...

    def replay(
        self,
        run_id: str,
        requester: Principal,
        after: int = -1,
        *,
        handoff: Handoff | None = None,
    ) -> AsyncGenerator[RunEvent, None]:
        """The run's events with ``seq > after``, then live ones until the terminal event.
        Raises :class:`~agentstream.errors.RunNotFound` (on first iteration) for runs the
        requester does not own.
        With a ``handoff``, live events of a run of this process may instead be handed to
        the reader as they are published (see :class:`Handoff`)."""
        ...

    async def request_cancel(self, run_id: str, requester: Principal, reason: str) -> bool:
        """Ask whichever worker runs ``run_id`` to cancel it."""
        ...

    async def end_of(self, run_id: str, requester: Principal) -> LogEnd:
        """Where the run's log stands now, without waiting for its next event. Raises
        :class:`~agentstream.errors.RunNotFound` for runs the requester does not own."""
        ...

    async def abandoned(self, running: Callable[[], Awaitable[Sequence[str]]]) -> Sequence[str]:
        """Those of the runs ``running()`` lists (the store's runs still ``running``) that no
        live worker holds, as far as this broker can prove; may take a lease period to be
        sure (see :class:`~agentstream.runs.redis_broker.RedisBroker`). A broker that can
        prove nothing does not call it."""
        ...

    def reading(self) -> int:
        """How many readers in this process are reading runs of this process (a stopping
        worker waits for them to read to the end, see :meth:`Runner.drain
        <agentstream.runs.Runner.drain>`)."""
        ...


@runtime_checkable
class HandsOver(Protocol):
    """A broker whose runs outlive their worker's process: a stopping worker gives up the
    runs it could not finish, and another worker takes them over (Redis:
    :class:`~agentstream.runs.redis_broker.RedisBroker`). A broker only one process reads
    (:class:`~agentstream.runs.local_broker.LocalBroker`) cannot: its runs are stopped and
    stored as interrupted instead."""

    async def hand_over(self, run_ids: Sequence[str]) -> None:
        """Give up ``run_ids``, runs of this worker, *without ending them*: their tasks have
        stopped (nothing more of theirs is published), what they published so far stays in
        their logs, no terminal event is written and the store still has them ``running``.
        Their leases go at once, so they read as lapsed to every worker (the way a dead
        worker's do, a lease period sooner), and this process's readers of them end where
        the log stands (their clients reconnect, with ``Last-Event-ID``, to any worker)."""
        ...


class Handoff:
    """Lets a run's publisher hand live events straight to a reader that has caught up.

    A reader normally waits for the next event and is woken to read it from the log: one
    task switch per event, on top of the run's own. A reader that sets ``take`` is instead
    given each new event in the publisher's task, as it is published. ``take(event)`` must
    not block; it returns ``True`` when it took the event (the replay then does not yield
    it), ``False`` when it cannot now (a write still in progress, the last event): the
    reader is woken and reads that event and the next ones from the log as usual, until it
    has caught up again."""

    __slots__ = ("take",)

    def __init__(self) -> None:
        self.take: Callable[[RunEvent], bool] | None = None
