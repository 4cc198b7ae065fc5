"""A conversation as a tree of messages: its paths, branches and active leaf, in SQL.

Every message row names its parent (``parent_id``); the messages with one parent are
siblings: a question edited into another, an answer given again. The conversation row names
its *active leaf*, and what the model sees, what a person reads and what a run continues is
the path from the root to it. A run's messages follow one another; its first follows the
run's ``parent_id`` (the active leaf when it started, or the message a new branch starts
after).

A path is read with a recursive CTE that walks ``parent_id`` up from its last message, one
primary-key lookup per message (:func:`path_to`), so it costs the same whatever the number
of branches beside it. What a run continues is read with :func:`recent_path`, which stops
walking once it has gone back far enough for the model (a size in stored characters) and
reached the start of an exchange, so a turn's read does not grow with the conversation. A
message's parent is always earlier in ``(ordinal, seq)`` order (a run follows what was there
when it started, and takes a larger ordinal), so ordering a path that way puts it in order,
as a conversation was read before it had branches.

The ids a client knows are those the conversation API shows: a user message's own id, and
for an answer the id of the run that wrote it (:mod:`agentstream.store.views`).
:func:`resolve` turns either into a message of the tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    CTE,
    BigInteger,
    Select,
    Text,
    bindparam,
    case,
    cast,
    exists,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from agentstream.errors import InvalidBranch, MessageNotFound
from agentstream.messages import UserMessage
from agentstream.runs.request import Branch
from agentstream.store.history import load_messages
from agentstream.store.models import CONVERSATIONS, MESSAGES, RUNS, SUMMARIES
from agentstream.store.prepared import Prepared

__all__ = [
    "BranchPoint",
    "Node",
    "advance",
    "answered_again",
    "branch_for",
    "branch_point",
    "children",
    "descend",
    "head",
    "path_to",
    "recent_path",
    "resolve",
    "run_start",
    "run_tip",
    "set_leaf",
    "sibling_ids",
]

_m = MESSAGES.c


def path_to(leaf: Any) -> Select[tuple[str]]:
    """The ids of the messages from the root to ``leaf`` (a bound parameter or a scalar
    subquery), for ``id IN (...)``. Each step up is a scalar subquery on the primary key,
    which every planner runs as one index lookup: a join there could be planned as a scan of
    the whole table at every step (PostgreSQL does, for a table without statistics yet)."""
    start = select(cast(leaf, _m.id.type).label("id")).cte("path", recursive=True)
    up = MESSAGES.alias("up")
    step = select(up.c.parent_id).where(up.c.id == start.c.id).scalar_subquery()
    path = start.union_all(select(step).where(start.c.id.is_not(None)))
    return select(path.c.id).where(path.c.id.is_not(None))


def recent_path(leaf: Any, bound: Any, cap: Any) -> CTE:
    """The ids (and run ids) of the messages from ``leaf`` back to the first user message
    at which at least ``bound`` stored characters were walked, or to the root, as a
    recursive CTE. Each message counts its stored JSON, at most ``cap`` (a tool result that
    large reaches the model cut anyway). The walk stops only at a user message, so what it
    reads is whole exchanges: a tool call is never read without its result, and the
    exchange of ``leaf`` (with any calls it leaves open) is read whatever its size. It also
    stops at a message a summary was written before (:class:`~agentstream.store.models.SummaryRow`):
    what came before it reaches the model as the summary."""
    start = (
        select(_m.id, _m.parent_id, _m.run_id, _m.role, _size(_m.body, cap).label("walked"))
        .where(_m.id == leaf)
        .cte("recent", recursive=True)
    )
    up = MESSAGES.alias("up")
    return start.union_all(
        select(
            up.c.id, up.c.parent_id, up.c.run_id, up.c.role, start.c.walked + _size(up.c.body, cap)
        ).where(
            up.c.id == start.c.parent_id,
            or_(start.c.walked < bound, start.c.role != "user"),
            ~exists().where(SUMMARIES.c.before_id == start.c.id),
        )
    )


def _size(body: Any, cap: Any) -> ColumnElement[int]:
    """A message's stored JSON in characters, at most ``cap``."""
    length = func.length(cast(body, Text))
    return case((length > cap, cap), else_=length).cast(BigInteger)


@dataclass(frozen=True, slots=True)
class Node:
    """A message of the tree, with what branching needs to know about it."""

    id: str
    role: str
    run_id: str
    parent_id: str | None


_NODE = (_m.id, _m.role, _m.run_id, _m.parent_id)
_BY_ID = select(*_NODE).where(_m.conversation_id == bindparam("b_id"), _m.id == bindparam("b_msg"))
_RUN_TIP = (
    select(*_NODE)
    .where(_m.run_id == bindparam("b_run"), _m.conversation_id == bindparam("b_id"))
    .order_by(_m.seq.desc())
    .limit(1)
)
_RUN_PARENT = select(RUNS.c.parent_id).where(
    RUNS.c.id == bindparam("b_run"), RUNS.c.conversation_id == bindparam("b_id")
)


def resolve(conn: Connection | Session, conversation_id: str, shown_id: str) -> Node | None:
    """The message the API shows as ``shown_id`` in the conversation: a message itself, or
    for an answer (a run id) the run's last message. None when the conversation has neither."""
    parameters = {"b_id": conversation_id, "b_msg": shown_id, "b_run": shown_id}
    row = conn.execute(_BY_ID, parameters).first()
    if row is None:
        row = conn.execute(_RUN_TIP, parameters).first()
    return None if row is None else Node(*row)


def run_tip(conn: Connection, conversation_id: str, run_id: str) -> str | None:
    """The message run ``run_id``'s next message follows: its last, or (it has none yet) the
    message it started after."""
    parameters = {"b_id": conversation_id, "b_run": run_id}
    row = conn.execute(_RUN_TIP, parameters).first()
    if row is not None:
        return str(row.id)
    parent = conn.scalar(_RUN_PARENT, parameters)
    return None if parent is None else str(parent)


_RUN_FIRST = (
    select(_m.parent_id)
    .where(_m.run_id == bindparam("b_run"), _m.conversation_id == bindparam("b_id"))
    .order_by(_m.seq)
    .limit(1)
)


def run_start(conn: Connection, conversation_id: str, run_id: str) -> str | None:
    """The message run ``run_id`` follows: its first message's parent as it stands now (a
    question queued behind another run's answer has moved after it, see :func:`advance`),
    or, for a run with no message yet, the message it started after."""
    parameters = {"b_id": conversation_id, "b_run": run_id}
    first = conn.execute(_RUN_FIRST, parameters).first()
    parent = first.parent_id if first is not None else conn.scalar(_RUN_PARENT, parameters)
    return None if parent is None else str(parent)


_c = CONVERSATIONS.c
_MOVE_LEAF = Prepared(
    update(CONVERSATIONS)
    .where(
        _c.id == bindparam("b_id"),
        _c.active_leaf_id.is_not_distinct_from(bindparam("b_from", type_=_c.active_leaf_id.type)),
    )
    .values(active_leaf_id=bindparam("b_to"))
)
_SPLICE = Prepared(
    update(MESSAGES)
    .where(
        _m.conversation_id == bindparam("b_id"),
        _m.parent_id == bindparam("b_from"),
        _m.role == bindparam("b_role"),
        _m.ordinal > bindparam("b_ordinal"),
    )
    .values(parent_id=bindparam("b_to"))
)


def advance(
    conn: Connection, conversation_id: str, ordinal: int, was: str | None, now: str | None
) -> None:
    """A run (``ordinal``) that was at message ``was`` wrote up to ``now``. Questions asked
    after ``was`` by later runs while it was still answering (two requests racing on one
    conversation) move after ``now``, so a conversation nobody branched stays one line in
    ``(ordinal, seq)`` order, each exchange whole. The active leaf moves to ``now`` if it was
    at ``was`` (a branch someone switched away from stays off)."""
    if now == was or now is None:
        return
    parameters = {"b_id": conversation_id, "b_from": was, "b_to": now}
    if was is not None:
        _SPLICE.execute(conn, {**parameters, "b_ordinal": ordinal, "b_role": "user"})
    _MOVE_LEAF.execute(conn, parameters)


_SET_LEAF = (
    update(CONVERSATIONS).where(_c.id == bindparam("b_id")).values(active_leaf_id=bindparam("b_to"))
)


def set_leaf(conn: Connection | Session, conversation_id: str, leaf: str | None) -> None:
    """Make ``leaf`` the active leaf, whatever it was (a branch just started, or chosen)."""
    conn.execute(_SET_LEAF, {"b_id": conversation_id, "b_to": leaf})


_NEWEST_CHILD = (
    select(_m.id)
    .where(_m.conversation_id == bindparam("b_id"), _m.parent_id == bindparam("b_msg"))
    .order_by(_m.seq.desc())
    .limit(1)
)


def descend(conn: Connection | Session, conversation_id: str, start: str) -> str:
    """The leaf reached from ``start`` by following the newest child at every step: where a
    person who picks a branch expects to be (its latest state)."""
    leaf = start
    while True:
        child = conn.scalar(_NEWEST_CHILD, {"b_id": conversation_id, "b_msg": leaf})
        if child is None:
            return leaf
        leaf = str(child)


def children(
    conn: Connection | Session, conversation_id: str, parents: Sequence[str | None]
) -> dict[str | None, list[Node]]:
    """The children of each of ``parents`` (``None``: the roots), oldest first."""
    named = [parent for parent in parents if parent is not None]
    where = [_m.parent_id.in_(named)] if named else []
    if None in parents:
        where.append(_m.parent_id.is_(None))
    if not where:
        return {}
    found: dict[str | None, list[Node]] = {parent: [] for parent in parents}
    rows = conn.execute(
        select(*_NODE).where(_m.conversation_id == conversation_id, or_(*where)).order_by(_m.seq)
    )
    for row in rows:
        found.setdefault(row.parent_id, []).append(Node(*row))
    return found


@dataclass(frozen=True, slots=True)
class BranchPoint:
    """Where a run goes in the tree."""

    parent: str | None
    """The message its first message follows."""
    context: str | None
    """The last message of the history the model is given before the run's question."""
    asked: UserMessage | None = None
    """The stored question it answers again (then ``parent`` is that question)."""


_BODY = select(_m.body).where(_m.id == bindparam("b_msg"))


def branch_point(conn: Connection, conversation_id: str, branch: Branch) -> BranchPoint:
    """Where ``branch`` puts a run. Raises :class:`MessageNotFound` for a message the
    conversation does not have and :class:`InvalidBranch` for answering again one that is
    not a user message: plain exceptions, so the transaction (which may have created the
    conversation) is rolled back."""
    if branch.after is None:
        if branch.again:
            raise InvalidBranch("name the user message to answer again")
        return BranchPoint(None, None)
    node = resolve(conn, conversation_id, branch.after)
    if node is None:
        raise MessageNotFound(branch.after)
    if not branch.again:
        return BranchPoint(node.id, node.id)
    if node.role != "user" or node.id != branch.after:
        raise InvalidBranch("only a user message is answered again")
    body: dict[str, Any] = conn.execute(_BODY, {"b_msg": node.id}).scalar_one()
    asked = load_messages([body])[0]
    assert isinstance(asked, UserMessage)
    return BranchPoint(node.id, node.parent_id, asked)


_ANSWERED_AGAIN = (
    select(RUNS.c.id)
    .where(
        RUNS.c.conversation_id == bindparam("b_id"),
        RUNS.c.parent_id == bindparam("b_msg"),
        RUNS.c.id != bindparam("b_run"),
    )
    .limit(1)
)


def answered_again(conn: Connection | Session, conversation_id: str, question: Node) -> bool:
    """Another run than the question's own started after it: an answer given again that has
    written nothing yet (the path ends with the question)."""
    parameters = {"b_id": conversation_id, "b_msg": question.id, "b_run": question.run_id}
    return conn.execute(_ANSWERED_AGAIN, parameters).first() is not None


_HEAD = (
    select(*_NODE)
    .where(
        _m.run_id == bindparam("b_run"),
        _m.conversation_id == bindparam("b_id"),
        _m.role != "user",
    )
    .order_by(_m.seq)
    .limit(1)
)


def head(conn: Connection | Session, conversation_id: str, shown_id: str) -> Node | None:
    """The message that stands for ``shown_id`` among its siblings: a user message itself,
    an answer's first message (None for an answer that wrote nothing, or an unknown id)."""
    parameters = {"b_id": conversation_id, "b_msg": shown_id, "b_run": shown_id}
    row = conn.execute(_BY_ID, parameters).first()
    if row is None:
        row = conn.execute(_HEAD, parameters).first()
    return None if row is None else Node(*row)


def sibling_ids(
    conn: Connection | Session, conversation_id: str, heads: Sequence[Node]
) -> list[tuple[str, ...]]:
    """For each of ``heads`` (see :func:`head`), the ids the API shows for it and its
    siblings, oldest first: user messages beside a user message, answers (run ids) beside
    an answer."""
    found = children(conn, conversation_id, list({node.parent_id: None for node in heads}))
    shown = []
    for node in heads:
        asked = node.role == "user"
        ids = [
            child.id if asked else child.run_id
            for child in found.get(node.parent_id, [])
            if (child.role == "user") == asked
        ]
        shown.append(tuple(dict.fromkeys(ids)))
    return shown


def branch_for(
    conn: Connection | Session, conversation_id: str, shown_id: str, *, again: bool
) -> Branch:
    """The branch that edits (``again``: answers again) the message the API shows as
    ``shown_id``. Only a question is edited; an answer is answered again through the
    question it answers."""
    # An answer that wrote nothing (its run failed at once) resolves to its question.
    node = head(conn, conversation_id, shown_id) or resolve(conn, conversation_id, shown_id)
    if node is None:
        raise MessageNotFound(shown_id)
    if not again:
        if node.role != "user" or node.id != shown_id:
            raise InvalidBranch("only a user message is edited")
        return Branch(after=node.parent_id)
    while node.role != "user":
        parent = node.parent_id
        above = None if parent is None else resolve(conn, conversation_id, parent)
        if above is None:
            raise InvalidBranch("this answer answers no question")
        node = above
    return Branch(after=node.id, again=True)
