"""The conversation store as the run pipeline sees it: four async methods.

The pipeline commits the user message before the model is called, appends the messages of each
finished tool round-trip as the run goes, and finishes the run with the final (or partial)
assistant message and a status. ``agentstream.store`` implements this on SQLAlchemy; anything
else with these methods works too (a test double, a remote service).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from agentstream.errors import ConversationNotFound
from agentstream.events import Payload, RunCompleted
from agentstream.messages import Message
from agentstream.principal import Principal

__all__ = ["ConversationNotFound", "ConversationStore", "RunStatus", "StartedRun"]

RunStatus = Literal["completed", "failed", "cancelled"]


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


class ConversationStore(Protocol):
    async def start_run(
        self,
        principal: Principal,
        *,
        run_id: str,
        conversation_id: str | None,
        user_message: str,
        model: str | None = None,
        metadata: dict[str, Any] | None = None,
        create_if_missing: bool = False,
    ) -> StartedRun:
        """Commit the user message (creating the conversation when ``conversation_id`` is None,
        or when it is unknown and ``create_if_missing``) and return the prior history.
        Raises :class:`ConversationNotFound` for another user's or tenant's conversation."""
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
        error: str | None = None,
    ) -> dict[str, Any]:
        """Commit the rest of the run's messages (the final or partial assistant message),
        mark the run's status (``cancelled``/``failed`` = interrupted), and return the
        conversation as the ops agent's ``conversation`` object: ``{id, title, updated_at,
        conversation: [{role, content, created_at}, ...]}``."""
        ...

    async def set_generated_title(
        self, principal: Principal, conversation_id: str, title: str
    ) -> str | None:
        """Store a title written by the model unless the user renamed the conversation;
        returns the title stored, or None."""
        ...
