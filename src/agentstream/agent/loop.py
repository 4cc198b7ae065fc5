"""The agent loop: stream a turn, run the tools it asks for, feed the
results back, repeat until a turn asks for none.

:class:`Loop` knows nothing of HTTP, dialects or storage. It writes canonical events through an
``emit`` callable and records the history it adds in ``new_messages``; :class:`AgentRun`
(``run.py``) owns the task it runs in and hands the events to the consumer. Failures end the
run with one terminal event: ``run_failed`` for a provider error, the turn limit or a bug,
``run_cancelled`` when the run's cancel token fires.

A turn that calls a frontend tool or a tool that needs approval runs its other calls and ends
the run (``run_completed`` with ``pending_calls``); a run whose history ends with such an open
turn starts by completing it from ``RunInput.answers`` (see :mod:`agentstream.pending`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agentstream.agent.inputs import AnswerCheck, Retry, RunInput
from agentstream.agent.turns import PendingCall, TurnBuilder
from agentstream.events import (
    PartEnded,
    PartKind,
    PartStarted,
    Payload,
    PayloadEvent,
    ReasoningDelta,
    RunCancelled,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunStarted,
    RunWarning,
    TextDelta,
    ToolCallArgs,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolHistoryEntry,
    ToolProgress,
    TurnFinished,
    TurnStarted,
    Usage,
    UsageEvent,
)
from agentstream.messages import (
    AssistantMessage,
    Message,
    PendingToolCall,
    ToolCall,
    ToolResultPart,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.pending import (
    Answers,
    ClientTool,
    answered_message,
    check_answers,
    open_calls,
    provider_history,
)
from agentstream.providers.base import (
    ChatRequest,
    MessageComplete,
    MessageStart,
    Provider,
    ProviderError,
    ReasoningChunk,
    TextChunk,
    ToolInputChunk,
    ToolSpec,
    ToolUseStart,
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

if TYPE_CHECKING:
    from agentstream.agent.agent import Agent

__all__ = ["MAX_TURNS_MESSAGE", "Loop"]

log = logging.getLogger("agentstream.agent")

MAX_TURNS_MESSAGE = "Maximum tool-call rounds exceeded"
INTERNAL_ERROR_MESSAGE = "The agent failed unexpectedly. The error has been logged."
INTERRUPTED_MESSAGE = "Interrupted before it finished"
"""The error result of a tool call the run was stopped in the middle of."""
TURN_SEPARATOR = "\n\n"
"""Between the text of two model turns in the answer (and in the streamed text)."""


class Loop:
    """One run's state and steps. Create, then ``await loop.execute()`` in a task."""

    def __init__(
        self,
        agent: Agent,
        run_input: RunInput,
        provider: Provider,
        emit: Callable[[RunEvent], None],
    ) -> None:
        self.agent = agent
        self.input = run_input
        self.provider = provider
        self.run_id = run_input.run_id or uuid.uuid4().hex
        self.new_messages: list[Message] = []
        self._emit_event = emit
        self._seq = 0
        self._closed = False
        self._segments: list[str] = []
        """The text of each finished turn; the final message joins them."""
        self._usage = Usage()
        self._history: list[ToolHistoryEntry] = []
        self._displays: dict[str, str | None] = {}  # each call's Tool.display text
        self._payloads: list[Payload] = []
        self._tool_count = 0
        self._turn: TurnBuilder | None = None
        self._running_calls: list[PendingCall] = []
        self._finished: dict[str, ToolResultPart] = {}
        self._used_checks: set[int] = set()
        self._parts = 0
        self._open: PartKind | None = None
        """The kind of the text or reasoning part in progress (its number is ``_parts - 1``)."""
        self._event_loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()

    # --- emission -------------------------------------------------------------------------

    def _next_seq(self) -> int:
        seq = self._seq
        self._seq = seq + 1
        return seq

    def _emit(self, event: RunEvent) -> None:
        if not self._closed:
            self._emit_event(event)

    def _start_part(self, kind: PartKind) -> None:
        self._end_part()
        self._open = kind
        self._parts += 1
        self._emit(
            PartStarted(run_id=self.run_id, seq=self._next_seq(), part=self._parts - 1, kind=kind)
        )

    def _end_part(self) -> None:
        kind = self._open
        if kind is not None:
            self._open = None
            self._emit(
                PartEnded(run_id=self.run_id, seq=self._next_seq(), part=self._parts - 1, kind=kind)
            )

    # --- the run ----------------------------------------------------------------------------

    async def execute(self) -> None:
        """Run to one terminal event. Cancellation by the token becomes ``run_cancelled``;
        any other cancellation propagates after the partial history is recorded."""
        try:
            await self._run()
        except asyncio.CancelledError:
            token = self.input.cancel
            if token is not None and token.cancelled:
                self._emit(self.cancelled(token.reason or "cancelled"))
                self._closed = True
                return
            self._record_partial()
            self._closed = True
            raise
        except ProviderError as exc:
            self._record_partial()
            self._fail(exc.kind, exc.message)
        except Exception:
            log.exception("run %s failed", self.run_id)
            self._record_partial()
            self._fail("internal", INTERNAL_ERROR_MESSAGE)

    def cancelled(self, reason: str) -> RunCancelled:
        """The terminal event of a run cancelled by its token, after recording what it had
        produced. Also used when the token fired before the loop's task got to run."""
        self._record_partial()
        self._end_part()
        return RunCancelled(run_id=self.run_id, seq=self._next_seq(), reason=reason)

    def _fail(self, kind: str, message: str) -> None:
        self._end_part()
        self._emit(RunFailed(run_id=self.run_id, seq=self._next_seq(), kind=kind, message=message))
        self._closed = True

    async def _run(self) -> None:
        run_input, agent = self.input, self.agent
        tools, fallback = await self._resolve_tools()
        by_name = {t.name: t for t in tools}
        # Frontend tools sit beside the server's; a server tool keeps its name.
        client = {t.name: t for t in run_input.client_tools if t.name not in by_name}
        specs = tuple(
            ToolSpec(name=t.name, description=t.description, parameters=t.parameters) for t in tools
        ) + tuple(
            ToolSpec(name=t.name, description=t.description, parameters=t.parameters)
            for t in client.values()
        )
        self._emit(
            RunStarted(
                run_id=self.run_id,
                seq=self._next_seq(),
                conversation_id=run_input.conversation_id,
                conversation_title=run_input.conversation_title,
                user_id=run_input.principal.user_id,
                model=f"{self.provider.name}:{self.provider.model}",
                tool_names=(*by_name, *client),
            )
        )
        if fallback is not None:
            self._emit(replace(fallback, seq=self._next_seq()))
        # Let the runs starting alongside this one send their first event before this one
        # builds its model request: in a burst of new chats, each says it is thinking as soon
        # as its message is stored, instead of after the model requests of those before it.
        await asyncio.sleep(0)
        messages: list[Message] = list(run_input.history)
        waiting = open_calls(messages)
        if waiting and run_input.answers:
            await self._answer(messages, waiting, run_input.answers, by_name)
        elif messages and isinstance(messages[-1], ToolResultsMessage) and messages[-1].pending:
            # A new message instead of answers: the open calls get "not answered" results.
            messages = provider_history(messages, keep_open=False)
        if run_input.message or not run_input.answers:
            messages.append(UserMessage(content=run_input.message))
        system = run_input.system if run_input.system is not None else agent.instructions
        max_turns = run_input.max_turns or agent.max_turns
        for turn in range(max_turns):
            self._emit(TurnStarted(run_id=self.run_id, seq=self._next_seq(), turn=turn))
            request = ChatRequest(
                system=system,
                messages=tuple(messages),
                tools=specs,
                max_tokens=run_input.max_tokens or agent.max_tokens,
                temperature=(
                    run_input.temperature
                    if run_input.temperature is not None
                    else agent.temperature
                ),
                options={**agent.model_options, **run_input.model_options},
            )
            assistant = await self._stream_turn(turn, request)
            self._add(messages, assistant)
            if not assistant.tool_calls:
                self._emit(
                    TurnFinished(run_id=self.run_id, seq=self._next_seq(), turn=turn, reason="stop")
                )
                retry = self._check_answer(assistant.text)
                if retry is None:
                    self._complete()
                    return
                self._start_part("text")
                self._emit(TextDelta(run_id=self.run_id, seq=self._next_seq(), text=retry.notice))
                self._end_part()
                self._segments.pop()  # only the rejected answer; earlier turns stand
                self._add(messages, UserMessage(content=retry.user_message))
                continue
            if turn == max_turns - 1:
                break
            results = await self._run_tools(by_name, self._running_calls, client)
            self._add(messages, results)
            self._emit(
                TurnFinished(
                    run_id=self.run_id, seq=self._next_seq(), turn=turn, reason="tool_calls"
                )
            )
            if results.pending:
                self._complete(results.pending)
                return
        self._add(messages, self._unfinished_results("Not run: " + MAX_TURNS_MESSAGE))
        self._fail("max_turns", MAX_TURNS_MESSAGE)

    def _add(self, messages: list[Message], message: Message) -> None:
        messages.append(message)
        self.new_messages.append(message)
        if isinstance(message, ToolResultsMessage):
            self._running_calls = []
            self._finished = {}

    async def _resolve_tools(self) -> tuple[list[Tool], RunWarning | None]:
        """The run's tools, or none and a ``tool_fallback`` warning (emitted after
        ``run_started``) when a tool source fails to load."""
        tools = self.agent.toolset.resolve(self.input.scopes)
        for source in self.agent.tool_sources:
            try:
                loaded = await source.load(self.input.principal, self.input.scopes)
            except Exception as exc:
                log.warning("tool source %r failed: %s", source, exc)
                warning = RunWarning(
                    run_id=self.run_id,
                    seq=-1,
                    code="tool_fallback",
                    message="Tool-enabled streaming encountered an issue. "
                    "Continuing without tools.",
                )
                return [], warning
            known = {t.name for t in tools}
            tools.extend(t for t in loaded if t.name not in known)
        return tools, None

    # --- one model turn -------------------------------------------------------------------

    async def _stream_turn(self, turn: int, request: ChatRequest) -> AssistantMessage:
        builder = TurnBuilder(self.provider.name)
        self._turn = builder
        run_id, emit, next_seq = self.run_id, self._emit, self._next_seq
        put = self._emit_event  # the per-delta path: no extra calls, the run is open here
        turn_text = builder.text
        # The answer joins turns with a blank line; stream it too, so that the text a client
        # streamed is exactly the answer it is finally given.
        separate = any(self._segments)
        async with aclosing(self.provider.stream(request)) as stream:
            async for event in stream:
                if type(event) is TextChunk:
                    text = event.text
                    if text:
                        turn_text.append(text)
                        if self._open != "text":
                            self._start_part("text")
                        if separate:
                            separate = False
                            text = TURN_SEPARATOR + text
                        seq = self._seq
                        self._seq = seq + 1
                        put(TextDelta(run_id=run_id, seq=seq, text=text))
                    continue
                match event:
                    case ToolInputChunk(call_id=call_id, fragment=fragment):
                        builder.calls[call_id].fragments.append(fragment)
                        if fragment:
                            emit(
                                ToolCallDelta(
                                    run_id=run_id, seq=next_seq(), call_id=call_id, delta=fragment
                                )
                            )
                    case ReasoningChunk(text=text, signature=signature, redacted=redacted):
                        builder.add_reasoning(text, signature, redacted)
                        if text:
                            if self._open != "reasoning":
                                self._start_part("reasoning")
                            emit(ReasoningDelta(run_id=run_id, seq=next_seq(), text=text))
                    case ToolUseStart(call_id=call_id, name=name, provider_data=data):
                        self._end_part()
                        call = PendingCall(call_id, name, self._tool_count, data)
                        self._tool_count += 1
                        builder.calls[call_id] = call
                        emit(
                            ToolCallStarted(
                                run_id=run_id,
                                seq=next_seq(),
                                call_id=call_id,
                                name=name,
                                index=call.index,
                            )
                        )
                    case MessageComplete(usage=usage):
                        self._end_part()
                        self._usage = self._usage + usage
                        emit(UsageEvent(run_id=run_id, seq=next_seq(), usage=usage, turn=turn))
                    case MessageStart() | TextChunk():
                        pass
        self._end_part()
        self._turn = None
        self._running_calls = list(builder.calls.values())
        message = builder.message()
        self._segments.append(message.text)
        return message

    # --- tools ----------------------------------------------------------------------------

    async def _run_tools(
        self,
        tools: dict[str, Tool],
        calls: list[PendingCall],
        client: Mapping[str, ClientTool] | None = None,
        *,
        approved: bool = False,
    ) -> ToolResultsMessage:
        """Run a turn's calls; calls to frontend tools (``client``) and calls that need
        approval (unless ``approved``) are not run but returned as ``pending``."""
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
            self._emit(
                ToolCallArgs(
                    run_id=self.run_id,
                    seq=self._next_seq(),
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
                self._finish(call, shown, prepared)
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
        timeout = self.agent.tool_timeout
        if len(ready) == 1:
            call, one, ctx = ready[0]
            self._finish(call, one.shown_arguments, await run_call(one, ctx, timeout))
        elif ready:
            async with asyncio.TaskGroup() as group:
                for call, one, ctx in ready:
                    group.create_task(self._run_one(call, one, ctx, timeout))
        return ToolResultsMessage(
            results=tuple(self._finished[c.call_id] for c in calls if c.call_id in self._finished),
            pending=tuple(waiting),
        )

    async def _answer(
        self,
        messages: list[Message],
        waiting: tuple[PendingToolCall, ...],
        answers: Answers,
        tools: dict[str, Tool],
    ) -> None:
        """Complete the open turn that ends ``messages`` with ``answers``: record them (the
        first of :attr:`new_messages`), run the approved calls, and leave the turn's results
        joined in one message for the model."""
        check_answers(waiting, answers)
        recorded = answered_message(waiting, answers)
        self.new_messages.append(recorded)
        denied = {r.tool_call_id for r in recorded.results} - {r.call_id for r in answers.results}
        calls: list[PendingCall] = []
        for pending in waiting:
            call = PendingCall(pending.call_id, pending.name, self._tool_count)
            call.fragments.append(json.dumps(pending.arguments))
            self._tool_count += 1
            if pending.display:  # a declined call's card shows what the approval card did
                self._displays[pending.call_id] = pending.display
            if pending.call_id in denied:
                result = next(r for r in recorded.results if r.tool_call_id == pending.call_id)
                outcome = CallOutcome(
                    result=result.content,
                    output=json.loads(result.content),
                    display=pending.display,
                )
                self._finish(call, pending.arguments, outcome)
            elif any(a.call_id == pending.call_id for a in recorded.pending):
                calls.append(call)
        results: tuple[ToolResultPart, ...] = recorded.results
        if calls:
            self._running_calls = calls
            ran = await self._run_tools(tools, calls, approved=True)
            self.new_messages.append(ran)
            results += ran.results
        self._running_calls, self._finished = [], {}
        opened = messages[-1]
        assert isinstance(opened, ToolResultsMessage)
        messages[-1] = ToolResultsMessage(results=opened.results + results)
        messages[:] = provider_history(messages, keep_open=False)

    async def _run_one(
        self, call: PendingCall, prepared: PreparedCall, ctx: ToolContext, limit: float | None
    ) -> None:
        self._finish(call, prepared.shown_arguments, await run_call(prepared, ctx, limit))

    def _finish(self, call: PendingCall, arguments: dict[str, Any], outcome: CallOutcome) -> None:
        self._finished[call.call_id] = ToolResultPart(
            tool_call_id=call.call_id,
            name=call.name,
            content=outcome.result,
            is_error=outcome.is_error,
        )
        payload = outcome.payload
        if payload is not None and payload.payload_id is None:
            payload = Payload(
                kind=payload.kind,
                data=payload.data,
                summary=payload.summary,
                payload_id=uuid.uuid4().hex[:8],
            )
        self._emit(
            ToolCallFinished(
                run_id=self.run_id,
                seq=self._next_seq(),
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
            )
        )
        self._history.append(
            ToolHistoryEntry(
                index=call.index,
                call_id=call.call_id,
                tool_name=call.name,
                input=arguments,
                output=outcome.output,
                is_error=outcome.is_error,
                duration_ms=outcome.duration_ms,
                text_offset=len(self._message()),
                display=self._displays.get(call.call_id),
            )
        )
        if payload is not None:
            self._payloads.append(payload)
            self._emit(
                PayloadEvent(
                    run_id=self.run_id,
                    seq=self._next_seq(),
                    payload=payload,
                    call_id=call.call_id,
                )
            )

    def _tool_context(self, call: PendingCall) -> ToolContext:
        run_input = self.input

        def sink(progress: Progress) -> None:
            if threading.get_ident() == self._thread:
                self._progress(call, progress)
            else:
                self._event_loop.call_soon_threadsafe(self._progress, call, progress)

        return ToolContext(
            principal=run_input.principal,
            run_id=self.run_id,
            call_id=call.call_id,
            tool_name=call.name,
            conversation_id=run_input.conversation_id,
            context=run_input.context,
            options=run_input.tool_options,
            _sink=sink,
        )

    def _progress(self, call: PendingCall, progress: Progress) -> None:
        if call.call_id in self._finished:
            return  # a late report from a worker thread after the call ended
        self._emit(
            ToolProgress(
                run_id=self.run_id,
                seq=self._next_seq(),
                call_id=call.call_id,
                name=call.name,
                stage=progress.stage,
                message=progress.message,
                fraction=progress.fraction,
                data=progress.data,
            )
        )

    # --- endings ----------------------------------------------------------------------------

    def _check_answer(self, text: str) -> Retry | None:
        checks: Sequence[AnswerCheck] = (*self.agent.answer_checks, *self.input.answer_checks)
        for position, check in enumerate(checks):
            if position in self._used_checks:
                continue
            retry = check.check(text)
            if retry is not None:
                self._used_checks.add(position)
                return retry
        return None

    def _message(self) -> str:
        """The run's answer so far: each turn's text, separated by a blank line."""
        return TURN_SEPARATOR.join(segment for segment in self._segments if segment)

    def _complete(self, pending: tuple[PendingToolCall, ...] = ()) -> None:
        self._emit(
            RunCompleted(
                run_id=self.run_id,
                seq=self._next_seq(),
                message=self._message(),
                usage=self._usage,
                tool_history=tuple(sorted(self._history, key=lambda h: h.index)),
                payloads=tuple(self._payloads),
                pending_calls=pending,
            )
        )
        self._closed = True

    def _unfinished_results(self, reason: str) -> ToolResultsMessage:
        """Results for the current turn's calls: the finished ones, and an error for each call
        that never finished, so the history stays valid for the next request."""
        return ToolResultsMessage(
            results=tuple(
                self._finished.get(c.call_id)
                or ToolResultPart(
                    tool_call_id=c.call_id,
                    name=c.name,
                    content=f'{{"error": "{reason}"}}',
                    is_error=True,
                )
                for c in self._running_calls
            )
        )

    def _record_partial(self) -> None:
        """Keep what the interrupted run produced: the partial text of a turn in progress, or
        the results of the tools that finished."""
        if self._turn is not None:
            if self._turn.has_content:
                self.new_messages.append(self._turn.message(complete_calls=False))
            self._turn = None
        elif self._running_calls:
            self.new_messages.append(self._unfinished_results(INTERRUPTED_MESSAGE))
            self._running_calls = []


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
