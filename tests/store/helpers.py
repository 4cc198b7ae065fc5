"""Helpers shared by the store tests."""

from __future__ import annotations

import uuid

from agentstream.events import RunCompleted
from agentstream.messages import AssistantMessage
from agentstream.principal import Principal
from agentstream.store import SqlConversationStore


def new_principal(tenant_id: str | None = None) -> Principal:
    """A user of their own (random ids), so tests sharing a database stay apart."""
    return Principal(
        user_id=f"user-{uuid.uuid4().hex[:8]}",
        tenant_id=tenant_id if tenant_id is not None else f"tenant-{uuid.uuid4().hex[:8]}",
    )


def run_id() -> str:
    return f"run-{uuid.uuid4().hex}"


async def exchange(
    store: SqlConversationStore,
    principal: Principal,
    question: str,
    answer: str,
    conversation_id: str | None = None,
) -> str:
    """One whole run: the user asks, the assistant answers. Returns the conversation id."""
    rid = run_id()
    started = await store.start_run(
        principal, run_id=rid, conversation_id=conversation_id, user_message=question
    )
    await store.finish_run(
        principal,
        run_id=rid,
        conversation_id=started.conversation_id,
        messages=[AssistantMessage(text=answer)],
        status="completed",
        completed=RunCompleted(run_id=rid, seq=3, message=answer),
    )
    return started.conversation_id
