"""The agent loop: stream a turn, run the tools it asks for, feed the
results back, repeat until a turn asks for none.

:class:`Loop` knows nothing of HTTP, dialects or storage. It writes canonical events through an
``emit`` callable and records the history it adds in ``new_messages``; :class:`AgentRun`
(``run.py``) owns the task it runs in and hands the events to the consumer, and
:class:`~agentstream.agent.tool_calls.ToolCalls` runs each round of tool calls. Failures end the
run with one terminal event: ``run_failed`` for a provider error, the turn limit or a bug,
``run_cancelled`` when the run's cancel token fires.

Before each model call the history is fitted into the model's window
(:mod:`agentstream.agent.budget`, :mod:`agentstream.agent.compaction`): the request may carry
less of the conversation than the run keeps, and a ``warning`` (``context_compacted``) says so
once per run. The exchanges it would leave out are first summarized by the model, when
summaries are on (:mod:`agentstream.agent.summaries`): the summary replaces them in every
later request, and ``context_summarized`` tells whoever keeps the conversation to store it.
A vendor that refuses a request as too long anyway (``ContextOverflow``, before anything
streamed) gets it again, compacted to what its refusal taught, once (``context_overflow``
warning).

A turn that calls a frontend tool or a tool that needs approval runs its other calls and ends
the run (``run_completed`` with ``pending_calls``); a run whose history ends with such an open
turn starts by completing it from ``RunInput.answers`` (see :mod:`agentstream.pending`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agentstream.agent.budget import ContextBudget
from agentstream.agent.compaction import Compaction
from agentstream.agent.files import RunFiles
from agentstream.agent.inputs import AnswerCheck, CancelToken, Retry, RunInput
from agentstream.agent.outlet import EventOutlet
from agentstream.agent.resumption import Resumption
from agentstream.agent.summaries import ContextSummary, Summarizer, with_summary
from agentstream.agent.tool_calls import ToolCalls
from agentstream.agent.turns import TurnBuilder
from agentstream.agent.usage import UsageMeter
from agentstream.errors import ContextOverflow
from agentstream.events import (
    ContextReport,
    ContextSummarized,
    PartEnded,
    PartKind,
    PartStarted,
    ReasoningDelta,
    RunCancelled,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunResumed,
    RunStarted,
    RunUsage,
    RunWarning,
    StateSnapshot,
    StopReason,
    TextDelta,
    ToolCallDelta,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    Usage,
    UsageEvent,
)
from agentstream.ids import uuid7
from agentstream.messages import (
    TURN_SEPARATOR,
    AssistantMessage,
    Message,
    PendingToolCall,
    ToolResultsMessage,
    UserMessage,
)
from agentstream.pending import (
    ClientTool,
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
from agentstream.tools.definition import Tool

if TYPE_CHECKING:
    from agentstream.agent.agent import Agent

__all__ = ["MAX_TURNS_MESSAGE", "Loop"]

log = logging.getLogger("agentstream.agent")

MAX_TURNS_MESSAGE = "Maximum tool-call rounds exceeded"
INTERNAL_ERROR_MESSAGE = "The agent failed unexpectedly. The error has been logged."
INTERRUPTED_MESSAGE = "Interrupted before it finished"
"""The error result of a tool call the run was stopped in the middle of."""


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
        self.run_id = run_input.run_id or uuid7().hex
        self.new_messages: list[Message] = []
        self._outlet = EventOutlet(self.run_id, emit)
        self._calls = ToolCalls(run_input, self._outlet, agent.tool_timeout)
        self._segments: list[str] = []
        """The text of each finished turn; the final message joins them."""
        self._stop: StopReason = "end_turn"
        """Why the latest model turn ended (the run's answer is cut off if that is a limit)."""
        self._usage = Usage()
        """What the vendors reported (``run_completed.usage``)."""
        self._meter = UsageMeter()
        """What the run is billed for, estimates included (:attr:`usage`)."""
        self._turn: TurnBuilder | None = None
        self._used_checks: set[int] = set()
        self._parts = 0
        self._open: PartKind | None = None
        """The kind of the text or reasoning part in progress (its number is ``_parts - 1``)."""
        self._told_compacted = False
        self._summary: ContextSummary | None = run_input.summary
        """What the model reads in place of the exchanges before the run's history (and of
        those the run summarizes)."""
        self._skip = 0
        """The messages at the start of the run's history the summary covers."""
        self._skipped = 0
        """The exchanges those messages hold."""
        self._summarizing = run_input.summarize
        """Whether exchanges about to be left out are summarized (off after a failure)."""
        self._context: ContextReport | None = None
        """How full the window was at the latest model call."""

    @property
    def usage(self) -> RunUsage:
        """The run's tokens so far, as billed: the vendors' counts, and estimates for model
        calls cut short or never reported (see :mod:`agentstream.agent.usage`)."""
        return self._meter.total

    # --- text and reasoning parts -------------------------------------------------------

    def _start_part(self, kind: PartKind) -> None:
        self._end_part()
        self._open = kind
        self._parts += 1
        self._outlet.emit(
            PartStarted(
                run_id=self.run_id, seq=self._outlet.next_seq(), part=self._parts - 1, kind=kind
            )
        )

    @property
    def state(self) -> dict[str, Any]:
        """The shared state as the run's calls have left it."""
        return self._calls.state

    def _end_part(self) -> None:
        kind = self._open
        if kind is not None:
            self._open = None
            self._outlet.emit(
                PartEnded(
                    run_id=self.run_id, seq=self._outlet.next_seq(), part=self._parts - 1, kind=kind
                )
            )

    # --- the run ----------------------------------------------------------------------------

    async def execute(self) -> None:
        """Run to one terminal event. Cancellation by the token becomes ``run_cancelled`` (or
        ``run_failed``, for a token that stopped the run as a failure); any other
        cancellation propagates after the partial history is recorded."""
        try:
            await self._run()
        except asyncio.CancelledError:
            token = self.input.cancel
            if token is not None and token.cancelled:
                self._outlet.emit(self.stopped(token))
                self._outlet.closed = True
                return
            self._record_partial()
            self._outlet.closed = True
            raise
        except ProviderError as exc:
            self._record_partial()
            self._fail(exc.kind, exc.message)
        except Exception:
            log.exception("run %s failed", self.run_id)
            self._record_partial()
            self._fail("internal", INTERNAL_ERROR_MESSAGE)

    def stopped(self, token: CancelToken) -> RunCancelled | RunFailed:
        """The terminal event of a run its token stopped, after recording what it had
        produced: ``run_cancelled``, or ``run_failed`` when the token said why it failed
        (:meth:`CancelToken.fail`: a limit crossed). Also used when the token fired before
        the loop's task got to run."""
        self._record_partial()
        self._end_part()
        seq = self._outlet.next_seq()
        if token.failure is not None:
            kind, message = token.failure
            return RunFailed(run_id=self.run_id, seq=seq, kind=kind, message=message)
        return RunCancelled(run_id=self.run_id, seq=seq, reason=token.reason or "cancelled")

    def _fail(self, kind: str, message: str) -> None:
        self._end_part()
        self._outlet.emit(
            RunFailed(run_id=self.run_id, seq=self._outlet.next_seq(), kind=kind, message=message)
        )
        self._outlet.closed = True

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
        resume = run_input.resume
        if resume is not None:
            self._resumed(resume)
        if resume is None or resume.seq == 0:  # a run taken over before its first event starts
            self._outlet.emit(
                RunStarted(
                    run_id=self.run_id,
                    seq=self._outlet.next_seq(),
                    conversation_id=run_input.conversation_id,
                    conversation_title=run_input.conversation_title,
                    user_id=run_input.principal.user_id,
                    model=f"{self.provider.name}:{self.provider.model}",
                    tool_names=(*by_name, *client),
                )
            )
            if run_input.state is not None:
                self._outlet.emit(
                    StateSnapshot(
                        run_id=self.run_id, seq=self._outlet.next_seq(), state=self._calls.state
                    )
                )
        if fallback is not None:
            self._outlet.emit(replace(fallback, seq=self._outlet.next_seq()))
        # Let the runs starting alongside this one send their first event before this one
        # builds its model request: in a burst of new chats, each says it is thinking as soon
        # as its message is stored, instead of after the model requests of those before it.
        await asyncio.sleep(0)
        messages: list[Message] = list(run_input.history)
        waiting = open_calls(messages)
        if resume is not None:
            pass  # the history ends with the run's own stored messages, its question included
        elif waiting and run_input.answers:
            await self._calls.answer(
                messages, waiting, run_input.answers, by_name, self.new_messages.append
            )
        elif messages and isinstance(messages[-1], ToolResultsMessage) and messages[-1].pending:
            # A new message instead of answers: the open calls get "not answered" results.
            messages = provider_history(messages, keep_open=False)
        if resume is None and (run_input.message or run_input.attachments or not run_input.answers):
            messages.append(
                UserMessage(content=run_input.message, attachments=tuple(run_input.attachments))
            )
        system = run_input.system if run_input.system is not None else agent.instructions
        self._summarizing = self._summarizing and agent.context_limits.summarize
        max_turns = run_input.max_turns or agent.max_turns
        model = f"{self.provider.name}:{self.provider.model}"
        profile = agent.profile(model)
        files = RunFiles(run_input.files, model, profile)
        budget = ContextBudget(
            model,
            profile,
            agent.context_limits,
            agent.learned_windows,
            system=system,
            tools=specs,
            current=_latest_question(messages),
        )
        template = ChatRequest(
            system=system,
            messages=(),
            tools=specs,
            max_tokens=run_input.max_tokens or agent.max_tokens,
            temperature=(
                run_input.temperature if run_input.temperature is not None else agent.temperature
            ),
            options={**agent.model_options, **run_input.model_options},
        )
        budget.summarized(self._summary)
        first = 0
        if resume is not None:
            if await self._finish_rounds(resume, messages, by_name, client):
                return
            first = resume.turn
        for turn in range(first, max_turns):
            if not (resume is not None and turn == first and resume.turn_open):
                self._outlet.emit(
                    TurnStarted(run_id=self.run_id, seq=self._outlet.next_seq(), turn=turn)
                )
            assistant = await self._model_turn(turn, messages, template, budget, files)
            self._add(messages, assistant)
            if run_input.cancel is not None and run_input.cancel.cancelled:
                # Stopped while the turn streamed without pausing (its stop lands at the next
                # await): the turn is kept, the run ends as its token says.
                raise asyncio.CancelledError
            if not assistant.tool_calls:
                self._outlet.emit(
                    TurnFinished(
                        run_id=self.run_id, seq=self._outlet.next_seq(), turn=turn, reason="stop"
                    )
                )
                retry = self._check_answer(assistant.text)
                if retry is None:
                    self._complete()
                    return
                self._start_part("text")
                self._outlet.emit(
                    TextDelta(run_id=self.run_id, seq=self._outlet.next_seq(), text=retry.notice)
                )
                self._end_part()
                self._segments.pop()  # only the rejected answer; earlier turns stand
                self._add(messages, UserMessage(content=retry.user_message))
                continue
            if turn == max_turns - 1:
                break
            results = await self._calls.run(by_name, client, text_offset=len(self._message()))
            self._add(messages, results)
            self._outlet.emit(
                TurnFinished(
                    run_id=self.run_id, seq=self._outlet.next_seq(), turn=turn, reason="tool_calls"
                )
            )
            if results.pending:
                self._complete(results.pending)
                return
        self._add(messages, self._calls.unfinished("Not run: " + MAX_TURNS_MESSAGE, "error"))
        self._fail("max_turns", MAX_TURNS_MESSAGE)

    def _resumed(self, resume: Resumption) -> None:
        """Go on with a run taken over from a worker that died: its numbering and answer so
        far, the part it left open ended, and ``run_resumed`` said (unless its log is empty:
        then it starts as any run does)."""
        outlet = self._outlet
        outlet.seq = resume.seq
        self._parts = resume.parts
        self._segments = list(resume.segments)
        self._usage = resume.usage
        self._meter.carried(resume.usage)
        self._calls.resumed(resume)
        if resume.open_part is not None:
            self._open = resume.open_part
            self._end_part()
        if resume.seq:  # its followers have seen some of it
            outlet.emit(RunResumed(run_id=self.run_id, seq=outlet.next_seq()))

    async def _finish_rounds(
        self,
        resume: Resumption,
        messages: list[Message],
        tools: dict[str, Tool],
        client: dict[str, ClientTool],
    ) -> bool:
        """Finish the tool rounds of a run taken over that the store does not hold (see
        :meth:`ToolCalls.finish`); whether the run ended there (a round waits for the
        client or an approval)."""
        for round_ in resume.rounds:
            if round_.assistant is not None:
                self._add(messages, round_.assistant)
                self._segments.append(round_.assistant.text)
            results = await self._calls.finish(
                round_,
                tools,
                client,
                text_offset=len(self._message()),
                approved=round_.assistant is None,
            )
            self._add(messages, results)
            if round_.assistant is None:
                # The approved calls' results join those of the turn they answer.
                messages[:] = provider_history(messages, keep_open=False)
            elif not round_.ended:
                self._outlet.emit(
                    TurnFinished(
                        run_id=self.run_id,
                        seq=self._outlet.next_seq(),
                        turn=round_.turn,
                        reason="tool_calls",
                    )
                )
            if results.pending:
                self._complete(results.pending)
                return True
        return False

    async def _model_turn(
        self,
        turn: int,
        messages: list[Message],
        template: ChatRequest,
        budget: ContextBudget,
        files: RunFiles,
    ) -> AssistantMessage:
        """Call the model with ``messages`` fitted into its window: once, or twice when the
        vendor refuses the first request as too long before anything streamed."""
        max_tokens = template.max_tokens
        sent = await self._fit(messages, template, budget)
        try:
            return await self._stream_turn(turn, await self._request(template, sent, files))
        except ContextOverflow as refusal:
            if self._answered() or not budget.refused(refusal, sent, max_tokens):
                raise
        # The vendor counts more than the estimate did: send less, once. What it said of its
        # window is kept for the next runs of this model too.
        sent = await self._fit(messages, template, budget)
        self._warn(
            "context_overflow",
            "The conversation was too long for the model; earlier parts of it were left out "
            "of this answer.",
        )
        return await self._stream_turn(turn, await self._request(template, sent, files))

    async def _fit(
        self, messages: list[Message], template: ChatRequest, budget: ContextBudget
    ) -> Compaction:
        """What to send of ``messages``: fitted into the window, after summarizing the
        exchanges that would be left out (when summaries are on)."""
        max_tokens = template.max_tokens
        sent = budget.fit(messages[self._skip :], max_tokens, start=self._skip)
        if sent.dropped and self._summarizing:
            await self._summarize(messages, template, budget)
            sent = budget.fit(messages[self._skip :], max_tokens, start=self._skip)
        self._compacted(sent)
        self._context = budget.report(sent, max_tokens, self._summary)
        return sent

    async def _summarize(
        self, messages: list[Message], template: ChatRequest, budget: ContextBudget
    ) -> None:
        """Summarize the oldest exchanges sent so far, enough of them that the rest leaves
        room to grow (:meth:`ContextBudget.to_summarize`)."""
        view = messages[self._skip :]
        upto = budget.to_summarize(view, template.max_tokens, start=self._skip)
        window = budget.window
        if not upto or window is None:
            return
        covered = view[:upto]
        exchanges = sum(isinstance(m, UserMessage) for m in covered)
        summarizer = Summarizer(
            self.provider,
            window=window,
            max_tokens=budget.summary_tokens,
            meter=self._meter,
            options=dict(template.options),
        )
        try:
            summary, used = await summarizer.summarize(self._summary, covered, exchanges)
        except ProviderError as exc:
            log.warning("run %s could not summarize: %s", self.run_id, exc.message)
            summary, used = None, None
        if used is not None:
            self._usage = self._usage + used
        if summary is None:
            self._summarizing = False
            self._warn(
                "context_summary_failed",
                "The earlier conversation could not be summarized; the model reads the latest "
                "messages only.",
            )
            return
        self._summary = summary
        self._skip += upto
        self._skipped += exchanges
        budget.summarized(summary)
        self._outlet.emit(
            ContextSummarized(
                run_id=self.run_id,
                seq=self._outlet.next_seq(),
                summary=summary.text,
                exchanges=summary.exchanges,
                covered=self._skipped,
            )
        )

    async def _request(
        self, template: ChatRequest, sent: Compaction, files: RunFiles
    ) -> ChatRequest:
        return replace(
            template,
            system=with_summary(template.system, self._summary),
            messages=sent.messages,
            files=await files.for_request(sent.messages),
        )

    def _compacted(self, sent: Compaction) -> None:
        """Say once per run that the model reads less than the conversation holds."""
        if sent.changed and not self._told_compacted:
            self._told_compacted = True
            self._warn(
                "context_compacted",
                "The conversation is longer than the model's context window: it reads the "
                "latest messages in full and less of the earlier ones."
                if sent.dropped or sent.placeholders
                else "A tool result is longer than the model's context window allows: the "
                "model reads it cut down.",
            )

    def _warn(self, code: str, message: str) -> None:
        self._outlet.emit(
            RunWarning(run_id=self.run_id, seq=self._outlet.next_seq(), code=code, message=message)
        )

    def _answered(self) -> bool:
        """Whether the turn in progress streamed anything (then it cannot be asked again)."""
        turn = self._turn
        return turn is not None and (turn.has_content or bool(turn.calls))

    def _add(self, messages: list[Message], message: Message) -> None:
        messages.append(message)
        self.new_messages.append(message)
        if isinstance(message, ToolResultsMessage):
            self._calls.round_ended()

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
        # A tool only a view calls (``visibility=("app",)``) is never offered to the model.
        return [t for t in tools if "model" in t.visibility], None

    # --- one model turn -------------------------------------------------------------------

    async def _stream_turn(self, turn: int, request: ChatRequest) -> AssistantMessage:
        builder = TurnBuilder(self.provider.name)
        self._turn = builder
        meter = self._meter
        meter.begin(request)
        answering: str | None = None
        """The model that answers, as the vendor named it."""
        outlet = self._outlet
        run_id, emit, next_seq = self.run_id, outlet.emit, outlet.next_seq
        put = outlet.put  # the per-delta path: no extra calls, the run is open here
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
                        seq = outlet.seq
                        outlet.seq = seq + 1
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
                        call = self._calls.call(call_id, name, data)
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
                    case MessageComplete(usage=usage, stop_reason=stop):
                        self._end_part()
                        self._stop = stop
                        self._usage = self._usage + usage
                        meter.completed(usage, builder.output_characters)
                        emit(
                            UsageEvent(
                                run_id=run_id,
                                seq=next_seq(),
                                usage=usage,
                                turn=turn,
                                stop_reason=stop,
                                model=answering,
                            )
                        )
                    case MessageStart(model=model, usage=counted):
                        answering = model
                        meter.answering(counted)
                    case TextChunk():
                        pass
        self._end_part()
        self._turn = None
        self._calls.running = list(builder.calls.values())
        message = builder.message()
        self._segments.append(message.text)
        return message

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
        self._outlet.emit(
            RunCompleted(
                run_id=self.run_id,
                seq=self._outlet.next_seq(),
                message=self._message(),
                usage=self._usage,
                tool_history=tuple(sorted(self._calls.history, key=lambda h: h.index)),
                payloads=tuple(self._calls.payloads),
                pending_calls=pending,
                stop_reason=self._stop,
                context=self._context,
            )
        )
        self._outlet.closed = True

    def _record_partial(self) -> None:
        """Keep what the interrupted run produced: the partial text of a turn in progress, or
        the results of the tools that finished."""
        if self._turn is not None:
            self._meter.cut_short(self._turn.output_characters)
            if self._turn.has_content:
                self.new_messages.append(self._turn.message(complete_calls=False))
            self._turn = None
        elif self._calls.running:
            self.new_messages.append(self._calls.unfinished(INTERRUPTED_MESSAGE, "interrupted"))
            self._calls.running = []


def _latest_question(messages: Sequence[Message]) -> int | None:
    """Where the run's exchange starts: its user message, or (a run that completes an open
    turn) the latest one of the history."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], UserMessage):
            return index
    return None
