"""The SQL behind :class:`~agentstream.store.repository.SqlConversationStore`, one small
function per step, each taking the open connection (or session) of the transaction it
belongs to. They are synchronous: the write path runs them in a writer thread on SQLite and
through ``run_sync`` on PostgreSQL (see :mod:`agentstream.store.commits`). The run
pipeline's writes are SQLAlchemy Core statements on the tables, not ORM units of work: they
run for every run start and finish, and the ORM's flush costs more Python time than the
database spends on the statement.

Ownership is in the statements themselves: :func:`owned` is part of every WHERE clause that
touches a conversation. :func:`bump` is how a writing transaction starts: one
``UPDATE ... RETURNING`` that checks the owner, takes the row's lock (the database's write
lock on SQLite) and allocates message sequence numbers and the run ordinal.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, cast

from pydantic import TypeAdapter
from sqlalchemy import BigInteger, Integer, bindparam, case, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from agentstream.agent.summaries import ContextSummary
from agentstream.events import AnswerShaped, Payload, RunCompleted, RunUsage
from agentstream.ids import new_id
from agentstream.messages import Message
from agentstream.principal import Principal
from agentstream.runs.store import ConversationNotFound, RunStatus
from agentstream.store.commits import Refused
from agentstream.store.errors import InvalidCursor
from agentstream.store.history import dump_message, load_messages, provider_history
from agentstream.store.models import CONVERSATIONS, MESSAGES, RUNS, USAGE, ConversationRow
from agentstream.store.prepared import Prepared
from agentstream.store.summaries import summary_before, with_summaries
from agentstream.store.titles import title_from_message
from agentstream.store.tree import Node, answered_again, path_to, recent_path, sibling_ids
from agentstream.store.views import (
    ActiveRun,
    ConversationSummary,
    DisplayMessage,
    StoredMessage,
    StoredRun,
    active_run,
    display_messages,
)

__all__ = [
    "Bumped",
    "Before",
    "before",
    "bump",
    "canonical",
    "claim",
    "claim_seq",
    "create",
    "decode_cursor",
    "display",
    "display_with_active_run",
    "encode_cursor",
    "exists",
    "finish",
    "insert_messages",
    "insert_run",
    "merge_metadata",
    "message_row",
    "normalize_conversation_id",
    "owned",
    "owned_row",
    "record_usage",
    "run_ordinal",
    "run_outcome",
]

_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
_COMPLETED_ADAPTER: TypeAdapter[RunCompleted] = TypeAdapter(RunCompleted)
_PAYLOAD_ADAPTER: TypeAdapter[Payload] = TypeAdapter(Payload)
_METADATA_ADAPTER: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
_SHAPED_ADAPTER: TypeAdapter[AnswerShaped] = TypeAdapter(AnswerShaped)
_SHOWN_FIELDS = {"message", "payloads", "suggested_values", "suggested_actions", "custom_payload"}


def normalize_conversation_id(value: str) -> str | None:
    """The canonical form of a conversation id (UUIDs lower-case with dashes), or None when
    ``value`` cannot be an id."""
    try:
        return str(uuid.UUID(value))
    except ValueError:
        pass
    return value if _ID_PATTERN.fullmatch(value) else None


@dataclass(frozen=True, slots=True)
class Bumped:
    """The conversation row after a writing transaction claimed it."""

    title: str
    metadata: dict[str, Any]
    next_seq: int
    next_ordinal: int
    summary: ConversationSummary | None = None
    active_leaf: str | None = None
    """The conversation's active leaf as the transaction found it."""


def owned(principal: Principal) -> tuple[Any, ...]:
    c = CONVERSATIONS.c
    return (c.owner_id == principal.user_id, c.tenant_id == principal.tenant)


def canonical(conversation_id: str) -> str:
    normalized = normalize_conversation_id(conversation_id)
    if normalized is None:
        raise ConversationNotFound(conversation_id)
    return normalized


async def owned_row(
    session: AsyncSession, principal: Principal, conversation_id: str
) -> ConversationRow:
    row = await session.scalar(
        select(ConversationRow).where(ConversationRow.id == conversation_id, *owned(principal))
    )
    if row is None:
        raise ConversationNotFound(conversation_id)
    return row


# The write path's statements are built once, with bound parameters: building one per call
# (``.values(x=...)``) costs more Python time than running it.
_c = CONVERSATIONS.c
_EXISTS = select(_c.id).where(_c.id == bindparam("b_id"))
_INSERT_CONVERSATION = Prepared(insert(CONVERSATIONS))
_INSERT_RUN = Prepared(insert(RUNS))
_INSERT_MESSAGE = Prepared(insert(MESSAGES))
_RUN_ORDINAL = select(RUNS.c.ordinal).where(
    RUNS.c.id == bindparam("b_run"), RUNS.c.conversation_id == bindparam("b_id")
)


def _bump_statement(new_run: bool, model: bool, summary: bool = True) -> Any:
    values: dict[str, Any] = {
        "next_seq": _c.next_seq + bindparam("b_messages", type_=Integer()),
        "updated_at": bindparam("b_now", type_=_c.updated_at.type),
    }
    if new_run:
        values["next_ordinal"] = _c.next_ordinal + 1
    if model:
        values["model"] = bindparam("b_model", type_=_c.model.type)
    return (
        update(CONVERSATIONS)
        .where(
            _c.id == bindparam("b_id"),
            _c.owner_id == bindparam("b_owner"),
            _c.tenant_id == bindparam("b_tenant"),
        )
        .values(values)
        .returning(
            *(
                (
                    _c.title,
                    _c.metadata,
                    _c.next_seq,
                    _c.next_ordinal,
                    _c.created_at,
                    _c.model,
                    _c.active_leaf_id,
                )
                if summary
                else (_c.next_seq,)
            )
        )
    )


_BUMP = {
    (run, model): _bump_statement(run, model) for run in (False, True) for model in (False, True)
}
_BUMP_SEQ = Prepared(_bump_statement(new_run=False, model=False, summary=False))


def exists(conn: Connection, conversation_id: str) -> bool:
    return conn.scalar(_EXISTS, {"b_id": conversation_id}) is not None


def insert_run(
    conn: Connection,
    conversation_id: str,
    run_id: str,
    ordinal: int,
    model: str | None,
    now: datetime,
    parent: str | None,
) -> None:
    """Insert a running run whose first message follows message ``parent``."""
    _INSERT_RUN.execute(
        conn,
        {
            "id": run_id,
            "conversation_id": conversation_id,
            "ordinal": ordinal,
            "status": "running",
            "model": model,
            "started_at": now,
            "parent_id": parent,
        },
    )


def _finish_statement(completed: bool) -> Any:
    names: tuple[str, ...] = ("status", "error", "finished_at", "usage")
    names += ("result", "answer") if completed else ()
    return (
        update(RUNS)
        .where(RUNS.c.id == bindparam("b_run"), RUNS.c.conversation_id == bindparam("b_id"))
        .values({name: bindparam(f"b_{name}", type_=RUNS.c[name].type) for name in names})
        .returning(RUNS.c.ordinal)
    )


_FINISH = {completed: Prepared(_finish_statement(completed)) for completed in (False, True)}


def finish(
    conn: Connection, run_id: str, conversation_id: str, outcome: dict[str, Any]
) -> int | None:
    """Record how run ``run_id`` ended (``outcome``: :func:`run_outcome`); its ordinal, or
    None if the conversation has no such run."""
    parameters = {f"b_{name}": value for name, value in outcome.items()}
    parameters.update(b_run=run_id, b_id=conversation_id)
    return _FINISH["result" in outcome].scalar(conn, parameters)


_INSERT_USAGE = Prepared(insert(USAGE))


def record_usage(
    conn: Connection,
    principal: Principal,
    run_id: str,
    conversation_id: str,
    status: RunStatus,
    usage: RunUsage,
    now: datetime,
) -> None:
    """Enter what run ``run_id`` used and cost in the usage ledger (``agentstream_usage``)."""
    tokens = usage.usage
    _INSERT_USAGE.execute(
        conn,
        {
            "run_id": run_id,
            "tenant_id": principal.tenant,
            "user_id": principal.user_id,
            "conversation_id": conversation_id,
            "model": usage.model or "",
            "status": status,
            "day": now.strftime("%Y-%m-%d"),
            "finished_at": now,
            "input_tokens": tokens.input_tokens,
            "output_tokens": tokens.output_tokens,
            "reasoning_tokens": tokens.reasoning_tokens,
            "cache_read_tokens": tokens.cache_read_tokens,
            "cache_write_tokens": tokens.cache_write_tokens,
            "cost_usd": usage.cost_usd,
            "estimated": usage.estimated,
        },
    )


def run_ordinal(conn: Connection, run_id: str, conversation_id: str) -> int | None:
    """The ordinal of run ``run_id`` in the conversation, None if it has no such run."""
    ordinal = conn.scalar(_RUN_ORDINAL, {"b_run": run_id, "b_id": conversation_id})
    return None if ordinal is None else int(ordinal)


def bump(
    conn: Connection,
    principal: Principal,
    conversation_id: str,
    messages: int,
    now: datetime,
    *,
    new_run: bool = False,
    model: str | None = None,
) -> Bumped | None:
    """Claim the caller's conversation row for this transaction (its lock) and allocate
    ``messages`` sequence numbers, and a run ordinal for a ``new_run``. None when the
    conversation is not the caller's (and nothing was written)."""
    parameters = _bump_parameters(principal, conversation_id, messages, now, model)
    row = conn.execute(_BUMP[new_run, model is not None], parameters).first()
    if row is None:
        return None
    title, metadata, next_seq, next_ordinal, created_at, model_now, leaf = row
    summary = ConversationSummary(
        id=conversation_id, title=title, created_at=created_at, updated_at=now, model=model_now
    )
    return Bumped(title, dict(metadata or {}), next_seq, next_ordinal, summary, leaf)


def _bump_parameters(
    principal: Principal,
    conversation_id: str,
    messages: int,
    now: datetime,
    model: str | None = None,
) -> dict[str, Any]:
    return {
        "b_id": conversation_id,
        "b_owner": principal.user_id,
        "b_tenant": principal.tenant,
        "b_messages": messages,
        "b_now": now,
        "b_model": model,
    }


def create(
    conn: Connection,
    principal: Principal,
    conversation_id: str,
    first_message: str,
    now: datetime,
    model: str | None,
    metadata: dict[str, Any] | None,
) -> Bumped:
    """Insert a new conversation whose first run (ordinal 0) and first message (seq 0) the
    caller inserts in the same transaction."""
    title = title_from_message(first_message)
    stored = _jsonable(metadata)
    _INSERT_CONVERSATION.execute(
        conn,
        {
            "id": conversation_id,
            "tenant_id": principal.tenant,
            "owner_id": principal.user_id,
            "title": title,
            "title_source": "message",
            "model": model,
            "metadata": stored,
            "created_at": now,
            "updated_at": now,
            "next_seq": 1,
            "next_ordinal": 1,
        },
    )
    return Bumped(title, stored, 1, 1)


def _jsonable(metadata: dict[str, Any] | None) -> dict[str, Any]:
    """``metadata`` as JSON-compatible data (values JSON cannot hold become strings)."""
    if not metadata:
        return {}
    dumped: dict[str, Any] = _METADATA_ADAPTER.dump_python(
        dict(metadata), mode="json", fallback=str
    )
    return dumped


def merge_metadata(
    conn: Connection, conversation_id: str, bumped: Bumped, metadata: dict[str, Any]
) -> Bumped:
    merged = {**bumped.metadata, **_jsonable(metadata)}
    conn.execute(
        update(CONVERSATIONS).where(CONVERSATIONS.c.id == conversation_id).values(metadata=merged)
    )
    return replace(bumped, metadata=merged)


def message_row(
    conversation_id: str,
    run_id: str,
    ordinal: int,
    seq: int,
    now: datetime,
    message: Message,
    status: str = "complete",
    parent: str | None = None,
) -> dict[str, Any]:
    """Column values for a message row that follows message ``parent``. Only an answer can
    be ``interrupted``."""
    role, text, reasoning, body = dump_message(message)
    return {
        "id": new_id(),
        "parent_id": parent,
        "conversation_id": conversation_id,
        "run_id": run_id,
        "ordinal": ordinal,
        "seq": seq,
        "role": role,
        "text": text,
        "reasoning": reasoning,
        "body": body,
        "status": status if role == "assistant" else "complete",
        "created_at": now,
    }


_SHOWN_RUN = tuple(
    RUNS.c[name]
    for name in ("id", "ordinal", "status", "answer", "error", "started_at", "finished_at")
)
_SHOWN_MESSAGE = (
    *(
        MESSAGES.c[name]
        for name in ("id", "run_id", "seq", "role", "text", "status", "created_at", "parent_id")
    ),
    # A user message's body, for the files it carries: small, where an answer's holds its
    # tool calls and results.
    case((MESSAGES.c.role == "user", MESSAGES.c.body), else_=None).label("body"),
)
_ACTIVE_LEAF = (
    select(CONVERSATIONS.c.active_leaf_id)
    .where(CONVERSATIONS.c.id == bindparam("b_id"))
    .scalar_subquery()
)


def _runs_on(path: Any) -> Any:
    """The ids of the runs that wrote the messages of ``path``."""
    return select(MESSAGES.c.run_id).where(MESSAGES.c.id.in_(path)).distinct()


def _display_statements(details: bool) -> tuple[Any, Any]:
    """The runs and messages on the active path (see :mod:`agentstream.store.tree`)."""
    path = path_to(_ACTIVE_LEAF)
    runs = select(*(RUNS.c if details else _SHOWN_RUN)).where(RUNS.c.id.in_(_runs_on(path)))
    messages = (
        select(*(MESSAGES.c if details else _SHOWN_MESSAGE))
        .where(MESSAGES.c.id.in_(path))
        .order_by(MESSAGES.c.ordinal, MESSAGES.c.seq)
    )
    if not details:
        messages = messages.where(MESSAGES.c.role != "tool")
    return runs, messages


_DISPLAY = {details: _display_statements(details) for details in (False, True)}
_LATEST_RUN = (
    select(*_SHOWN_RUN)
    .where(RUNS.c.conversation_id == bindparam("b_id"))
    .order_by(RUNS.c.ordinal.desc())
    .limit(1)
)


def display(
    conn: Connection | Session, conversation_id: str, *, details: bool
) -> tuple[DisplayMessage, ...]:
    """The conversation's active path as shown; without ``details`` just what the ops agent's
    ``conversation`` object needs, without loading (or parsing) any JSON column."""
    runs, messages, again = _display_rows(conn, conversation_id, details)
    return display_messages(runs, messages, details=details, asked_again=again)


def display_with_active_run(
    conn: Connection | Session, conversation_id: str
) -> tuple[tuple[DisplayMessage, ...], ActiveRun | None]:
    """The conversation's active path with every detail, and its run in progress (on
    whichever branch: a client follows it wherever it is)."""
    runs, messages, again = _display_rows(conn, conversation_id, True)
    latest = cast(Sequence[StoredRun], conn.execute(_LATEST_RUN, {"b_id": conversation_id}).all())
    shown = display_messages(runs, messages, details=True, asked_again=again)
    shown = _with_siblings(conn, conversation_id, shown, messages)
    return with_summaries(conn, conversation_id, shown), active_run(latest)


def _with_siblings(
    conn: Connection | Session,
    conversation_id: str,
    shown: tuple[DisplayMessage, ...],
    path: Sequence[StoredMessage],
) -> tuple[DisplayMessage, ...]:
    """``shown`` with each message's siblings, read in one query."""
    heads: dict[str, Node] = {}
    for row in path:
        shown_id = row.id if row.role == "user" else row.run_id
        if shown_id not in heads:
            heads[shown_id] = Node(row.id, row.role, row.run_id, row.parent_id)
    wanted = [heads[message.id] for message in shown if message.id in heads]
    ids = sibling_ids(conn, conversation_id, wanted)
    found = dict(zip((node.id for node in wanted), ids, strict=True))
    return tuple(
        replace(message, siblings=found[heads[message.id].id]) if message.id in heads else message
        for message in shown
    )


def _display_rows(
    conn: Connection | Session, conversation_id: str, details: bool
) -> tuple[Sequence[StoredRun], Sequence[StoredMessage], bool]:
    runs, messages = _DISPLAY[details]
    parameters = {"b_id": conversation_id}
    run_rows = cast(Sequence[StoredRun], conn.execute(runs, parameters).all())
    message_rows = cast(Sequence[StoredMessage], conn.execute(messages, parameters).all())
    return run_rows, message_rows, _asked_again(conn, conversation_id, message_rows)


def _asked_again(
    conn: Connection | Session, conversation_id: str, path: Sequence[StoredMessage]
) -> bool:
    """The path ends with a question that a new run answers again (it has written nothing
    yet): its first answer is on another branch."""
    last = path[-1] if path else None
    if last is None or last.role != "user":
        return False
    return answered_again(conn, conversation_id, Node(last.id, last.role, last.run_id, None))


def claim(
    conn: Connection, principal: Principal, conversation_id: str, messages: int, now: datetime
) -> Bumped:
    """:func:`bump`, refusing (before writing anything) a conversation that is not the
    caller's."""
    bumped = bump(conn, principal, conversation_id, messages, now)
    if bumped is None:
        raise Refused(ConversationNotFound(conversation_id))
    return bumped


def claim_seq(
    conn: Connection, principal: Principal, conversation_id: str, messages: int, now: datetime
) -> int:
    """:func:`claim` for a caller that needs only the sequence numbers: the conversation's
    next ``seq`` after the ``messages`` allocated (nothing else is read back)."""
    next_seq = _BUMP_SEQ.scalar(conn, _bump_parameters(principal, conversation_id, messages, now))
    if next_seq is None:
        raise Refused(ConversationNotFound(conversation_id))
    return next_seq


def insert_messages(
    conn: Connection,
    conversation_id: str,
    run_id: str,
    ordinal: int,
    next_seq: int,
    now: datetime,
    messages: Sequence[Message],
    status: str = "complete",
    *,
    parent: str | None,
) -> str | None:
    """Insert ``messages`` with the sequence numbers just allocated (the last is
    ``next_seq - 1``), in one statement (executemany), each following the one before and the
    first following message ``parent``. Returns the id of the last (``parent`` when there
    are none): what the run's next message follows."""
    if not messages:
        return parent
    first = next_seq - len(messages)
    rows = []
    for offset, message in enumerate(messages):
        row = message_row(
            conversation_id, run_id, ordinal, first + offset, now, message, status, parent
        )
        rows.append(row)
        parent = row["id"]
    _INSERT_MESSAGE.executemany(conn, rows)
    return parent


def run_outcome(
    status: RunStatus,
    completed: RunCompleted | None,
    shaped: AnswerShaped | None,
    error: str | None,
    now: datetime,
    usage: RunUsage | None = None,
) -> dict[str, Any]:
    """The run row's columns for how it ended: the answer as shown (``shaped``, else the
    loop's own), its tool history and what it used (``usage``, as billed, else what the
    vendors reported of a completed run)."""
    values: dict[str, Any] = {
        "status": status,
        "error": error,
        "finished_at": now,
        "usage": None if usage is None else usage.to_json(),
    }
    if completed is not None:
        # A tool output that JSON cannot hold is kept as its str() rather than losing the
        # end of the run.
        dumped = _COMPLETED_ADAPTER.dump_python(completed, mode="json", fallback=str)
        if usage is None:
            values["usage"] = dumped["usage"]
        result = {
            "message": completed.message,
            "tool_history": dumped["tool_history"],
            "payloads": dumped["payloads"],
            "suggested_values": [],
            "suggested_actions": [],
            "custom_payload": None,
            "pending_calls": dumped["pending_calls"],
            "stop_reason": completed.stop_reason,
            "context": dumped["context"],
        }
        if shaped is not None:
            # Only the fields shown: the diagnostics (the whole prompt, in development) are
            # the client's to see once, not the store's to keep.
            fields = _SHOWN_FIELDS | {"tool_history"} if shaped.tool_history else _SHOWN_FIELDS
            shown = _SHAPED_ADAPTER.dump_python(shaped, mode="json", fallback=str, include=fields)
            result.update(shown)
        values["result"] = result
        # Exactly the text the client streamed (marker blocks aside): presenters place tool
        # markers from the offsets beside it.
        values["answer"] = result["message"]
    return values


@dataclass(frozen=True, slots=True)
class Before:
    """What a run continues (:func:`before`): the provider history, the payloads of the runs
    in it, the ids of its user messages (where each of its exchanges starts, in order), and
    the summary of what comes before it, if the read stopped at one."""

    history: list[Message]
    payloads: list[Payload]
    exchanges: list[str]
    summary: ContextSummary | None = None


def before(conn: Connection, parent: str | None, bound: int | None = None) -> Before:
    """The provider history that ends with message ``parent`` (what a run that follows it
    continues), and the payloads of the runs in it. With ``bound`` (stored characters), only
    the latest whole exchanges that reach it are read (:func:`~agentstream.store.tree.recent_path`),
    back to the latest summary at most: what the model can be sent, not the whole
    conversation; without it, the path from the root."""
    if parent is None:
        return Before([], [], [])
    if bound is None:
        path: dict[str, Any] = {"b_leaf": parent}
        bodies, results = _PATH_BODIES, _PATH_RESULTS
    else:
        bound = max(1, bound)
        path = {"b_leaf": parent, "b_bound": bound, "b_cap": max(1, bound // 4)}
        bodies, results = _RECENT_BODIES, _RECENT_RESULTS
    rows = conn.execute(bodies, path).all()
    exchanges = [row.id for row in rows if row.role == "user"]
    summary = None
    if bound is not None and rows and rows[0].role == "user":
        summary = summary_before(conn, rows[0].id)
    history = provider_history(load_messages(row.body for row in rows))
    return Before(history, _earlier_payloads(conn.scalars(results, path)), exchanges, summary)


def _bodies(path: Any) -> Any:
    """The messages a walk (a CTE of ids and run ids) reached, in order."""
    return (
        select(MESSAGES.c.id, MESSAGES.c.role, MESSAGES.c.body)
        .join(path, MESSAGES.c.id == path.c.id)
        .order_by(MESSAGES.c.ordinal, MESSAGES.c.seq)
    )


def _results(path: Any) -> Any:
    """The results of the runs whose messages a walk reached, oldest first."""
    return (
        select(RUNS.c.result)
        .where(RUNS.c.id.in_(select(path.c.run_id).distinct()))
        .order_by(RUNS.c.ordinal)
    )


_PATH = path_to(bindparam("b_leaf"))
_PATH_BODIES = (
    select(MESSAGES.c.id, MESSAGES.c.role, MESSAGES.c.body)
    .where(MESSAGES.c.id.in_(_PATH))
    .order_by(MESSAGES.c.ordinal, MESSAGES.c.seq)
)
_PATH_RESULTS = select(RUNS.c.result).where(RUNS.c.id.in_(_runs_on(_PATH))).order_by(RUNS.c.ordinal)
_RECENT = recent_path(
    bindparam("b_leaf"),
    bindparam("b_bound", type_=BigInteger),
    bindparam("b_cap", type_=BigInteger),
)
_RECENT_BODIES, _RECENT_RESULTS = _bodies(_RECENT), _results(_RECENT)


def _earlier_payloads(results: Iterable[dict[str, Any] | None]) -> list[Payload]:
    """The payloads of earlier answers (and their custom payloads), once each, oldest first."""
    found: list[Payload] = []
    seen: set[str] = set()
    for result in results:
        if not result:
            continue
        candidates = list(result.get("payloads") or [])
        if result.get("custom_payload"):
            candidates.append(result["custom_payload"])
        for raw in candidates:
            payload = _PAYLOAD_ADAPTER.validate_python(raw)
            key = payload.payload_id or json.dumps(raw, sort_keys=True, default=str)
            if key not in seen:
                seen.add(key)
                found.append(payload)
    return found


def encode_cursor(row: ConversationRow) -> str:
    raw = json.dumps([row.updated_at.isoformat(), row.id], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        moment, conversation_id = json.loads(raw)
        parsed = datetime.fromisoformat(moment)
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise InvalidCursor("cursor is not one this server handed out") from exc
    if parsed.tzinfo is None or not isinstance(conversation_id, str):
        raise InvalidCursor("cursor is not one this server handed out")
    return parsed, conversation_id
