"""How response semantics plug into the run pipeline without the loop knowing.

``agentstream.chat`` implements :class:`RunHooks` (system prompt sections, scoped tools,
payload markers, suggested values and actions, diagnostics). The default hooks change
nothing, so a bare agent works as-is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from agentstream.agent import Agent, AnswerCheck, RunInput
from agentstream.events import AnswerShaped, Payload, RunCompleted
from agentstream.messages import Message
from agentstream.runs.request import RunRequest

__all__ = ["NoHooks", "Preparation", "RunHooks", "ToolContributor"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Preparation:
    system: str | None = None
    """The system prompt for this request; ``None`` keeps the agent's instructions."""
    scopes: Sequence[str] = ()
    """Tool scopes for this request."""
    message: str | None = None
    """The user message as the model should see it (e.g. a server action's outcome);
    ``None`` keeps the request's message."""
    answer_checks: Sequence[AnswerCheck] = ()
    """Checks on the final answer for this request, besides the agent's own."""
    max_turns: int | None = None
    """The turn limit for this request; ``None`` keeps the request's (its dialect's)."""
    tool_options: Mapping[str, Any] | None = None
    """The options tools see (``ToolContext.options``); ``None`` keeps the request's."""


@runtime_checkable
class RunHooks(Protocol):
    """What a runner asks of response semantics. Hooks that bring tools of their own are also
    a :class:`ToolContributor`."""

    answer_markers: Sequence[str]
    """The marker lines (``SUGGESTED_VALUES:``, ...) these hooks parse out of the model's
    answer; dialects withhold them from the streamed text."""

    def check(self, request: RunRequest) -> None:
        """Refuse a request the hooks cannot serve (an unknown server action, a context value
        out of its choices) by raising :class:`~agentstream.runs.RefusedRequest`, a 400 naming
        its field, before the user message is stored."""
        ...

    async def prepare(
        self,
        agent: Agent,
        request: RunRequest,
        history: Sequence[Message],
        payloads: Sequence[Payload],
    ) -> Preparation:
        """Before the loop, after :meth:`check` accepted the request: build the system
        prompt and choose tool scopes."""
        ...

    def shape(
        self, agent: Agent, request: RunRequest, run_input: RunInput, completed: RunCompleted
    ) -> AnswerShaped | None:
        """After the loop answered: the answer as a chat client shows it (markers parsed,
        suggested values and actions, diagnostics), sent just before ``run_completed``;
        ``None`` when there is nothing to shape. Its ``seq`` is set by the runner."""
        ...


@runtime_checkable
class ToolContributor(Protocol):
    """Hooks that bring tools of their own (the chat pages'): the runner calls :meth:`attach`
    once, when it is built, so they join the agent's toolset before the first request."""

    def attach(self, agent: Agent) -> None:
        """Add the hooks' tools to ``agent``'s toolset (once per toolset)."""
        ...


class NoHooks:
    answer_markers: Sequence[str] = ()

    def check(self, request: RunRequest) -> None:
        return None

    async def prepare(
        self,
        agent: Agent,
        request: RunRequest,
        history: Sequence[Message],
        payloads: Sequence[Payload],
    ) -> Preparation:
        scopes = (request.context_type,) if request.context_type else ()
        return Preparation(scopes=scopes)

    def shape(
        self, agent: Agent, request: RunRequest, run_input: RunInput, completed: RunCompleted
    ) -> AnswerShaped | None:
        return None
