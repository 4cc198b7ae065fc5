"""The run pipeline: store, response hooks and the agent loop around one request.

Every dialect goes through here. :meth:`Runner.begin` does the work that can still fail with
an HTTP status (an unknown conversation is a 404 before any byte is streamed; a conversation
still answering another message is a 409 under the ``reject`` policy, see
:mod:`agentstream.runs.turns`): it takes the conversation's turn, commits the user message,
loads history and prepares the prompt. It then starts the run as a
:class:`~agentstream.runs.session.RunSession` whose task the runner owns, not the response
(:mod:`agentstream.runs.session`: the run drives the agent loop, stores what it produces
however it ends, and appends every canonical event to the broker's log). Readers (the
response that started the run, a reconnect, a second tab) read that log with
:meth:`RunSession.events` or the broker's ``replay``; a reader that goes away stops nothing by
itself. Whether a client that hangs up cancels the run is the dialect's decision
(:meth:`RunSession.abandon`). The runner keeps the sessions in progress (a stop reaches them
by id), the store writes they leave behind, and the background work (model-written titles,
the start-up look for runs of workers that died), and waits for all of it when it closes.

A worker that is told to stop drains (:meth:`Runner.drain`): it takes no new runs
(:class:`~agentstream.errors.Draining`, a 503 with ``Retry-After``), lets those in progress
finish and their readers read them to the end, and gives up the rest when its time is up:
handed over to another worker when the broker's runs outlive this process
(:class:`~agentstream.runs.broker.HandsOver`: Redis), else stopped and stored as
``interrupted`` with their partial answers.
With a shared broker it also goes on with the runs of workers that died that its broker
claimed (:meth:`Runner.take_over`, :mod:`agentstream.runs.takeover`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from agentstream.agent import Agent, CancelToken, RunInput
from agentstream.attachments.limits import AttachmentLimits
from agentstream.attachments.owned import AttachmentKeeper, OwnedAttachments
from agentstream.attachments.types import Attachment
from agentstream.errors import Draining
from agentstream.events import RunFailed
from agentstream.ids import uuid7
from agentstream.messages import Message
from agentstream.pending import InvalidAnswers, check_answers, open_calls
from agentstream.principal import Principal
from agentstream.providers.profiles import cannot_read
from agentstream.runs.broker import WORKER_LOST_MESSAGE, Claim, HandsOver, RunBroker
from agentstream.runs.hooks import NoHooks, Preparation, RunHooks, ToolContributor
from agentstream.runs.limits import Admission, Limiter
from agentstream.runs.local_broker import LocalBroker
from agentstream.runs.observers import RunObserver
from agentstream.runs.reading import HistoryReading
from agentstream.runs.request import DoubleTexting, RefusedRequest, RunRequest
from agentstream.runs.session import RunSession
from agentstream.runs.store import (
    ConversationStore,
    InterruptedRuns,
    KeptSummaries,
    QueuedRuns,
    ResumableRuns,
    StartedRun,
)
from agentstream.runs.takeover import (
    CannotResume,
    request_from_record,
    request_record,
    resumption,
)
from agentstream.runs.titles import TitleWriter
from agentstream.runs.turns import take_turn, wait_turn

__all__ = ["RunSession", "Runner"]

log = logging.getLogger("agentstream.runs")

T = TypeVar("T")


class Runner:
    """Runs requests for one agent. Keeps the sessions in progress so a run can be cancelled
    from another request (a stop button) by its owner; it is their
    :class:`~agentstream.runs.session.SessionOwner`."""

    def __init__(
        self,
        agent: Agent,
        *,
        store: ConversationStore | None = None,
        hooks: RunHooks | None = None,
        broker: RunBroker | None = None,
        titles: TitleWriter | None = None,
        observers: Sequence[RunObserver] = (),
        limiter: Limiter | None = None,
        attachments: OwnedAttachments | None = None,
        attachment_limits: AttachmentLimits | None = None,
        double_texting: DoubleTexting = "reject",
        reading: HistoryReading | None = None,
    ) -> None:
        self.agent = agent
        self.reading = reading or HistoryReading()
        """How much of a conversation a run reads from the store (what its model can be
        sent, :mod:`agentstream.runs.reading`)."""
        self.double_texting: DoubleTexting = double_texting
        """What a message does while its conversation answers an earlier one, unless its
        request says (:mod:`agentstream.runs.turns`)."""
        self.store = store
        self.attachments = attachments
        """Where the attachments a request names are looked up (none: requests naming
        any are refused)."""
        self.attachment_limits = attachment_limits or AttachmentLimits()
        self.observers: Sequence[RunObserver] = tuple(observers)
        self.limiter = limiter
        self.hooks: RunHooks = hooks or NoHooks()
        if isinstance(self.hooks, ToolContributor):  # the chat pages' tools join now
            self.hooks.attach(agent)
        self.broker: RunBroker = broker if broker is not None else LocalBroker()
        self.titles = titles
        self._active: dict[str, RunSession] = {}
        self._runs: set[asyncio.Task[None]] = set()
        self._background: set[asyncio.Task[None]] = set()
        self._writes: set[asyncio.Task[Any]] = set()
        self._sweep: asyncio.Task[None] | None = None
        self._beginning = 0
        """Requests inside :meth:`begin` (a run that began before the drain may still be
        on its way to its task)."""
        self.draining = False
        """Set by :meth:`drain`: :meth:`begin` refuses new runs."""

    async def start(self) -> None:
        """Listen for cancel requests from other workers (with a shared broker), and mark
        ``interrupted`` the runs that workers which died left ``running`` in the store."""
        await self.broker.start(self.cancel, self._orphaned, self.take_over)
        if self.limiter is not None:
            await self.limiter.start()
        if isinstance(self.store, InterruptedRuns):
            self._sweep = asyncio.create_task(self._mark_abandoned(self.store))

    async def _mark_abandoned(self, store: InterruptedRuns) -> None:
        """Once, at start, in the background: the broker may take a lease period to prove
        a run has no worker (and proves nothing without Redis: see ``LocalBroker``)."""
        try:
            abandoned = await self.broker.abandoned(store.running_runs)
            marked = (
                await store.mark_interrupted(abandoned, WORKER_LOST_MESSAGE) if abandoned else 0
            )
            if marked:
                log.warning("marked %d runs of workers that died as interrupted", marked)
        except Exception:
            log.exception("could not look for runs of workers that died")

    async def marked_abandoned_runs(self) -> None:
        """Until the start-up look for runs of workers that died has ended."""
        if self._sweep is not None:
            await asyncio.wait((self._sweep,))

    def _orphaned(self, run_id: str) -> None:
        """The broker found run ``run_id`` without a live worker: record it interrupted."""
        store = self.store
        if isinstance(store, InterruptedRuns):
            self.keep(_mark_interrupted(store, run_id))

    async def settle(self) -> None:
        """Wait for the work started so far: runs, store writes, model-written titles
        (and what those start meanwhile)."""
        while True:
            owned = (*self._runs, *self._writes, *self._background)
            pending = [task for task in owned if not task.done()]
            if not pending:
                return
            await asyncio.gather(*pending, return_exceptions=True)

    async def aclose(self) -> None:
        for session in list(self._active.values()):
            session.abandon("server shutting down")
        for task in list(self._background):
            task.cancel()
        if self._sweep is not None:
            self._sweep.cancel()
            await asyncio.gather(self._sweep, return_exceptions=True)
        # Runs wind down (and store what they produced); store writes are finished, not
        # cancelled: they are what a run leaves behind.
        await asyncio.gather(*self._runs, return_exceptions=True)
        await asyncio.gather(*self._writes, *self._background, return_exceptions=True)
        await self.broker.aclose()
        if self.limiter is not None:
            await self.limiter.aclose()

    def runs_here(self, run_id: str) -> bool:
        """Whether ``run_id`` is a run of this runner that has not ended."""
        return run_id in self._active

    @property
    def running(self) -> int:
        """Runs whose task has not ended (for health figures and leak tests)."""
        return sum(not task.done() for task in self._runs)

    async def begin(self, request: RunRequest) -> RunSession:
        """Commit the user message and prepare the run. Raises
        :class:`~agentstream.runs.store.ConversationNotFound` (and
        :class:`~agentstream.pending.InvalidAnswers` for answers that do not fit the
        conversation's open tool calls, :class:`~agentstream.errors.LimitExceeded` for a
        caller over one of its limits, :class:`~agentstream.errors.ConversationBusy` for a
        conversation still answering under ``reject``) before anything is stored or
        streamed. Under ``interrupt`` it returns once the answer in progress has stopped;
        under ``queue`` at once, with a session that waits for its turn."""
        began = time.perf_counter()
        if self.draining:
            raise Draining()
        run_id = request.run_id or uuid7().hex
        answers = request.answers or None
        again = request.branch is not None and request.branch.again
        if answers is None and not again and not request.message and not request.attachments:
            raise RefusedRequest("message", "a message, or answers to pending tool calls")
        self._check_client_tools(request)
        self.hooks.check(request)  # refuse a bad request before anything is stored
        self._beginning += 1
        try:
            admission = await self._admit(request, run_id)
            try:
                return await self._begin(request, run_id, admission, began)
            except BaseException:
                if admission is not None and self.limiter is not None:
                    await asyncio.shield(self.limiter.settle(admission, None))
                raise
        finally:
            self._beginning -= 1

    async def drain(self, within: float) -> None:
        """Stop taking new runs, let the runs in progress end and this process's readers
        read them to the end, for at most ``within`` seconds; then give up what is left
        (:meth:`give_up`). Returns once every run of this runner has left it."""
        self.draining = True
        deadline = time.monotonic() + within
        while (left := deadline - time.monotonic()) > 0:
            going = [task for task in self._runs if not task.done()]
            if going:
                await asyncio.wait(going, timeout=left)
            elif self._beginning or self.broker.reading():
                # A run on its way to its task, or a client still reading one to its end.
                await asyncio.sleep(min(left, 0.05))
            else:
                break
        await self.give_up()

    async def give_up(self) -> None:
        """The runs still in progress leave this worker: handed over to another when the
        broker can (:class:`~agentstream.runs.broker.HandsOver`), else stopped and stored as
        ``interrupted`` (their followers get ``run_failed``, kind ``interrupted``). A run
        already storing its end is left to end. Returns once all of them have."""
        broker = self.broker
        sessions = [s for s in self._active.values() if not s.finished and not s.ending]
        if isinstance(broker, HandsOver):
            for session in sessions:
                session.leave()
            await asyncio.gather(*(s.wait() for s in sessions))
            await broker.hand_over([s.run_id for s in sessions])
            if sessions:
                log.warning("handed %d unfinished runs over to other workers", len(sessions))
        else:
            for session in sessions:
                session.interrupt()
            if sessions:
                log.warning("stopped %d unfinished runs, stored as interrupted", len(sessions))
        await asyncio.gather(*self._runs, return_exceptions=True)

    async def _admit(self, request: RunRequest, run_id: str) -> Admission | None:
        """The run's place in its caller's limits (``LimitExceeded`` when over one)."""
        if self.limiter is None:
            return None
        return await self.limiter.admit(request.principal, run_id)

    async def _begin(
        self, request: RunRequest, run_id: str, admission: Admission | None, began: float
    ) -> RunSession:
        queued: str | None = None  # the conversation the run waits for, if it has to
        try:
            if request.conversation_id is not None:
                conversation = _turn_id(request.conversation_id)
                if not await take_turn(
                    self.broker,
                    self.request_cancel,
                    request.principal,
                    conversation,
                    run_id,
                    request.double_texting or self.double_texting,
                    replacing=request.branch is not None and request.branch.again,
                ):
                    queued = conversation
            session = await self._store_and_open(request, run_id, admission, began)
        except BaseException:
            await asyncio.shield(self.broker.release(run_id))
            raise
        self._active[run_id] = session
        task = session.start(None if queued is None else self._waited(session, queued))
        self._runs.add(task)
        task.add_done_callback(self._runs.discard)
        return session

    async def _store_and_open(
        self, request: RunRequest, run_id: str, admission: Admission | None, began: float
    ) -> RunSession:
        """Commit the user message, prepare the run and open its log."""
        answers = request.answers or None
        again = request.branch is not None and request.branch.again
        attachments = () if again else await self._attachments(request)
        conversation_id, title, first_run = request.conversation_id, None, False
        history = list(request.history or ())
        payloads: list[Any] = []
        read: StartedRun | None = None
        state = request.state
        if self.store is not None:
            started = await self.store.start_run(
                request.principal,
                run_id=run_id,
                conversation_id=request.conversation_id,
                user_message=None if again else request.message or (None if answers else ""),
                model=request.model or self.agent.model_id,
                metadata=dict(request.metadata) or None,
                create_if_missing=request.create_conversation,
                answers=answers,
                branch=request.branch,
                attachments=attachments,
                history_bound=self._history_bound(request),
                state=request.state,
            )
            conversation_id, title = started.conversation_id, started.title
            state = started.state
            first_run = started.first_run
            if started.asked is not None:  # answering a stored question again: ask it as stored
                request = replace(request, message=started.asked.content)
                attachments = started.asked.attachments
            if request.history is None:
                history = list(started.history)
                read = started
            payloads = list(started.payloads)
        if request.conversation_id is None and conversation_id is not None:
            # A new conversation: nobody else knows its id yet, so it is free.
            await self.broker.hold(run_id, request.principal, conversation_id)
        if answers is not None:
            waiting = open_calls(history)
            if not waiting:
                raise InvalidAnswers("no tool calls are waiting for an answer")
            check_answers(waiting, answers)
        session: RunSession | None = None
        try:
            session = await self._prepare(
                request,
                run_id,
                conversation_id,
                title,
                history,
                payloads,
                first_run,
                attachments,
                read,
                state,
            )
            session.admission, session.began = admission, began
            session.watch()
            reader = request.reader
            if session.carried:  # what its watches carry to other workers (a trace context)
                reader = {**(reader or {}), **session.carried}
            # Opened last: once open, the run's task is what closes it, so the broker never
            # holds a run that cannot end.
            await self.broker.open_run(
                run_id,
                request.principal,
                reader,
                request=_record(request, run_id, conversation_id, reader),
            )
        except BaseException:
            if session is not None:
                session.unwatch()
            # The user message is stored: record the run as failed rather than leave it
            # "running" forever (a bad model id, a failing server action, a cancelled request).
            if self.store is not None and conversation_id is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(
                        self.store.finish_run(
                            request.principal,
                            run_id=run_id,
                            conversation_id=conversation_id,
                            messages=(),
                            status="failed",
                            error="the run could not start",
                        )
                    )
            raise
        return session

    async def _waited(self, session: RunSession, conversation_id: str) -> RunInput:
        """A queued run's input once it holds ``conversation_id``: prepared again from the
        history as it now stands (the answer before it, whole), or as it was if the run was
        stopped while it waited."""
        run_input = session.input
        request, run_id, store = session.request, session.run_id, self.store
        token = run_input.cancel
        assert token is not None
        queued = store if isinstance(store, QueuedRuns) else None

        async def before() -> Sequence[str]:
            assert queued is not None
            try:
                return await queued.runs_before(request.principal, conversation_id, run_id)
            except Exception:  # the turn is taken without waiting for earlier messages
                log.exception("run %s could not read the runs before it", run_id)
                return ()

        if not await wait_turn(
            self.broker,
            request.principal,
            conversation_id,
            run_id,
            token,
            before if queued is not None else None,
        ):
            return run_input
        if request.history is not None or queued is None:
            return run_input
        try:
            started = await queued.run_context(
                request.principal, conversation_id, run_id, self._history_bound(request)
            )
            history, payloads = list(started.history), list(started.payloads)
            prep = await self.hooks.prepare(self.agent, request, history, payloads)
        except Exception:
            log.exception("run %s could not read the history it waited for", run_id)
            return run_input
        waited = replace(run_input, history=history, state=started.state)
        session.exchanges = self._exchanges(started, request)
        return self._summarized(self._run_input(request, prep, waited), started, request)

    def _exchanges(self, read: StartedRun | None, request: RunRequest) -> Sequence[str]:
        """Where the summaries a run writes are kept: the ids of its history's exchanges,
        when the history was read from a store that keeps summaries, as far back as the
        model can be sent (else none). A run that reads the whole conversation is not
        handed the summary, and would pay for the same one every turn."""
        if read is None or not isinstance(self.store, KeptSummaries):
            return ()
        if self._history_bound(request) is None:
            return ()
        return read.exchanges

    def _summarized(
        self, run_input: RunInput, read: StartedRun | None, request: RunRequest
    ) -> RunInput:
        """``run_input`` with the summary its read stopped at; it summarizes what it would
        leave out when the store can keep that summary for the next runs."""
        return replace(
            run_input,
            summary=read.summary if read is not None else None,
            summarize=bool(self._exchanges(read, request)),
        )

    def _history_bound(self, request: RunRequest) -> int | None:
        """How much of the conversation the run reads (None: all of it)."""
        return self.reading.bound(self.agent, request.model or self.agent.model_id)

    async def _attachments(self, request: RunRequest) -> tuple[Attachment, ...]:
        """The caller's attachments the request names (a 404 for any that is not theirs, a
        413 for a message over its limits), before anything is stored."""
        if not request.attachments:
            return ()
        if self.attachments is None:
            raise RefusedRequest("attachments", "this server keeps no attachments")
        found = await self.attachments.resolve(request.principal, request.attachments)
        self.attachment_limits.check_message(found)
        model = request.model or self.agent.model_id
        kind = self.agent.profile(model).unreadable(a.kind for a in found)
        if kind is not None:
            raise RefusedRequest("attachments", cannot_read(model, kind))
        return found

    def _check_client_tools(self, request: RunRequest) -> None:
        """Refuse frontend tools whose names are taken: by another of the request's, or by a
        server tool (in any scope), whose calls would otherwise be ambiguous."""
        if not request.client_tools:
            return
        toolset = self.agent.toolset
        server = {t.name for t in toolset.resolve(toolset.scopes)}
        seen: set[str] = set()
        for position, client in enumerate(request.client_tools):
            if not client.name:
                raise RefusedRequest(f"tools.{position}.name", "a tool needs a name")
            if client.name in server:
                raise RefusedRequest(
                    f"tools.{position}.name", f"{client.name!r} is the name of a server tool"
                )
            if client.name in seen:
                raise RefusedRequest(f"tools.{position}.name", f"{client.name!r} is given twice")
            seen.add(client.name)

    async def _prepare(
        self,
        request: RunRequest,
        run_id: str,
        conversation_id: str | None,
        title: str | None,
        history: list[Message],
        payloads: list[Any],
        first_run: bool,
        attachments: tuple[Attachment, ...],
        read: StartedRun | None,
        state: Mapping[str, Any] | None,
    ) -> RunSession:
        prep = await self.hooks.prepare(self.agent, request, history, payloads)
        unprepared = RunInput(
            message=request.message,
            attachments=attachments,
            files=self.attachments,
            keeper=self.attachments if isinstance(self.attachments, AttachmentKeeper) else None,
            history=history,
            principal=request.principal,
            context=request.context,
            state=state,
            conversation_id=conversation_id,
            conversation_title=title,
            run_id=run_id,
            model=request.model,
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            model_options=request.model_options,
            tool_options=request.tool_options,
            cancel=CancelToken(),
            answers=request.answers or None,
            client_tools=request.client_tools,
            durable=self.broker.flushed,
        )
        run_input = self._summarized(self._run_input(request, prep, unprepared), read, request)
        # The answers' message: the store committed it with the start.
        saved = int(bool(run_input.answers and self.store is not None and conversation_id))
        session = RunSession(self, request, run_input, first_run=first_run, saved=saved)
        session.exchanges = self._exchanges(read, request)
        return session

    @staticmethod
    def _run_input(request: RunRequest, prep: Preparation, unprepared: RunInput) -> RunInput:
        """``unprepared`` with what the hooks prepared for it (prompt, scopes, limits)."""
        return replace(
            unprepared,
            message=prep.message if prep.message is not None else request.message,
            scopes=prep.scopes,
            system=prep.system,
            max_turns=prep.max_turns or request.protocol.max_turns,
            tool_options=request.tool_options if prep.tool_options is None else prep.tool_options,
            answer_checks=prep.answer_checks,
        )

    async def take_over(self, claim: Claim) -> None:
        """Go on with a run of a worker that died, claimed by this worker's broker: rebuilt
        from its request, its stored messages and its log (:mod:`agentstream.runs.takeover`)
        and continued under its id. A run that cannot be (its request was not kept, it was
        taken over too often, its log is incomplete, the store has no such run) ends as
        interrupted, for its followers too. The store not answering is left to the next
        worker: the claim lapses with the lease."""
        try:
            session = await self._resumed(claim)
        except (CannotResume, LookupError, ValueError) as exc:
            log.warning("run %s cannot be continued: %s", claim.run_id, exc)
            await self._end_lost(claim)
            return
        run_id = session.run_id
        self._active[run_id] = session
        task = session.start()
        self._runs.add(task)
        task.add_done_callback(self._runs.discard)
        if claim.cancel is not None:
            session.cancel(claim.cancel)  # stopped while it had no worker

    async def _resumed(self, claim: Claim) -> RunSession:
        """The claimed run's session, its log opened here again."""
        store = self.store
        if claim.request is None:
            raise CannotResume("its request was not kept")
        if claim.give_up:
            raise CannotResume(f"it was taken over {claim.takeovers - 1} times already")
        if not isinstance(store, ResumableRuns):
            raise CannotResume("the store cannot read a run back")
        request = request_from_record(claim.request)
        conversation_id = request.conversation_id
        if conversation_id is None:
            raise CannotResume("the run has no conversation")
        stored = await store.resume_context(
            request.principal, conversation_id, claim.run_id, self._history_bound(request)
        )
        if not stored.running:
            raise CannotResume("the run has ended in the store")
        resume = resumption(stored.messages, claim.events)
        history = list(stored.context.history)
        prep = await self.hooks.prepare(self.agent, request, history, list(stored.context.payloads))
        unprepared = RunInput(
            message=request.message,
            files=self.attachments,
            keeper=self.attachments if isinstance(self.attachments, AttachmentKeeper) else None,
            history=[*history, *stored.messages],
            principal=request.principal,
            context=request.context,
            conversation_id=conversation_id,
            conversation_title=stored.context.title,
            run_id=claim.run_id,
            model=request.model,
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            model_options=request.model_options,
            tool_options=request.tool_options,
            cancel=CancelToken(),
            client_tools=request.client_tools,
            resume=resume,
            durable=self.broker.flushed,
            state=stored.context.state,
        )
        read = stored.context
        run_input = self._summarized(self._run_input(request, prep, unprepared), read, request)
        session = RunSession(self, request, run_input)
        session.exchanges = self._exchanges(read, request)
        if await self.broker.hold(claim.run_id, request.principal, _turn_id(conversation_id)):
            raise CannotResume("its conversation is held by another run")
        session.watch()
        await self.broker.open_run(
            claim.run_id, request.principal, claim.reader, request=claim.request
        )
        return session

    async def _end_lost(self, claim: Claim) -> None:
        """End a claimed run that cannot be continued as its worker's death would have:
        ``run_failed`` (``interrupted``) after its log, and marked so in the store."""
        events = claim.events
        owner = _owner_of(claim)
        if owner is not None:
            await self.broker.open_run(claim.run_id, owner, claim.reader)
            seq = events[-1].seq + 1 if events else 0
            self.broker.publish(
                RunFailed(
                    run_id=claim.run_id, seq=seq, kind="interrupted", message=WORKER_LOST_MESSAGE
                )
            )
            await self.broker.close_run(claim.run_id)
        self._orphaned(claim.run_id)

    def cancel(self, run_id: str, principal: Principal, reason: str = "cancelled") -> bool:
        """Cancel a run in progress in this process if ``principal`` owns it."""
        session = self._active.get(run_id)
        if session is None or session.request.principal.owner != principal.owner:
            return False
        session.cancel(reason)
        return True

    async def request_cancel(
        self, run_id: str, principal: Principal, reason: str = "cancelled"
    ) -> bool:
        """Cancel a run wherever it runs: here, or (through the broker) in another worker."""
        if self.cancel(run_id, principal, reason):
            return True
        return await self.broker.request_cancel(run_id, principal, reason)

    # --- what a run session needs of its owner (SessionOwner) -------------------------------

    def keep(self, write: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run a store write in a task the runner waits for when it closes."""
        task = asyncio.create_task(write)
        self._writes.add(task)
        task.add_done_callback(_settled)
        task.add_done_callback(self._writes.discard)
        return task

    def ended(self, run_id: str) -> None:
        self._active.pop(run_id, None)

    def retitle(self, principal: Principal, conversation_id: str, first_message: str) -> None:
        """Ask for a model-written title in a task the runner owns (cancelled on close)."""
        if self.titles is None or self.store is None:
            return
        task = asyncio.create_task(self._write_title(principal, conversation_id, first_message))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _write_title(
        self, principal: Principal, conversation_id: str, first_message: str
    ) -> None:
        assert self.titles is not None and self.store is not None
        try:
            title = await self.titles(first_message)
            if title:
                await self.store.set_generated_title(principal, conversation_id, title)
        except Exception:
            log.exception("could not write a title for conversation %s", conversation_id)


def _record(
    request: RunRequest, run_id: str, conversation_id: str | None, reader: Any
) -> str | None:
    """What another worker needs to go on with the run (:func:`request_record`): the
    request as it runs, in its conversation (a new one has its id now). ``None`` for a run
    outside the store (its history was the client's) or a request JSON cannot hold."""
    if conversation_id is None or request.history is not None:
        return None
    return request_record(
        replace(
            request,
            run_id=run_id,
            conversation_id=conversation_id,
            create_conversation=False,
            reader=reader,
        )
    )


def _owner_of(claim: Claim) -> Principal | None:
    """Who a claimed run answers: from its request, else its log's first event."""
    if claim.request is not None:
        with contextlib.suppress(ValueError):
            return request_from_record(claim.request).principal
    return None


def _turn_id(conversation_id: str) -> str:
    """The id a conversation takes turns under: a UUID in one spelling (the store takes any,
    so two spellings of one conversation are one conversation here too)."""
    try:
        return str(uuid.UUID(conversation_id))
    except ValueError:
        return conversation_id


async def _mark_interrupted(store: InterruptedRuns, run_id: str) -> None:
    try:
        if await store.mark_interrupted([run_id], WORKER_LOST_MESSAGE):
            log.warning("marked run %s interrupted: its worker is gone", run_id)
    except Exception:
        log.exception("could not mark run %s interrupted", run_id)


def _settled(task: asyncio.Task[Any]) -> None:
    """Mark an owned write's outcome as seen: its awaiter, if still there, has it too."""
    if not task.cancelled():
        task.exception()
