"""The conversation store as the run pipeline sees it: four async methods.

The pipeline commits the user message before the model is called, appends the messages of each
finished tool round-trip as the run goes, and finishes the run with the final (or partial)
assistant message and a status. ``agentstream.store`` implements this on SQLAlchemy; anything
else with these methods works too (a test double, a remote service).

Beside them, a store may offer optional capabilities, each a named protocol the server checks
for with ``isinstance``: :class:`InterruptedRuns` (the runs of workers that died are marked
``interrupted`` instead of left ``running``), :class:`QueuedRuns` (a message queued behind the
answer in progress reads the history again when its turn comes), :class:`ResumableRuns` (a
worker takes over the runs of a worker that died), :class:`SharedTurns` (processes sharing
its database take turns in a conversation without Redis), :class:`SharedStates` (the
changes tools make to a conversation's shared state are kept), :class:`KeptSummaries` (the
summaries runs write of a long conversation's start are kept), :class:`ConversationReader`
(the conversations REST API and the AI SDK's reload read conversations back) and
:class:`ConversationEditor` (people rename and delete them), :class:`ConversationTree`
(people switch between the branches of a conversation, edit a question and ask for another
answer) and :class:`UsageReader` (the usage report, ``GET /api/usage``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, Protocol, runtime_checkable

from agentstream.accounting import UsageGroup, UsageLine
from agentstream.agent.summaries import ContextSummary
from agentstream.attachments.types import Attachment
from agentstream.conversation import ConversationDetail, ConversationPage, ConversationSummary
from agentstream.errors import ConversationNotFound
from agentstream.events import AnswerShaped, Payload, RunCompleted, RunUsage
from agentstream.messages import Message, UserMessage
from agentstream.pending import Answers
from agentstream.principal import Principal
from agentstream.runs.request import Branch

__all__ = [
    "ConversationEditor",
    "ConversationNotFound",
    "ConversationReader",
    "ConversationStore",
    "ConversationTree",
    "InterruptedRuns",
    "KeptSummaries",
    "ObservedCommits",
    "QueuedRuns",
    "ResumableRuns",
    "ResumedRun",
    "RunStatus",
    "SharedStates",
    "SharedTurns",
    "StartedRun",
    "UsageReader",
]

RunStatus = Literal["completed", "failed", "cancelled", "interrupted"]
"""How a run ended. ``interrupted``: its worker died before it ended (recorded by another
worker, see :class:`InterruptedRuns`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StartedRun:
    conversation_id: str
    title: str
    history: Sequence[Message]
    """The messages before this run's user message, ready for the provider."""
    metadata: dict[str, Any] = field(default_factory=dict)
    payloads: Sequence[Payload] = ()
    """Payloads produced earlier in the conversation, for the prompt's payload manifest."""
    first_run: bool = False
    """This run opens the conversation (its title came from this message)."""
    asked: UserMessage | None = None
    """For a run that answers a stored question again (``Branch(again=True)``): that
    question, which the run asks the model in place of a new message."""
    summary: ContextSummary | None = None
    """The summary of what comes before ``history``, when the read stopped at one."""
    exchanges: Sequence[str] = ()
    """The ids of ``history``'s user messages, in order (where a summary the run writes is
    kept: :class:`KeptSummaries`); empty from a store that keeps no summaries."""
    state: Mapping[str, Any] | None = None
    """The conversation's shared state as the run starts from it (the page's, when it sent
    one; ``None``: it has none), see :mod:`agentstream.state`."""


class ConversationStore(Protocol):
    async def start_run(
        self,
        principal: Principal,
        *,
        run_id: str,
        conversation_id: str | None,
        user_message: str | None,
        model: str | None = None,
        metadata: dict[str, Any] | None = None,
        create_if_missing: bool = False,
        answers: Answers | None = None,
        branch: Branch | None = None,
        attachments: Sequence[Attachment] = (),
        history_bound: int | None = None,
        state: Mapping[str, Any] | None = None,
    ) -> StartedRun:
        """Commit the user message (creating the conversation when ``conversation_id`` is None,
        or when it is unknown and ``create_if_missing``) and return the prior history.
        Raises :class:`ConversationNotFound` for another user's or tenant's conversation.

        With ``answers`` the history must end with an open turn they answer (else
        :class:`~agentstream.pending.InvalidAnswers`, checked in the same transaction, so
        two requests cannot both answer one call): the
        :func:`~agentstream.pending.answered_message` is committed before the user message,
        which may then be ``None``. A ``branch`` puts the run where it says in the
        conversation's tree instead of after its active leaf, and makes it the active branch
        (:class:`~agentstream.errors.MessageNotFound` for a message the conversation does not
        have, :class:`~agentstream.errors.InvalidBranch` for answering again a message that is
        not the user's). ``attachments`` go with the user message; a store that
        keeps attachment metadata refuses (:class:`~agentstream.errors.AttachmentNotFound`)
        one that is not the caller's.

        ``history_bound`` (characters of stored messages) asks for the latest whole
        exchanges only, as far back as that many characters reach: what the model can be
        sent (see :mod:`agentstream.runs.reading`). The history is then not the whole
        conversation, but it always starts with a user message and keeps the exchange
        the run continues (its open calls too) whole; ``payloads`` are those of the runs
        it holds. None reads it all.

        ``state`` (the page's shared state, :mod:`agentstream.state`) replaces the state
        stored with the conversation, in the same transaction; the result's ``state`` is the
        state the run starts from."""
        ...

    async def append_messages(
        self,
        principal: Principal,
        *,
        run_id: str,
        conversation_id: str,
        messages: Sequence[Message],
    ) -> None:
        """Commit messages produced so far in this run (a finished tool round-trip)."""
        ...

    async def finish_run(
        self,
        principal: Principal,
        *,
        run_id: str,
        conversation_id: str,
        messages: Sequence[Message],
        status: RunStatus,
        completed: RunCompleted | None = None,
        shaped: AnswerShaped | None = None,
        error: str | None = None,
        snapshot: bool = True,
        usage: RunUsage | None = None,
    ) -> ConversationDetail | None:
        """Commit the rest of the run's messages (the final or partial assistant message),
        mark the run's status (``cancelled``/``failed`` = interrupted), keep the answer as
        shown (``shaped``, else the loop's) and what the run used and cost (``usage``, for
        every ending: a run stopped or failed mid-answer paid for its model calls too), and
        return the conversation as it now stands (``None`` without ``snapshot``: reading it
        back costs a query over the whole conversation)."""
        ...

    async def set_generated_title(
        self, principal: Principal, conversation_id: str, title: str
    ) -> str | None:
        """Store a title written by the model unless the user renamed the conversation;
        returns the title stored, or None."""
        ...


@runtime_checkable
class KeptSummaries(Protocol):
    """What a store offers (optionally) to keep the summaries runs write of a conversation's
    start (:mod:`agentstream.agent.summaries`), so that later runs read the summary and what
    follows it rather than summarize again."""

    async def save_summary(
        self,
        principal: Principal,
        *,
        conversation_id: str,
        run_id: str,
        before_id: str,
        summary: ContextSummary,
    ) -> bool:
        """Keep ``summary`` of the conversation before its user message ``before_id`` (one
        of :attr:`StartedRun.exchanges`); whether it was written (one kept there already
        stays). Raises :class:`ConversationNotFound` for another's conversation."""
        ...


@runtime_checkable
class SharedStates(Protocol):
    """What a store offers (optionally) to keep the changes a run's tools make to the shared
    state (:mod:`agentstream.state`); the state a page sends is kept by
    :meth:`ConversationStore.start_run`."""

    async def change_state(
        self,
        principal: Principal,
        conversation_id: str,
        patch: Sequence[Mapping[str, Any]],
    ) -> bool:
        """Apply ``patch`` (JSON Patch) to the conversation's state as stored and keep the
        result; ``False``, with nothing written, when it does not apply (a message stored
        since replaced the part it changes). Raises :class:`ConversationNotFound` for a
        conversation that is not the principal's."""
        ...


@runtime_checkable
class InterruptedRuns(Protocol):
    """What a store offers (optionally) so that runs whose worker died do not stay ``running``
    forever: the runner lists the runs still marked running, asks the broker which of them no
    live worker holds, and marks those ``interrupted``."""

    async def running_runs(self) -> Sequence[str]:
        """The ids of the runs whose row still says ``running``."""
        ...

    async def mark_interrupted(self, run_ids: Sequence[str], error: str) -> int:
        """Mark those of ``run_ids`` still ``running`` as ``interrupted`` (a run that ended
        meanwhile keeps how it ended); returns how many were marked. The worker that really
        runs a run always has the last word: its own end overwrites the mark."""
        ...


@runtime_checkable
class QueuedRuns(Protocol):
    """What a store offers (optionally) so that a message stored while the answer before it
    was still being written is answered with that answer in its history
    (:mod:`agentstream.runs.turns`); without it, a queued run sees the history as it stood
    when its message was stored."""

    async def run_context(
        self,
        principal: Principal,
        conversation_id: str,
        run_id: str,
        history_bound: int | None = None,
    ) -> StartedRun:
        """What :meth:`ConversationStore.start_run` returned for ``run_id``, read again now:
        the history and payloads of the runs before it (as far back as ``history_bound``
        reaches, as there). Raises
        :class:`ConversationNotFound` for a conversation that is not the principal's (and
        :class:`~agentstream.errors.UnknownRun` for a run it does not hold)."""
        ...

    async def runs_before(
        self, principal: Principal, conversation_id: str, run_id: str
    ) -> Sequence[str]:
        """The conversation's runs before ``run_id`` still marked ``running``, oldest first
        (queued messages are answered in the order they were stored)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumedRun:
    """What a worker taking a run over reads of it (:class:`ResumableRuns`)."""

    context: StartedRun
    """The history and payloads before the run, as :meth:`QueuedRuns.run_context` reads
    them."""
    messages: Sequence[Message]
    """The run's own messages so far: its question (or the answers it started from), then
    each tool round it committed."""
    running: bool
    """The run has not ended in the store (one that has is not taken over)."""


@runtime_checkable
class ResumableRuns(Protocol):
    """What a store offers (optionally) so that a run whose worker died is continued by
    another worker from its last committed tool round (see
    :mod:`agentstream.runs.takeover`); without it, such runs end as interrupted."""

    async def resume_context(
        self,
        principal: Principal,
        conversation_id: str,
        run_id: str,
        history_bound: int | None = None,
    ) -> ResumedRun:
        """The run as it stands in the store. Raises :class:`ConversationNotFound` for a
        conversation that is not the principal's (and
        :class:`~agentstream.errors.UnknownRun` for a run it does not hold)."""
        ...


@runtime_checkable
class SharedTurns(Protocol):
    """What a store offers (optionally) so that the processes sharing its database take turns
    in a conversation without Redis (:mod:`agentstream.runs.turns`): a hold the database
    drops when its process ends (see :mod:`agentstream.store.turns`)."""

    async def take_turn(
        self, principal: Principal, conversation_id: str
    ) -> tuple[bool, str | None]:
        """Hold the conversation for this process unless another process does: ``(True,
        None)`` when held now, else ``(False, the run in progress if the store has it yet)``."""
        ...

    async def give_back_turn(self, principal: Principal, conversation_id: str) -> None: ...


@runtime_checkable
class ConversationReader(Protocol):
    """What a store offers (optionally) to read conversations back: a person's list of them,
    one as they read it, and one's history as the model sees it. The server serves
    ``GET /api/conversations`` and the AI SDK's stored messages only from a store that has
    it."""

    async def list_conversations(
        self, principal: Principal, *, limit: int = 20, cursor: str | None = None
    ) -> ConversationPage:
        """The principal's conversations, newest first, a page at a time."""
        ...

    async def get_conversation(
        self, principal: Principal, conversation_id: str
    ) -> ConversationDetail:
        """The conversation as a person reads it. Raises :class:`ConversationNotFound` for
        one that is not the principal's."""
        ...

    async def history(self, principal: Principal, conversation_id: str) -> Sequence[Message]:
        """The conversation's messages as a provider takes them (the active branch)."""
        ...


@runtime_checkable
class ConversationEditor(Protocol):
    """What a store offers (optionally) so people rename and delete their conversations
    (``PATCH`` and ``DELETE /api/conversations/{id}``)."""

    async def rename_conversation(
        self, principal: Principal, conversation_id: str, title: str
    ) -> ConversationSummary:
        """Give the conversation the user's title; the summary as it now stands."""
        ...

    async def delete_conversation(self, principal: Principal, conversation_id: str) -> None:
        """Delete the conversation with its runs and messages."""
        ...


@runtime_checkable
class ConversationTree(Protocol):
    """What a store offers (optionally) so people move about a conversation's branches
    (``/api/conversations/{id}/messages/{message_id}/...``; see ``docs/guides/branches.md``).
    Message ids are those :meth:`ConversationReader.get_conversation` shows: a user
    message's own, an answer's run id. Each raises :class:`ConversationNotFound` for a
    conversation that is not the principal's and
    :class:`~agentstream.errors.MessageNotFound` for a message it does not have."""

    async def siblings(
        self, principal: Principal, conversation_id: str, message_id: str
    ) -> Sequence[str]:
        """The ids of the message and of those in its place on other branches, oldest
        first."""
        ...

    async def set_active(
        self, principal: Principal, conversation_id: str, message_id: str
    ) -> ConversationDetail:
        """Make the branch through the message the active one (down to its newest leaf);
        the conversation as it now reads."""
        ...

    async def branch_for(
        self, principal: Principal, conversation_id: str, message_id: str, *, again: bool
    ) -> Branch:
        """Where a run that edits the message (``again``: answers it again) goes, for
        :attr:`RunRequest.branch <agentstream.runs.RunRequest.branch>`. Only a user message
        is edited (:class:`~agentstream.errors.InvalidBranch`); an answer is answered again
        through the question it answers."""
        ...


@runtime_checkable
class UsageReader(Protocol):
    """What a store offers (optionally) to sum the usage ledger: what runs used and cost
    (:mod:`agentstream.accounting`). The server serves ``GET /api/usage`` only from a store
    that has it."""

    async def usage_report(
        self,
        *,
        first_day: date,
        last_day: date,
        group_by: Sequence[UsageGroup],
        tenant_id: str | None = None,
        user_id: str | None = None,
    ) -> list[UsageLine]:
        """The runs that ended from ``first_day`` to ``last_day`` (UTC days, both included),
        summed by ``group_by`` (in that order), of one tenant and one user when given (a
        tenant id of ``""`` is the callers without one)."""
        ...


@runtime_checkable
class ObservedCommits(Protocol):
    """What a store offers (optionally) so that the server's metrics show how long its
    writes take to commit."""

    def observe_commits(self, callback: Callable[[float], None]) -> None:
        """Call ``callback`` with the seconds each write transaction took to commit."""
        ...
