"""The SQL behind a conversation's shared state (:mod:`agentstream.state`): one row in
``agentstream_conversation_state`` for a conversation that has a state.

Every function runs inside a transaction that has already claimed the caller's conversation
row (:func:`~agentstream.store.statements.bump` or ``claim_seq``: the owner and tenant
checked, the row locked), so a read and the write that follows it are never interleaved with
another writer's, on SQLite or PostgreSQL, and reading first tells an INSERT from an UPDATE safely.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.engine import Connection

from agentstream.state import apply_patch, diff
from agentstream.store.models import STATES

__all__ = ["change_state", "read_state", "write_state"]

_c = STATES.c
_READ = select(_c.state).where(_c.conversation_id == bindparam("b_id"))
_UPDATE = (
    update(STATES)
    .where(_c.conversation_id == bindparam("b_id"))
    .values(
        state=bindparam("b_state", type_=_c.state.type),
        updated_at=bindparam("b_now", type_=_c.updated_at.type),
    )
)


def read_state(conn: Connection, conversation_id: str) -> dict[str, Any] | None:
    """The conversation's state, ``None`` when it has none."""
    found = conn.scalar(_READ, {"b_id": conversation_id})
    return None if found is None else dict(found)


def write_state(
    conn: Connection,
    conversation_id: str,
    state: Mapping[str, Any],
    now: datetime,
    stored: Mapping[str, Any] | None,
) -> None:
    """Make ``state`` the conversation's (``stored``: what it has now, read in this
    transaction); nothing is written when they are the same."""
    if stored is None:
        row = {"conversation_id": conversation_id, "state": dict(state), "updated_at": now}
        conn.execute(insert(STATES), row)
    elif diff(stored, state):
        conn.execute(_UPDATE, {"b_id": conversation_id, "b_state": dict(state), "b_now": now})


def change_state(
    conn: Connection, conversation_id: str, patch: Sequence[Mapping[str, Any]], now: datetime
) -> dict[str, Any]:
    """Apply ``patch`` to the conversation's state (an empty object when it has none) and
    store the result, which is returned. Raises :class:`~agentstream.state.PatchConflict`,
    writing nothing, when the patch does not apply to the state as stored."""
    stored = read_state(conn, conversation_id)
    changed = apply_patch(stored or {}, patch)
    write_state(conn, conversation_id, changed, now, stored)
    return changed
