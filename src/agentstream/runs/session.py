"""One run in progress: the task that drives the agent loop, stores what it produces and
appends every canonical event to the broker's log, and the handle its readers and its stop
button hold.

A :class:`RunSession` knows its request, its loop and the few things it needs of whoever owns
it (:class:`SessionOwner`: the agent, store, hooks and broker, a place to keep its store
writes until they finish, a title writer); the :class:`~agentstream.runs.runner.Runner`
is that owner. The runner decides whether a request may run and prepares it; the session
runs it, and every run ends in the store however it ends: completed, failed, cancelled, or
cut short by a shutdown (stored as interrupted). The one exception is a run its stopping worker
hands over (:meth:`RunSession.leave`): it stops here without ending, for another worker to
go on with.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from agentstream.agent import Agent, AgentRun, RunInput
from agentstream.agent.summaries import ContextSummary
from agentstream.conversation import ConversationDetail
from agentstream.events import (
    AnswerShaped,
    ContextSummarized,
    ConversationSaved,
    RunCancelled,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunUsage,
    StateDelta,
    TurnStarted,
)
from agentstream.messages import AssistantMessage, Message
from agentstream.principal import Principal
from agentstream.providers.profiles import Prices
from agentstream.runs.broker import INTERRUPTED_KIND, WORKER_LOST_MESSAGE, Handoff, RunBroker
from agentstream.runs.hooks import RunHooks
from agentstream.runs.limits import Admission, Limiter
from agentstream.runs.observers import RunObserver, RunWatch, tell_ended, watching
from agentstream.runs.request import RunRequest
from agentstream.runs.store import ConversationStore, KeptSummaries, RunStatus, SharedStates

__all__ = ["DISCONNECT_GRACE_SECONDS", "RunSession", "SessionOwner", "complete_prefix"]

log = logging.getLogger("agentstream.runs")

T = TypeVar("T")

DISCONNECT_GRACE_SECONDS = 1.0
"""How long a run cancelled because its client left (or the server is stopping) may take to
wind down through its cancel token before its task, and the stream that served it, are
cancelled outright."""


class SessionOwner(Protocol):
    """What a run session needs of whoever runs it (the :class:`~agentstream.runs.Runner`)."""

    agent: Agent
    store: ConversationStore | None
    hooks: RunHooks
    broker: RunBroker
    observers: Sequence[RunObserver]
    """What watches each run (:mod:`agentstream.runs.observers`)."""
    limiter: Limiter | None
    """What counts each run against its user's and tenant's limits, if any."""

    def keep(self, write: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run a store write in a task the owner waits for when it closes (a write is what
        a run leaves behind: it is finished, never cancelled)."""
        ...

    def retitle(self, principal: Principal, conversation_id: str, first_message: str) -> None:
        """The conversation's first run has answered: a better title may be written."""
        ...

    def ended(self, run_id: str) -> None:
        """The run's task has ended: the owner lets go of the session."""
        ...


def complete_prefix(messages: list[Message]) -> int:
    """The length of the longest prefix of ``messages`` that a vendor accepts as history:
    it does not end in an assistant turn whose tool calls are still waiting for results."""
    upto = len(messages)
    while upto:
        last = messages[upto - 1]
        if not (isinstance(last, AssistantMessage) and last.tool_calls):
            break
        upto -= 1
    return upto


class RunSession:
    """A run in progress. :meth:`start` runs it in a task of its own; readers follow it with
    :meth:`events`; :meth:`cancel` stops it and :meth:`abandon` stops it for a client that
    left. ``saved`` counts the run's first messages the store already holds (the answers a
    run starts from are committed with its start)."""

    def __init__(
        self,
        owner: SessionOwner,
        request: RunRequest,
        run_input: RunInput,
        *,
        first_run: bool = False,
        saved: int = 0,
    ) -> None:
        self._owner = owner
        self.request = request
        self.input = run_input
        self.first_run = first_run
        self.run: AgentRun = owner.agent.run(run_input)
        self.admission: Admission | None = None
        """The run's place in its caller's limits (:mod:`agentstream.runs.limits`), settled
        when it ends; the runner sets it before the run starts."""
        self.began = time.perf_counter()
        """When its request began (``time.perf_counter()``; the runner sets it to the start
        of :meth:`~agentstream.runs.Runner.begin`), for the time to its first event."""
        self.status: RunStatus | None = None
        """How the run ended, once it has."""
        self.carried: dict[str, Any] = {}
        """What the run carries to its readers on other workers, kept beside its log with
        what the protocol needs (``RunRequest.reader``): its watches add to it before the
        run opens (its trace context, see :mod:`agentstream.telemetry.tracing`)."""
        self.exchanges: Sequence[str] = ()
        """The ids of the user messages of the run's history, in order, when its store keeps
        the summaries the run writes (see :class:`~agentstream.runs.store.KeptSummaries`)."""
        self._watches: list[RunWatch] = []
        self._billed: RunUsage | None = None
        self._saved = saved
        self._finished = False
        self._leaving = False
        """Handed over (:meth:`leave`): it stops without ending."""
        self._last_write: asyncio.Task[Any] | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def conversation_id(self) -> str | None:
        return self.input.conversation_id

    @property
    def agent_name(self) -> str:
        return self._owner.agent.name

    @property
    def model(self) -> str:
        """The model the run asked for (``provider:model``)."""
        return self.input.model or self._owner.agent.model_id

    @property
    def protocol(self) -> str | None:
        """The name of the protocol the run was started in (``None``: from code)."""
        reader = self.request.reader
        name = reader.get("dialect") if reader else None
        return name if isinstance(name, str) else None

    @property
    def prices(self) -> Prices | None:
        """The prices of the run's model (:mod:`agentstream.providers.profiles`)."""
        return self._owner.agent.profile(self.model).prices

    @property
    def usage(self) -> RunUsage:
        """What the run used so far (all of it once it has ended), with its model and cost
        (``cost_usd`` is ``None`` for a model without a price)."""
        if self._billed is not None:
            return self._billed
        spent = self.run.usage
        prices = self.prices
        cost = None if prices is None else prices.cost(spent.usage)
        billed = replace(spent, model=self.model, cost_usd=cost)
        if self.status is not None:
            self._billed = billed  # the run has ended: its usage no longer changes
        return billed

    def start(self, turn: Awaitable[RunInput] | None = None) -> asyncio.Task[None]:
        """Run it, in a task of its own (which is also the loop's: see
        :meth:`~agentstream.agent.AgentRun.drive`). ``turn``: the run waits for its
        conversation's answer in progress first, and runs with the input it gives (its
        history read again; see :mod:`agentstream.runs.turns`)."""
        assert self._task is None, "a run session starts once"
        self._task = asyncio.create_task(self._drive(turn), name=f"agentstream run {self.run_id}")
        return self._task

    def cancel(self, reason: str = "cancelled") -> None:
        """Stop the run through its cancel token: the loop closes the provider stream,
        cancels running tools, and the partial answer is stored as cancelled."""
        self.run.cancel(reason)

    def abandon(self, reason: str) -> None:
        """Cancel the run for a client that left (or a stopping server): as :meth:`cancel`,
        and if the run has not ended :data:`DISCONNECT_GRACE_SECONDS` later, its task is
        cancelled outright (what it produced is still stored)."""
        self.run.cancel(reason)
        self._cancel_later()

    def interrupt(self) -> None:
        """Stop the run because its worker is stopping and cannot hand it over: as
        :meth:`abandon`, but it ends with ``run_failed`` (kind ``interrupted``) and is stored
        as ``interrupted``, its partial answer kept."""
        self.run.fail(INTERRUPTED_KIND, WORKER_LOST_MESSAGE)
        self._cancel_later()

    def _cancel_later(self) -> None:
        """Cancel the run's task outright if it has not ended
        :data:`DISCONNECT_GRACE_SECONDS` from now."""
        task = self._task
        if task is not None and not task.done():
            handle = asyncio.get_running_loop().call_later(DISCONNECT_GRACE_SECONDS, task.cancel)
            task.add_done_callback(lambda _: handle.cancel())

    @property
    def ending(self) -> bool:
        """The run is storing how it ended (or has): too late to hand it over."""
        return self._finished

    def leave(self) -> None:
        """Stop the run here *without ending it*, for another worker to go on with (its
        worker is stopping, see :meth:`~agentstream.runs.Runner.drain`): its task is
        cancelled, and stores and publishes nothing more; the rounds it completed are in
        the store already, and the run stays ``running`` there. The runner then gives it up
        to the broker (:class:`~agentstream.runs.broker.HandsOver`)."""
        self._leaving = True
        if self._task is not None:
            self._task.cancel()

    @property
    def finished(self) -> bool:
        """The run's task has ended (its events are all in the broker's log)."""
        return self._task is not None and self._task.done()

    async def wait(self) -> None:
        """Until the run's task has ended."""
        if self._task is not None:
            await asyncio.wait((self._task,))

    def waiting(self, seq: int) -> bool:
        """Events after ``seq`` are already in the run's log: a reader at ``seq`` may batch
        its writes."""
        return self._owner.broker.has_after(self.run_id, seq)

    def events(
        self, after: int = -1, *, handoff: Handoff | None = None
    ) -> AsyncGenerator[RunEvent, None]:
        """The run's canonical events with ``seq > after``, from the broker's log: those so
        far, then new ones until the run ends (or handed to ``handoff`` as they are made,
        see :class:`~agentstream.runs.broker.Handoff`). Closing it stops nothing but this
        reader."""
        return self._owner.broker.replay(
            self.run_id, self.request.principal, after, handoff=handoff
        )

    async def _drive(self, turn: Awaitable[RunInput] | None) -> None:
        """The run itself, in a task the owner keeps, which is also the loop's task. The
        loop's events go to the broker's log as they are made (and to the run's watches,
        if it has any); only the last event comes back here, to be shaped and stored before
        it is appended, once the run has let go of its conversation."""
        owner = self._owner
        broker = owner.broker
        watches = self._watches
        forward: Callable[[RunEvent], None] = self._forward
        publish: Callable[[RunEvent], None] = broker.publish
        if watches:
            forward, publish = watching(forward, watches), watching(publish, watches)
        try:
            if turn is not None:
                await self._wait(turn)
            event = await self.run.drive(forward)
            if isinstance(event, RunCompleted):
                before = await self._complete(event)
                for added in before:
                    publish(added)
                event = replace(event, seq=event.seq + len(before))
            elif isinstance(event, RunFailed):
                status: RunStatus = "interrupted" if event.kind == INTERRUPTED_KIND else "failed"
                await self._finish(status, error=event.message)
            elif isinstance(event, RunCancelled):
                await self._finish("cancelled", error=event.reason)
            # Before the last event: a client that asks again as soon as it has the answer
            # finds the run no longer counted as going, and its conversation free.
            await asyncio.shield(self._settle())
            await asyncio.shield(broker.release(self.run_id))
            publish(event)
        except Exception:
            log.exception("run %s failed outside the agent loop", self.run_id)
        finally:
            if self._leaving:
                # Handed over: nothing is stored or published here (the runner gives it to
                # the broker); to this worker's watches it ended interrupted.
                self.status = self.status or "interrupted"
            elif not self._finished:
                # The task was cancelled (a client that did not let go in time, a stopping
                # server) or the loop crashed: keep what the run produced (the write itself
                # survives a further cancellation).
                stopped = self.run.cancel_token.failure
                if stopped is not None and stopped[0] == INTERRUPTED_KIND:
                    await self._finish("interrupted", error=WORKER_LOST_MESSAGE)
                else:
                    await self._finish("cancelled", error="interrupted")
            if not self._leaving:
                await asyncio.shield(broker.close_run(self.run_id))
            owner.keep(self._settle())
            tell_ended(self, watches)
            owner.ended(self.run_id)

    async def _wait(self, turn: Awaitable[RunInput]) -> None:
        """Wait for the run's turn; it then runs with the input ``turn`` gives (the same
        cancel token, so a stop while it waited still stops it)."""
        run_input = await turn
        if run_input is not self.input:
            self.input = run_input
            self.run = self._owner.agent.run(run_input)

    async def _settle(self) -> None:
        """Count what the run used against its limits and free its place among the runs
        going (once, however often it is called)."""
        admission, limiter = self.admission, self._owner.limiter
        if admission is None or limiter is None or admission.settled:
            return
        try:
            await limiter.settle(admission, self.usage)
        except Exception:
            log.exception("could not count run %s against its limits", self.run_id)

    def watch(self) -> None:
        """Give the run its watches: its owner's observers', and its budget's. Called as
        the run opens, in its request's context, before :meth:`start`."""
        found = [w for o in self._owner.observers if (w := o.watch(self)) is not None]
        budget = self.admission.watch(self) if self.admission is not None else None
        if budget is not None:
            found.append(budget)
        self._watches = found

    def unwatch(self) -> None:
        """The run will not start after all (its start failed): its watches hear it ended."""
        self.status = self.status or "failed"
        tell_ended(self, self._watches)
        self._watches = []

    def _forward(self, event: RunEvent) -> None:
        """Every event but the last, in the loop's task: a new turn first saves the finished
        round-trips (in a write the owner keeps), then the event goes to the log."""
        if type(event) is TurnStarted:
            self._save_progress()  # the tool round-trip (or the answers) before it
        elif type(event) is ContextSummarized:
            self._save_summary(event)
        elif type(event) is StateDelta:
            self._save_state(event)
        self._owner.broker.publish(event)

    def _save_summary(self, event: ContextSummarized) -> None:
        """Keep the summary the run wrote before the first exchange it does not cover, so
        the next runs read it and what follows it."""
        store, conversation_id = self._owner.store, self.conversation_id
        if not isinstance(store, KeptSummaries) or conversation_id is None:
            return
        if event.covered >= len(self.exchanges):
            return
        before_id = self.exchanges[event.covered]
        summary = ContextSummary(text=event.summary, exchanges=event.exchanges)
        principal, run_id = self.request.principal, self.run_id

        async def write() -> None:
            try:
                await store.save_summary(
                    principal,
                    conversation_id=conversation_id,
                    run_id=run_id,
                    before_id=before_id,
                    summary=summary,
                )
            except Exception:
                log.exception("could not keep the summary of run %s", run_id)

        self._persist_soon(write)

    async def _complete(self, event: RunCompleted) -> list[RunEvent]:
        """Shape the answer and store it; the events that go before ``run_completed`` (the
        run's last event, renumbered after them)."""
        owner, seq = self._owner, event.seq
        extra: list[RunEvent] = []
        shaped = owner.hooks.shape(owner.agent, self.request, self.input, event)
        if shaped is not None:
            shaped = replace(shaped, seq=seq)
            extra.append(shaped)
        conversation = await self._finish("completed", completed=event, shaped=shaped)
        if conversation is not None:
            extra.append(
                ConversationSaved(
                    run_id=self.run_id, seq=seq + len(extra), conversation=conversation
                )
            )
        if self.first_run and self.conversation_id is not None:
            owner.retitle(self.request.principal, self.conversation_id, self.request.message)
        return extra

    def _save_progress(self) -> None:
        store, conversation_id = self._owner.store, self.conversation_id
        # Only up to a complete round-trip, so the store never holds an assistant tool call
        # without its results.
        upto = complete_prefix(self.run.new_messages)
        if store is None or conversation_id is None or upto <= self._saved:
            return
        messages, self._saved = self.run.new_messages[self._saved : upto], upto
        principal, run_id = self.request.principal, self.run_id

        async def write() -> None:
            try:
                await store.append_messages(
                    principal, run_id=run_id, conversation_id=conversation_id, messages=messages
                )
            except Exception:
                # The run goes on for its readers; the store's own failure is what to fix.
                log.exception("could not save the progress of run %s", run_id)

        self._persist_soon(write)

    def _save_state(self, event: StateDelta) -> None:
        """Keep a tool's change to the shared state with the conversation, in order with
        the run's other writes."""
        store, conversation_id = self._owner.store, self.conversation_id
        if not isinstance(store, SharedStates) or conversation_id is None:
            return
        principal, run_id, patch = self.request.principal, self.run_id, event.patch

        async def write() -> None:
            try:
                await store.change_state(principal, conversation_id, patch)
            except Exception:
                log.exception("could not save a state change of run %s", run_id)

        self._persist_soon(write)

    async def _finish(
        self,
        status: RunStatus,
        *,
        completed: RunCompleted | None = None,
        shaped: AnswerShaped | None = None,
        error: str | None = None,
    ) -> ConversationDetail | None:
        if self._finished:
            return None
        self._finished = True
        self.status = status
        store, conversation_id = self._owner.store, self.conversation_id
        if store is None or conversation_id is None:
            return None
        usage = self.usage
        principal, run_id = self.request.principal, self.run_id
        messages = self.run.new_messages[self._saved :]
        snapshot = self.request.protocol.conversation_snapshot

        async def write() -> ConversationDetail | None:
            try:
                return await store.finish_run(
                    principal,
                    run_id=run_id,
                    conversation_id=conversation_id,
                    messages=messages,
                    status=status,
                    completed=completed,
                    shaped=shaped,
                    error=error,
                    snapshot=snapshot,
                    usage=usage,
                )
            except Exception:
                log.exception("could not save the end of run %s", run_id)
                return None

        return await self._persist(write)

    async def _persist(self, write: Callable[[], Awaitable[T]]) -> T:
        """Run a store write in a task the owner keeps, after this run's earlier writes.

        A client that hangs up cancels the task streaming its answer, possibly in the middle
        of a write; the write goes on regardless (the owner waits for it on shutdown), so
        every run ends in the store however it is interrupted."""
        return await asyncio.shield(self._persist_soon(write))

    def _persist_soon(self, write: Callable[[], Awaitable[T]]) -> asyncio.Task[T]:
        """Start ``write`` after this run's earlier writes, in a task the owner keeps."""
        previous = self._last_write

        async def step() -> T:
            if previous is not None:
                await asyncio.wait([previous])
            return await write()

        task = self._owner.keep(step())
        self._last_write = task
        return task
