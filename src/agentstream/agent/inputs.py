"""What one run is asked to do, and the hooks that shape a final answer."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agentstream.agent.summaries import ContextSummary
from agentstream.attachments.owned import AttachmentContent, AttachmentKeeper
from agentstream.attachments.types import Attachment
from agentstream.messages import Message
from agentstream.pending import Answers, ClientTool
from agentstream.principal import ANONYMOUS, Principal

if TYPE_CHECKING:
    from agentstream.agent.resumption import Resumption

__all__ = ["AnswerCheck", "CancelToken", "Retry", "RunInput"]


class CancelToken:
    """Cancels a run from outside the task consuming it (a stop button, a disconnect).

    The run stops at its next await, closes the provider stream, cancels running tools, and
    ends with ``run_cancelled``.
    """

    __slots__ = ("_callbacks", "failure", "reason")

    def __init__(self) -> None:
        self.reason: str | None = None
        self.failure: tuple[str, str] | None = None
        """``(kind, message)`` when the run was stopped as a failure (:meth:`fail`)."""
        self._callbacks: list[Any] = []

    @property
    def cancelled(self) -> bool:
        return self.reason is not None

    def cancel(self, reason: str = "cancelled") -> None:
        if self.reason is not None:
            return
        self.reason = reason
        for callback in self._callbacks:
            callback(reason)

    def fail(self, kind: str, message: str) -> None:
        """Stop the run as :meth:`cancel` does, but have it end with ``run_failed`` (``kind``,
        ``message``) rather than ``run_cancelled``: the run was stopped by a rule, not by a
        person (a token budget crossed mid-answer). Its partial answer is kept either way."""
        if self.reason is None:
            self.failure = (kind, message)
            self.cancel(message)

    def on_cancel(self, callback: Any) -> None:
        """Call ``callback(reason)`` on cancel (at once if already cancelled)."""
        if self.reason is not None:
            callback(self.reason)
        else:
            self._callbacks.append(callback)

    def forget(self, callback: Any) -> None:
        """No longer call ``callback`` (given to :meth:`on_cancel`); nothing if it is gone."""
        with contextlib.suppress(ValueError):
            self._callbacks.remove(callback)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInput:
    """One user message to answer, with everything around it. Fields left ``None`` take the
    agent's defaults.

    A run that continues after pending tool calls carries their ``answers`` (``history``
    ends with the open turn); its ``message`` may then be empty (no new user message)."""

    message: str
    attachments: Sequence[Attachment] = ()
    """Files the message carries (already checked: the caller's, within the limits)."""
    files: AttachmentContent | None = None
    """Where the content of the history's attachments is read from (none: a history with
    attachments fails the run)."""
    keeper: AttachmentKeeper | None = None
    """Where files the run's tools make are kept (``ToolContext.attach``; none: they
    cannot)."""
    history: Sequence[Message] = ()
    summary: ContextSummary | None = None
    """A summary of the conversation before ``history`` (its earlier exchanges, left out of
    it): the model reads it in their place (see :mod:`agentstream.agent.summaries`)."""
    summarize: bool = False
    """Whether exchanges about to be left out of a request are summarized (when the agent's
    ``ContextLimits.summarize`` is on too). A caller turns it on when it keeps the summary
    (the ``context_summarized`` event) and hands it back with the next run's shortened
    history, as the server's runner does with its store: a caller that passes the whole
    history every time would pay for the same summary every run."""
    answers: Answers | None = None
    """Results and approval decisions for the calls the history's last turn left open."""
    client_tools: Sequence[ClientTool] = ()
    """Frontend tools: offered to the model beside the agent's tools; a call to one ends the
    run with the call pending (see :mod:`agentstream.pending`)."""
    principal: Principal = ANONYMOUS
    context: Any = None
    state: Mapping[str, Any] | None = None
    """The shared state the run starts from (:mod:`agentstream.state`), announced in a
    ``state_snapshot``; ``None``: there is none yet (tools still get an empty object to
    write in)."""
    conversation_id: str | None = None
    conversation_title: str | None = None
    run_id: str | None = None
    scopes: Sequence[str] = ()
    """Tool scopes for this run (see :class:`agentstream.tools.Toolset`)."""
    system: str | None = None
    """A system prompt built for this request; replaces the agent's instructions."""
    model: str | None = None
    temperature: float | None = None
    max_turns: int | None = None
    max_tokens: int | None = None
    model_options: Mapping[str, Any] = field(default_factory=dict)
    tool_options: Mapping[str, Any] = field(default_factory=dict)
    """Passed to tools as ``ToolContext.options``."""
    answer_checks: Sequence[AnswerCheck] = ()
    """Checks on the final answer for this run, after the agent's own."""
    cancel: CancelToken | None = None
    resume: Resumption | None = None
    """Go on with a run that a worker that died had begun (its ``history`` then ends with
    the run's own stored messages, its question included): see
    :mod:`agentstream.agent.resumption`."""
    durable: Callable[[], Awaitable[None]] | None = None
    """Waits until the events emitted so far are where another worker can read them (the
    run's shared log); awaited before a round's tools start, so that a worker taking the run
    over knows every call whose tool may have run."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Retry:
    """Ask the model again: ``user_message`` goes to the model, ``notice`` to the client."""

    user_message: str
    notice: str


class AnswerCheck(Protocol):
    """Inspects a final answer and may ask for one retry (the workflow protocol's retry of answers
    in the wrong language, generalised by :class:`agentstream.chat.LanguageGuard`). Each check fires
    at most once per run."""

    def check(self, text: str) -> Retry | None: ...
