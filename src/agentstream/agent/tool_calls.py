"""A run's tool calls: running the calls a turn asks for, completing an open turn from the
client's answers, and keeping what the calls produce.

A turn's calls run concurrently and each is reported as it finishes (``tool_call_finished``,
then its payload), so the results of one round come back in call order while their events
come in the order the calls ended. What the run's answer needs at the end (each call's
history entry, the payloads) accumulates here across rounds. :class:`~agentstream.agent.loop.Loop`
streams the turns and decides when to run a round; this module does the rest.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from agentstream.agent.inputs import RunInput
from agentstream.agent.outlet import EventOutlet
from agentstream.agent.resumption import NOT_RETRIED_MESSAGE, Resumption, Round
from agentstream.agent.turns import PendingCall
from agentstream.events import (
    Payload,
    PayloadEvent,
    RunWarning,
    StateDelta,
    ToolCallArgs,
    ToolCallFinished,
    ToolError,
    ToolHistoryEntry,
    ToolProgress,
)
from agentstream.ids import new_payload_id
from agentstream.messages import (
    Message,
    PendingToolCall,
    ToolCall,
    ToolOutcome,
    ToolResultPart,
    ToolResultsMessage,
)
from agentstream.pending import (
    Answers,
    ClientTool,
    answered_message,
    check_answers,
    provider_history,
)
from agentstream.state import (
    InvalidState,
    PatchConflict,
    apply_patch,
    check_state,
    copy_json,
    diff,
)
from agentstream.tools.context import ToolContext
from agentstream.tools.definition import Tool
from agentstream.tools.execution import (
    CallOutcome,
    PreparedCall,
    error_outcome,
    parse_arguments,
    prepare_call,
    run_call,
)
from agentstream.tools.results import Progress

__all__ = ["ToolCalls"]


class ToolCalls:
    """One run's tool calls, round after round."""

    def __init__(self, run_input: RunInput, outlet: EventOutlet, timeout: float | None) -> None:
        self._input = run_input
        self._outlet = outlet
        self._timeout = timeout
        self.history: list[ToolHistoryEntry] = []
        """An entry for each call that finished, for the answer's tool history."""
        self.payloads: list[Payload] = []
        self.running: list[PendingCall] = []
        """The calls of the round in progress (a round that was interrupted keeps them)."""
        self._finished: dict[str, ToolResultPart] = {}  # the round's results so far
        self._displays: dict[str, str | None] = {}  # each call's Tool.display text
        self._count = 0
        self.state: dict[str, Any] = copy_json(dict(run_input.state or {}))
        """The shared state as the run's calls have left it (:mod:`agentstream.state`): a
        value, replaced by each change and never changed in place, so a call's starting
        point is kept without a copy."""
        self._state_seen: dict[str, dict[str, Any]] = {}  # the state each running call found
        self._event_loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()

    def resumed(self, resume: Resumption) -> None:
        """Go on from where a run taken over stands: its call indexes, tool history and
        payloads so far."""
        self._count = resume.calls
        self.history = list(resume.tool_history)
        self.payloads = list(resume.payloads)

    def call(
        self, call_id: str, name: str, provider_data: dict[str, Any] | None = None
    ) -> PendingCall:
        """A call the model has started: it takes the run's next call index."""
        call = PendingCall(call_id, name, self._count, provider_data)
        self._count += 1
        return call

    def round_ended(self) -> None:
        """The round's results are in history: the next round starts empty."""
        self.running, self._finished = [], {}
        self._state_seen.clear()

    async def run(
        self,
        tools: dict[str, Tool],
        client: Mapping[str, ClientTool] | None = None,
        *,
        approved: bool = False,
        text_offset: int = 0,
        calls: Sequence[PendingCall] | None = None,
    ) -> ToolResultsMessage:
        """Run the round's calls (:attr:`running`, or those of them in ``calls``); calls to
        frontend tools (``client``) and calls that need approval (unless ``approved``) are
        not run but returned as ``pending``. Each call's history entry records
        ``text_offset``, where the answer's text stood."""
        outlet = self._outlet
        calls = self.running if calls is None else calls
        ready: list[tuple[PendingCall, PreparedCall, ToolContext]] = []
        waiting: list[PendingToolCall] = []
        for call in calls:
            ctx = self._tool_context(call)
            prepared: PreparedCall | CallOutcome | None
            if client and call.name in client:
                shown, prepared = _client_call(call)
            else:
                shown, prepared = prepare_call(tools, call.name, call.raw_arguments, ctx)
            broken = (
                isinstance(prepared, CallOutcome)
                and prepared.error is not None
                and prepared.error.kind == "invalid_arguments"
            )
            outlet.emit(
                ToolCallArgs(
                    run_id=outlet.run_id,
                    seq=outlet.next_seq(),
                    call_id=call.call_id,
                    name=call.name,
                    index=call.index,
                    arguments=shown,
                    raw_arguments=call.raw_arguments if broken and not shown else None,
                    display=self._displays.setdefault(call.call_id, _display(prepared, shown)),
                    started_at=time.time(),
                )
            )
            if isinstance(prepared, CallOutcome):
                self._finish(call, shown, prepared, text_offset)
            elif prepared is None:
                waiting.append(
                    PendingToolCall(call_id=call.call_id, name=call.name, arguments=shown)
                )
            elif not approved and prepared.tool.needs_approval(
                ToolCall(id=call.call_id, name=call.name, arguments=shown)
            ):
                waiting.append(
                    PendingToolCall(
                        call_id=call.call_id,
                        name=call.name,
                        arguments=shown,
                        waiting_for="approval",
                        display=self._displays.get(call.call_id),
                    )
                )
            else:
                ready.append((call, prepared, ctx))
        if ready and self._input.durable is not None:
            # Every call that may run is in the shared log before any tool starts: a worker
            # that takes the run over never runs a call it cannot see.
            await self._input.durable()
        if len(ready) == 1:
            await self._run_one(*ready[0], text_offset)
        elif ready:
            async with asyncio.TaskGroup() as group:
                for call, one, ctx in ready:
                    group.create_task(self._run_one(call, one, ctx, text_offset))
        return ToolResultsMessage(
            results=tuple(self._finished[c.call_id] for c in calls if c.call_id in self._finished),
            pending=tuple(waiting),
        )

    async def finish(
        self,
        round_: Round,
        tools: dict[str, Tool],
        client: Mapping[str, ClientTool] | None,
        text_offset: int,
        *,
        approved: bool = False,
    ) -> ToolResultsMessage:
        """Finish a round that a worker that died had begun (see
        :mod:`agentstream.agent.resumption`): a call whose result is in the log keeps it; a
        call whose tool never started, or whose tool is idempotent, is run (or waits for
        the client or an approval, as it would have; ``approved``: the calls are approved
        already); any other call may have done its work and is not run again: its result
        says so (``interrupted``), for the model to tell."""
        self.running = list(round_.calls)
        again: list[PendingCall] = []
        for call in round_.calls:
            done = round_.finished.get(call.call_id)
            tool = tools.get(call.name)
            if done is not None:
                self._finished[call.call_id] = ToolResultPart(
                    tool_call_id=call.call_id,
                    name=call.name,
                    content=done.result,
                    outcome=done.outcome,
                    attachments=done.attachments,
                )
            elif (
                call.call_id not in round_.started
                or (client is not None and call.name in client)
                or tool is None
                or tool.idempotent
                or (
                    not approved
                    and tool.needs_approval(
                        ToolCall(id=call.call_id, name=call.name, arguments=call.parsed_arguments())
                    )
                )
            ):
                again.append(call)
            else:
                self._finish(call, call.parsed_arguments(), _NOT_RETRIED, text_offset)
        ran = await self.run(tools, client, approved=approved, text_offset=text_offset, calls=again)
        return ToolResultsMessage(
            results=tuple(
                self._finished[c.call_id] for c in round_.calls if c.call_id in self._finished
            ),
            pending=ran.pending,
        )

    async def answer(
        self,
        messages: list[Message],
        waiting: tuple[PendingToolCall, ...],
        answers: Answers,
        tools: dict[str, Tool],
        record: Callable[[Message], None],
    ) -> None:
        """Complete the open turn that ends ``messages`` with ``answers``: ``record`` them
        (the run's first new message), run the approved calls (and ``record`` their results),
        and leave the turn's results joined in one message for the model."""
        check_answers(waiting, answers)
        recorded = answered_message(waiting, answers)
        record(recorded)
        denied = {r.tool_call_id for r in recorded.results} - {r.call_id for r in answers.results}
        calls: list[PendingCall] = []
        for pending in waiting:
            call = self.call(pending.call_id, pending.name)
            call.fragments.append(json.dumps(pending.arguments))
            if pending.display:  # a declined call's card shows what the approval card did
                self._displays[pending.call_id] = pending.display
            if pending.call_id in denied:
                result = next(r for r in recorded.results if r.tool_call_id == pending.call_id)
                outcome = CallOutcome(
                    result=result.content,
                    output=json.loads(result.content),
                    outcome=result.outcome,
                    display=pending.display,
                )
                self._finish(call, pending.arguments, outcome, 0)
            elif any(a.call_id == pending.call_id for a in recorded.pending):
                calls.append(call)
        results: tuple[ToolResultPart, ...] = recorded.results
        if calls:
            self.running = calls
            ran = await self.run(tools, approved=True)
            record(ran)
            results += ran.results
        self.round_ended()
        opened = messages[-1]
        assert isinstance(opened, ToolResultsMessage)
        messages[-1] = ToolResultsMessage(results=opened.results + results)
        messages[:] = provider_history(messages, keep_open=False)

    def unfinished(self, reason: str, outcome: ToolOutcome) -> ToolResultsMessage:
        """Results for the round's calls: the finished ones, and for each call that never
        finished an error the model reads (``reason``) with its ``outcome`` (``interrupted``
        when the run was stopped, ``error`` when the turn limit kept it from running), so the
        history stays valid for the next request."""
        return ToolResultsMessage(
            results=tuple(
                self._finished.get(c.call_id)
                or ToolResultPart(
                    tool_call_id=c.call_id,
                    name=c.name,
                    content=json.dumps({"error": reason}),
                    outcome=outcome,
                )
                for c in self.running
            )
        )

    async def _run_one(
        self, call: PendingCall, prepared: PreparedCall, ctx: ToolContext, text_offset: int
    ) -> None:
        outcome = await run_call(prepared, ctx, self._timeout)
        if not outcome.is_error:
            self._change_state(call, ctx)
        self._state_seen.pop(call.call_id, None)
        self._finish(call, prepared.shown_arguments, outcome, text_offset)

    def _change_state(self, call: PendingCall, ctx: ToolContext) -> None:
        """What the call changed in its copy of the state, applied to the run's (calls of
        one round run at once: each change applies on top of those that finished before),
        and announced as a ``state_delta``. A change that no longer applies, or that leaves
        a state too large or not JSON, is dropped with a warning."""
        seen = self._state_seen.get(call.call_id)
        if seen is None:
            return
        outlet = self._outlet
        try:
            patch = diff(seen, ctx.state)
            if not patch:
                return
            changed = check_state(apply_patch(self.state, patch))
        except (InvalidState, PatchConflict, TypeError, ValueError, RecursionError) as exc:
            outlet.emit(
                RunWarning(
                    run_id=outlet.run_id,
                    seq=outlet.next_seq(),
                    code="state_not_changed",
                    message=f"{call.name} changed the state, and the change was refused: {exc}",
                )
            )
            return
        self.state = changed
        outlet.emit(
            StateDelta(
                run_id=outlet.run_id,
                seq=outlet.next_seq(),
                patch=tuple(patch),
                call_id=call.call_id,
            )
        )

    def _finish(
        self,
        call: PendingCall,
        arguments: dict[str, Any],
        outcome: CallOutcome,
        text_offset: int,
    ) -> None:
        outlet = self._outlet
        self._finished[call.call_id] = ToolResultPart(
            tool_call_id=call.call_id,
            name=call.name,
            content=outcome.result,
            outcome=outcome.outcome,
            attachments=outcome.attachments,
        )
        payload = outcome.payload
        if payload is not None and payload.payload_id is None:
            payload = replace(payload, payload_id=new_payload_id())
        outlet.emit(
            ToolCallFinished(
                run_id=outlet.run_id,
                seq=outlet.next_seq(),
                call_id=call.call_id,
                name=call.name,
                index=call.index,
                is_error=outcome.is_error,
                result=outcome.result,
                output=outcome.output,
                error=outcome.error,
                payload=payload,
                duration_ms=outcome.duration_ms,
                display=outcome.display,
                finished_at=time.time(),
                outcome=outcome.outcome,
                attachments=outcome.attachments,
            )
        )
        self.history.append(
            ToolHistoryEntry(
                index=call.index,
                call_id=call.call_id,
                tool_name=call.name,
                input=arguments,
                output=outcome.output,
                is_error=outcome.is_error,
                duration_ms=outcome.duration_ms,
                text_offset=text_offset,
                display=self._displays.get(call.call_id),
                outcome=outcome.outcome,
                attachments=outcome.attachments,
            )
        )
        if payload is not None:
            self.payloads.append(payload)
            outlet.emit(
                PayloadEvent(
                    run_id=outlet.run_id,
                    seq=outlet.next_seq(),
                    payload=payload,
                    call_id=call.call_id,
                )
            )

    def _tool_context(self, call: PendingCall) -> ToolContext:
        run_input = self._input

        def sink(progress: Progress) -> None:
            if threading.get_ident() == self._thread:
                self._progress(call, progress)
            else:
                self._event_loop.call_soon_threadsafe(self._progress, call, progress)

        found = self._state_seen[call.call_id] = self.state
        return ToolContext(
            state=copy_json(found),
            principal=run_input.principal,
            run_id=self._outlet.run_id,
            call_id=call.call_id,
            tool_name=call.name,
            conversation_id=run_input.conversation_id,
            context=run_input.context,
            options=run_input.tool_options,
            _sink=sink,
            _keeper=run_input.keeper,
        )

    def _progress(self, call: PendingCall, progress: Progress) -> None:
        if call.call_id in self._finished:
            return  # a late report from a worker thread after the call ended
        outlet = self._outlet
        outlet.emit(
            ToolProgress(
                run_id=outlet.run_id,
                seq=outlet.next_seq(),
                call_id=call.call_id,
                name=call.name,
                stage=progress.stage,
                message=progress.message,
                fraction=progress.fraction,
                data=progress.data,
            )
        )


_NOT_RETRIED = CallOutcome(
    result=json.dumps({"error": NOT_RETRIED_MESSAGE}),
    output={"error": NOT_RETRIED_MESSAGE},
    outcome="interrupted",
    error=ToolError(kind="interrupted", message=NOT_RETRIED_MESSAGE),
)


def _client_call(call: PendingCall) -> tuple[dict[str, Any], CallOutcome | None]:
    """A call to a frontend tool: its arguments and ``None`` (it waits for the client), or
    the error the model gets when its arguments are not a JSON object."""
    try:
        return parse_arguments(call.raw_arguments), None
    except (json.JSONDecodeError, ValueError) as exc:
        message = f"Arguments for '{call.name}' are not a JSON object ({exc})."
        return {}, error_outcome("invalid_arguments", message)


def _display(prepared: PreparedCall | CallOutcome | None, arguments: dict[str, Any]) -> str | None:
    if isinstance(prepared, PreparedCall) and prepared.tool.display is not None:
        return prepared.tool.display(arguments)
    return None
