"""The summaries a conversation's runs wrote of its start (:mod:`agentstream.agent.summaries`),
as rows of ``agentstream_summaries``: written when a run summarizes, read when a run's
history is read (:func:`agentstream.store.statements.before`).

A summary is kept against the user message that follows what it covers (see
:class:`~agentstream.store.models.SummaryRow`). The run that writes it read that message
itself, in its own conversation, under its owner's name, so a summary is only ever written
into a conversation its writer may read; the conversation's row lock (taken by the write)
keeps two runs of one conversation from racing, and a summary already there is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from sqlalchemy import bindparam, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from agentstream.agent.summaries import ContextSummary
from agentstream.conversation import DisplayMessage
from agentstream.store.models import MESSAGES, SUMMARIES

__all__ = ["summary_before", "with_summaries", "write_summary"]

_BEFORE = select(SUMMARIES.c.text, SUMMARIES.c.exchanges).where(
    SUMMARIES.c.before_id == bindparam("b_before")
)
_TAKEN = select(SUMMARIES.c.before_id).where(SUMMARIES.c.before_id == bindparam("b_before"))
_IN_CONVERSATION = select(MESSAGES.c.role).where(
    MESSAGES.c.id == bindparam("b_before"), MESSAGES.c.conversation_id == bindparam("b_id")
)


def summary_before(conn: Connection, message_id: str) -> ContextSummary | None:
    """The summary kept before message ``message_id``, if any."""
    found = conn.execute(_BEFORE, {"b_before": message_id}).first()
    return None if found is None else ContextSummary(text=found.text, exchanges=found.exchanges)


def write_summary(
    conn: Connection,
    conversation_id: str,
    before_id: str,
    run_id: str,
    summary: ContextSummary,
    now: datetime,
) -> bool:
    """Keep ``summary`` before user message ``before_id`` of the conversation; whether it was
    written (not when one is there already, or the message is not a user message of it)."""
    role = conn.execute(_IN_CONVERSATION, {"b_before": before_id, "b_id": conversation_id}).scalar()
    if role != "user" or conn.execute(_TAKEN, {"b_before": before_id}).first() is not None:
        return False
    conn.execute(
        insert(SUMMARIES).values(
            before_id=before_id,
            conversation_id=conversation_id,
            run_id=run_id,
            text=summary.text,
            exchanges=summary.exchanges,
            created_at=now,
        )
    )
    return True


_OF_CONVERSATION = select(SUMMARIES.c.before_id, SUMMARIES.c.exchanges).where(
    SUMMARIES.c.conversation_id == bindparam("b_id")
)


def with_summaries(
    conn: Connection | Session, conversation_id: str, shown: Sequence[DisplayMessage]
) -> tuple[DisplayMessage, ...]:
    """``shown`` (a path as displayed) with the user message of its latest summary marked
    with how many exchanges the summary covers: where the model's memory of the
    conversation becomes a summary, for a UI to show. (The earlier summaries on the path
    are part of that one.)"""
    found = conn.execute(_OF_CONVERSATION, {"b_id": conversation_id})
    kept = {row.before_id: row.exchanges for row in found}
    latest = next(
        (
            i
            for i in range(len(shown) - 1, -1, -1)
            if shown[i].role == "user" and shown[i].id in kept
        ),
        None,
    )
    if latest is None:
        return tuple(shown)
    marked = list(shown)
    marked[latest] = replace(shown[latest], summarized=kept[shown[latest].id])
    return tuple(marked)
