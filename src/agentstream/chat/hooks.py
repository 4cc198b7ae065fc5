"""``ChatHooks``: the chat semantics plugged into the run pipeline (:class:`RunHooks`).

Before the loop (:meth:`ChatHooks.prepare`), in this order: a server action sent back by the
client runs (an unknown one raises :class:`~agentstream.chat.actions.UnknownAction` from
:meth:`ChatHooks.check`, which the runner calls before it stores the user message); the
request's ``context_type`` and page, tab and subtab become tool scopes; the system prompt is
assembled from its sections.

After the loop answered (:meth:`ChatHooks.shape`): ``MARKER: {json}`` payloads and suggested
values and actions are parsed out of the message (the rest of it stays exactly as the model
wrote and the client streamed it, and each tool call's ``text_offset`` follows the cuts),
every payload gets an id and a summary, ``custom_payload`` is the run's last payload or else
its tool history, and diagnostics are attached when the request enables them.
``raw_response`` keeps the text as the model wrote it. Tool markers are the presenters'
(the chat tray places ``[[tool:N]]`` from the offsets).

``ChatHooks()`` with no configuration is a sensible default for any agent.
"""

from __future__ import annotations

import inspect
import logging
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agentstream.agent import Agent, AnswerCheck, RunInput
from agentstream.chat.actions import ActionCall, ClientAction, MissingAction
from agentstream.chat.config import ChatConfig, ContextType
from agentstream.chat.context import render_context
from agentstream.chat.diagnostics import build_diagnostics
from agentstream.chat.fields import check_context_fields
from agentstream.chat.jsonblocks import Cut
from agentstream.chat.language import LanguageGuard
from agentstream.chat.markers import tool_history_payload
from agentstream.chat.pages import Location
from agentstream.chat.payloads import describe_payload_types, payload_manifest
from agentstream.chat.prompt import SystemPrompt, build_system_prompt, render_capabilities
from agentstream.chat.suggestions import (
    ACTIONS_MARKER,
    VALUES_MARKER,
    extract_suggestions,
    suggestion_instructions,
)
from agentstream.events import AnswerShaped, Payload, RunCompleted, ToolHistoryEntry
from agentstream.messages import Message
from agentstream.runs.hooks import Preparation
from agentstream.runs.request import RunRequest
from agentstream.tools import Toolset

__all__ = ["ACTION_EXECUTED", "ChatHooks"]

log = logging.getLogger("agentstream.chat")

ACTION_EXECUTED = "action_executed"
"""The ``interaction_type`` of a request that sends back a server action."""


class ChatHooks:
    """:class:`~agentstream.runs.RunHooks` configured by a :class:`ChatConfig`. Holds no
    per-run state, so one instance serves every run of a runner. The pages' tools (built with
    the configuration, :attr:`ChatConfig.page_tools`) join the agent's toolset under their
    scopes when the hooks are given to a runner (:meth:`attach`), before any request."""

    def __init__(self, config: ChatConfig | None = None) -> None:
        self.config = config or ChatConfig()
        self._installed: weakref.WeakSet[Toolset] = weakref.WeakSet()
        self.answer_markers: Sequence[str] = (
            VALUES_MARKER,
            ACTIONS_MARKER,
            *(t.marker for t in self.config.payload_types if t.source == "llm" and t.marker),
        )

    # --- before the loop ------------------------------------------------------------------

    def check(self, request: RunRequest) -> None:
        """Reject a request whose server action cannot run, or whose context sets a declared
        field to a value it does not allow, before the runner stores anything. Raises
        ``ValueError`` (:class:`~agentstream.chat.actions.ActionError` for actions): a 400."""
        check_context_fields(self.config.context_fields, request.context)
        if request.action is not None:
            self.config.server_actions.get(request.action.action)
        elif request.interaction_type == ACTION_EXECUTED:
            raise MissingAction()

    async def prepare(
        self,
        agent: Agent,
        request: RunRequest,
        history: Sequence[Message],
        payloads: Sequence[Payload],
    ) -> Preparation:
        # Where the request stands is worked out once: the prompt and the run both use it.
        situation = self._situate(request)
        message = await self._run_action(request)
        prompt = await self._system_prompt(agent, request, payloads, situation)
        return Preparation(
            system=prompt.text,
            scopes=situation.scopes,
            message=message,
            answer_checks=self.answer_checks(agent, request),
            max_turns=self.config.max_turns,
            tool_options=situation.options,
        )

    def _situate(self, request: RunRequest) -> _Situation:
        """The request's context type, page and tool options, and the scopes they give
        (raises for a context field value its declaration does not allow)."""
        config = self.config
        context_type = config.effective_context_type(request.context_type)
        location = config.locate(request.context)
        options = self.tool_options(request)
        return _Situation(
            context_type=context_type,
            kind=config.context_type(context_type),
            location=location,
            options=options,
            scopes=config.scopes(context_type, location, options),
        )

    def tool_options(self, request: RunRequest) -> Mapping[str, Any]:
        """The request's tool options over those its context fields give (a protocol's own
        option, such as the playground's ``ragEnabled``, wins over the context's)."""
        from_fields = check_context_fields(self.config.context_fields, request.context)
        return {**from_fields, **request.tool_options} if from_fields else request.tool_options

    def answer_checks(self, agent: Agent, request: RunRequest) -> tuple[AnswerCheck, ...]:
        """A :class:`LanguageGuard` when the request requires a language (the workflow assistant:
        English) and the agent does not guard the language itself."""
        language = request.protocol.response_language
        if language is None or any(isinstance(c, LanguageGuard) for c in agent.answer_checks):
            return ()
        return (LanguageGuard(language=language),)

    async def run_action(self, request: RunRequest) -> str | None:
        """Run the server action the request sends back; its outcome is the user turn the
        model answers. ``None`` when the request carries no action."""
        self.check(request)
        return await self._run_action(request)

    async def _run_action(self, request: RunRequest) -> str | None:
        """:meth:`run_action` after :meth:`check` (the action is looked up again to run)."""
        if request.action is None:
            return None
        call = ActionCall(
            action=request.action.action,
            data=request.action.data,
            principal=request.principal,
            context=request.context,
            conversation_id=request.conversation_id,
        )
        return await self.config.server_actions.run(call, label=request.message.strip())

    async def system_prompt(
        self, agent: Agent, request: RunRequest, payloads: Sequence[Payload] = ()
    ) -> SystemPrompt:
        """The system prompt this request gets (also useful to inspect a configuration)."""
        return await self._system_prompt(agent, request, payloads, self._situate(request))

    async def _system_prompt(
        self,
        agent: Agent,
        request: RunRequest,
        payloads: Sequence[Payload],
        situation: _Situation,
    ) -> SystemPrompt:
        config = self.config
        kind, location = situation.kind, situation.location
        identity = location.identity or (kind.identity if kind else None) or config.identity
        parts = {
            "identity": identity or agent.instructions,
            "tool_guidance": _choose(kind.tool_guidance if kind else None, config.tool_guidance),
            "context": render_context(
                request.context,
                preamble=config.context_preamble,
                ids=config.context_ids,
                page_text=await _page_text(location, request),
                secret_keys=config.secret_keys,
            ),
            "payload_manifest": payload_manifest(payloads),
            "capabilities": self._capabilities(agent, request, situation.scopes, location),
            "custom_instructions": "\n\n".join(
                self._instructions(request, location, kind.instructions if kind else None)
            ),
            "guidelines": _choose(kind.guidelines if kind else None, config.guidelines),
        }
        layout = config.layout if situation.context_type is None else config.context_type_layout
        return build_system_prompt(parts, layout)

    def attach(self, agent: Agent) -> None:
        """Add the pages' tools to ``agent``'s toolset under their scopes (once per toolset).
        :class:`~agentstream.runs.Runner` calls it when it is built with these hooks; call it
        yourself to use the hooks without a runner."""
        toolset = agent.toolset
        if toolset in self._installed:
            return
        toolset.include(self.config.page_tools)
        self._installed.add(toolset)

    def _capabilities(
        self, agent: Agent, request: RunRequest, scopes: Sequence[str], location: Location
    ) -> str | None:
        config = self.config
        tools = agent.toolset.resolve(scopes) if config.list_tools else ()
        if not request.protocol.suggestions:
            # The client cannot show suggestions, actions or written payloads (workflow assistant,
            # data playground, ops agent): asking for them would put their marker lines in the
            # streamed text.
            return render_capabilities(tools=tools)
        actions: dict[str, ClientAction] = {}
        for action in (*config.client_actions, *location.client_actions()):
            actions.setdefault(action.name, action)  # an action named twice is listed once
        server = list(config.server_actions)
        available = config.registry.available(location.payload_types())
        return render_capabilities(
            tools=tools,
            payload_types=describe_payload_types(available),
            client_actions=list(actions.values()),
            server_actions=server,
            suggestions=(
                suggestion_instructions(with_actions=bool(actions or server))
                if config.suggestions
                else None
            ),
        )

    def _instructions(
        self, request: RunRequest, location: Location, for_kind: str | None
    ) -> list[str]:
        configured = self.config.instructions
        general = configured(request) if callable(configured) else configured
        return [text for text in (general, for_kind, *location.instructions()) if text]

    # --- after the loop -------------------------------------------------------------------

    def shape(
        self, agent: Agent, request: RunRequest, run_input: RunInput, completed: RunCompleted
    ) -> AnswerShaped:
        """The answer shaped for the client. Shaping never fails a run that answered: if it
        breaks (a bug, an application callback), the answer goes out as the model wrote it."""
        try:
            return self._shape(agent, request, run_input, completed)
        except Exception:
            log.exception("could not shape the answer of run %s", completed.run_id)
            return AnswerShaped(
                run_id=completed.run_id,
                seq=completed.seq,
                message=completed.message,
                payloads=completed.payloads,
            )

    def _shape(
        self, agent: Agent, request: RunRequest, run_input: RunInput, completed: RunCompleted
    ) -> AnswerShaped:
        config = self.config
        registry = config.registry
        location = config.locate(request.context)
        raw = completed.message
        extracted = registry.extract(raw, registry.available(location.payload_types()))
        suggestions = extract_suggestions(extracted.text, server_actions=config.server_actions)
        history = _moved(completed.tool_history, extracted.cut, suggestions.cut)
        payloads = (
            *(registry.complete(p) for p in completed.payloads),
            *extracted.payloads,
        )
        custom = None
        if payloads:
            custom = payloads[-1]
        elif completed.tool_history and config.tool_history_payload:
            custom = tool_history_payload(completed.tool_history)
        diagnostics = None
        if request.diagnostics:
            diagnostics = build_diagnostics(
                agent,
                request,
                run_input,
                tool_names=[t.name for t in agent.toolset.resolve(run_input.scopes)],
                raw_response=raw,
                problems=[*extracted.problems, *suggestions.problems],
                secret_keys=config.secret_keys,
                context=completed.context,
            )
        return AnswerShaped(
            run_id=completed.run_id,
            seq=completed.seq,
            message=suggestions.text,
            tool_history=history,
            payloads=payloads,
            suggested_values=suggestions.values,
            suggested_actions=suggestions.actions,
            custom_payload=custom,
            diagnostics=diagnostics,
        )


@dataclass(frozen=True, slots=True)
class _Situation:
    """Where a request stands, as :meth:`ChatHooks.prepare` works it out once."""

    context_type: str | None
    kind: ContextType | None
    location: Location
    options: Mapping[str, Any]
    scopes: list[str]


def _moved(
    history: tuple[ToolHistoryEntry, ...], *cuts: Cut | None
) -> tuple[ToolHistoryEntry, ...]:
    """``history`` with each ``text_offset`` where the ``cuts`` (the marker blocks taken out
    of the message, in order) moved it."""
    steps = [c for c in cuts if c is not None and c.steps]
    if not steps:
        return history
    combined = steps[0]
    for later in steps[1:]:
        combined = combined.then(later)
    return tuple(replace(e, text_offset=combined.moved(e.text_offset)) for e in history)


def _choose(override: str | None, default: str | None) -> str | None:
    """A context type's section text: ``None`` keeps the default, ``""`` removes it."""
    return default if override is None else override


async def _page_text(location: Location, request: RunRequest) -> str | None:
    found = location.context_builder
    if found is None:
        return None
    name, build = found
    try:
        text = build(request.context)
        if inspect.isawaitable(text):
            text = await text
    except Exception:  # the chat still works with the raw context
        log.exception("the context builder of %r failed", name)
        return None
    return text
