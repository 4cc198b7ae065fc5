"""The tables: conversations, the runs that answered them, and the messages of each run.

A *run* answers one user message (see :mod:`agentstream.events`). Storing runs as rows gives
every message a home and keeps exchanges whole when two requests race on one conversation:
each run takes the next ``ordinal`` in its conversation when it starts, and messages are read
back ordered by ``(ordinal, seq)``, so one exchange's messages never interleave with
another's, whichever commits first. ``seq`` is a per-conversation counter allocated inside the
writing transaction (an ``UPDATE ... RETURNING`` on the conversation row, which is the lock),
with a unique constraint as the backstop.

A conversation is a tree: each message names its parent, each run the message it started
after, and the conversation its active leaf (:mod:`agentstream.store.tree`). What is read
is the path from the root to the active leaf, still in ``(ordinal, seq)`` order.

Each message row keeps the exact :mod:`agentstream.messages` value as JSON (``body``), which
rebuilds the provider history to the byte, reasoning signatures and ``provider_data``
included, next to plain columns (``text``, ``reasoning``) that the UI and SQL can read.
What a run's final answer adds for display (tool history with outputs and durations,
payloads, suggestions, token usage) is on the run row.

Timestamps are stored in UTC and always come back timezone-aware, on SQLite as well.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "ATTACHMENTS",
    "BLOBS",
    "CONVERSATIONS",
    "MESSAGES",
    "RUNS",
    "STATES",
    "USAGE",
    "VIEW_RESOURCES",
    "AttachmentRow",
    "Base",
    "BlobPartRow",
    "ConversationRow",
    "MessageRow",
    "RunRow",
    "SUMMARIES",
    "SummaryRow",
    "StateRow",
    "UsageRow",
    "UTCDateTime",
    "ViewResourceRow",
    "utcnow",
]

ID_LENGTH = 64
TITLE_LENGTH = 200


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend (SQLite has no time zones)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def without_nul(value: Any) -> Any:
    """``value`` with every NUL character removed, in strings nested at any depth.

    PostgreSQL cannot store NUL in text, and SQLite would keep it; the rule is the same on
    both: NUL carries no meaning in a conversation, so it is dropped on the way in."""
    if isinstance(value, str):
        return value.replace("\x00", "") if "\x00" in value else value
    if isinstance(value, dict):
        return {without_nul(k): without_nul(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [without_nul(item) for item in value]
    return value


class CleanText(TypeDecorator[str]):
    """Text without NUL characters (see :func:`without_nul`)."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return without_nul(value)  # type: ignore[no-any-return]


class CleanString(TypeDecorator[str]):
    """A bounded string without NUL characters (see :func:`without_nul`)."""

    impl = String
    cache_ok = True
    process_bind_param = CleanText.process_bind_param


class CleanJSON(TypeDecorator[Any]):
    """JSON whose strings hold no NUL characters (see :func:`without_nul`)."""

    impl = JSON
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        return without_nul(value)


class Base(DeclarativeBase):
    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(table_name)s_%(column_0_N_name)s",
            "uq": "uq_%(table_name)s_%(column_0_N_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s",
            "pk": "pk_%(table_name)s",
        }
    )
    type_annotation_map = {datetime: UTCDateTime(), dict[str, Any]: CleanJSON()}


class ConversationRow(Base):
    __tablename__ = "agentstream_conversations"

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(255))
    """The owner's tenant; ``""`` for a principal without one."""
    owner_id: Mapped[str] = mapped_column(String(255))
    title: Mapped[str] = mapped_column(CleanString(TITLE_LENGTH))
    title_source: Mapped[str] = mapped_column(String(16), default="message")
    """``message`` (from the first message), ``model`` or ``user``: a generated title never
    replaces one the user chose."""
    model: Mapped[str | None] = mapped_column(String(255))
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", CleanJSON, default=dict)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    next_seq: Mapped[int] = mapped_column(Integer, default=0)
    """The next message ``seq``; bumped inside every writing transaction (the row lock)."""
    next_ordinal: Mapped[int] = mapped_column(Integer, default=0)
    """The next run ``ordinal``."""
    active_leaf_id: Mapped[str | None] = mapped_column(String(ID_LENGTH))
    """The last message of the branch the conversation is on: the model sees the path from
    the root to it (``None`` before the first message). See :mod:`agentstream.store.tree`."""

    __table_args__ = (
        Index(
            "ix_agentstream_conversations_owner_recent",
            "tenant_id",
            "owner_id",
            "updated_at",
            "id",
        ),
    )


class RunRow(Base):
    __tablename__ = "agentstream_runs"

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey(ConversationRow.id, ondelete="CASCADE"), index=True
    )
    ordinal: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default="running")
    """``running``, ``completed``, ``failed``, ``cancelled`` or ``interrupted`` (its worker died:
    marked by another worker, see :class:`agentstream.runs.InterruptedRuns`). A run still
    ``running`` after its worker died is shown as interrupted too."""
    model: Mapped[str | None] = mapped_column(String(255))
    error: Mapped[str | None] = mapped_column(CleanText)
    usage: Mapped[dict[str, Any] | None] = mapped_column(CleanJSON)
    answer: Mapped[str | None] = mapped_column(CleanText)
    """The final answer as shown (``RunCompleted.message`` without ``[[tool:N]]`` markers)."""
    result: Mapped[dict[str, Any] | None] = mapped_column(CleanJSON)
    """From the run's ``RunCompleted``: message, tool_history, payloads, suggestions."""
    started_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    parent_id: Mapped[str | None] = mapped_column(String(ID_LENGTH))
    """The message the run's first message follows (``None``: it opens a branch at the
    root). Kept on the run because a run that answers a message again has no message of its
    own until the model writes one."""

    __table_args__ = (UniqueConstraint("conversation_id", "ordinal"),)


class MessageRow(Base):
    __tablename__ = "agentstream_messages"

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(ForeignKey(ConversationRow.id, ondelete="CASCADE"))
    run_id: Mapped[str] = mapped_column(ForeignKey(RunRow.id, ondelete="CASCADE"), index=True)
    ordinal: Mapped[int] = mapped_column(Integer)
    """The run's ordinal: messages sort by ``(ordinal, seq)``."""
    seq: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(16))
    """``user``, ``assistant`` or ``tool``, as in :mod:`agentstream.messages`."""
    text: Mapped[str] = mapped_column(CleanText, default="")
    """User content or assistant text; tool results as the model saw them are in ``body``."""
    reasoning: Mapped[str | None] = mapped_column(CleanText)
    body: Mapped[dict[str, Any]] = mapped_column(CleanJSON)
    """The exact message, dumped with ``MESSAGES_ADAPTER``."""
    status: Mapped[str] = mapped_column(String(16), default="complete")
    """``complete``, or ``interrupted`` for the partial answer of a run that did not finish."""
    created_at: Mapped[datetime]
    parent_id: Mapped[str | None] = mapped_column(String(ID_LENGTH))
    """The message this one follows (``None`` for the first message of a branch at the root):
    a conversation is a tree, and the messages with one parent are siblings (an edited
    question, an answer given again)."""

    __table_args__ = (
        UniqueConstraint("conversation_id", "seq"),
        Index("ix_agentstream_messages_order", "conversation_id", "ordinal", "seq"),
        Index("ix_agentstream_messages_parent", "conversation_id", "parent_id"),
    )


class SummaryRow(Base):
    """A summary of the start of a conversation's path, written by the model for a run whose
    request no longer fitted its window (:mod:`agentstream.agent.summaries`).

    It is kept against the message that follows what it covers (``before_id``, a user
    message): what comes before a message is the same on every branch through it, so the
    summary serves each of them, and a branch that leaves the path earlier (an edit of an
    earlier question) does not reach it. Reading a run's history stops there
    (:func:`agentstream.store.tree.recent_path`)."""

    __tablename__ = "agentstream_summaries"

    before_id: Mapped[str] = mapped_column(
        ForeignKey(MessageRow.id, ondelete="CASCADE"), primary_key=True
    )
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey(ConversationRow.id, ondelete="CASCADE"), index=True
    )
    run_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    """The run that wrote it."""
    text: Mapped[str] = mapped_column(CleanText)
    exchanges: Mapped[int] = mapped_column(Integer)
    """How many exchanges it covers."""
    created_at: Mapped[datetime]


class UsageRow(Base):
    """What one run used and cost: the usage ledger behind ``GET /api/usage``.

    A row of its own rather than columns of the run: the ledger is an account of what was
    spent, by whom and on what, and it outlives the conversation (deleting a conversation
    deletes its runs, not what they cost). Written with the run's end, whatever the end:
    completed, failed, stopped or cut off by a client that left."""

    __tablename__ = "agentstream_usage"

    run_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(255))
    """The owner's tenant; ``""`` for a principal without one."""
    user_id: Mapped[str] = mapped_column(String(255))
    conversation_id: Mapped[str | None] = mapped_column(String(ID_LENGTH))
    model: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(16))
    day: Mapped[str] = mapped_column(String(10))
    """The UTC day the run ended (``YYYY-MM-DD``), when its tokens were counted: what usage
    is grouped by, as daily limits count it."""
    finished_at: Mapped[datetime]
    input_tokens: Mapped[int] = mapped_column(Integer)
    output_tokens: Mapped[int] = mapped_column(Integer)
    reasoning_tokens: Mapped[int] = mapped_column(Integer)
    cache_read_tokens: Mapped[int] = mapped_column(Integer)
    cache_write_tokens: Mapped[int] = mapped_column(Integer)
    cost_usd: Mapped[float | None] = mapped_column(Float)
    """US dollars; ``None`` when the model has no price (see
    :mod:`agentstream.providers.profiles`)."""
    estimated: Mapped[bool] = mapped_column(Boolean)
    """Some of the tokens are an estimate: the vendor never reported them (a model call cut
    short, or a server that sends no usage)."""

    __table_args__ = (
        Index("ix_agentstream_usage_day", "day"),
        Index("ix_agentstream_usage_owner_day", "tenant_id", "user_id", "day"),
    )


class AttachmentRow(Base):
    """A file a user uploaded: whose it is and what it is. The content is a blob, kept once
    per SHA-256 however many uploads share it (:mod:`agentstream.attachments.blobs`).

    ``referenced_at`` is set when a message first refers to it; an upload still without it
    after a while is removed (:meth:`~agentstream.store.attachments.SqlAttachments.sweep`)."""

    __tablename__ = "agentstream_attachments"

    id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(255))
    """The owner's tenant; ``""`` for a principal without one."""
    owner_id: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(CleanString(255))
    """For display only: never a path."""
    media_type: Mapped[str] = mapped_column(String(100))
    """Sniffed from the content (:mod:`agentstream.attachments.sniffing`)."""
    size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    created_at: Mapped[datetime]
    referenced_at: Mapped[datetime | None]

    __table_args__ = (
        Index("ix_agentstream_attachments_unreferenced", "referenced_at", "created_at"),
    )


class BlobPartRow(Base):
    """Attachment content kept in the database (so every host of a PostgreSQL deployment
    reads it), cut into parts so neither writing nor reading one holds a whole file."""

    __tablename__ = "agentstream_blobs"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    part: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class StateRow(Base):
    """A conversation's shared state (:mod:`agentstream.state`): the JSON object its page
    and its agent read and write. A table of its own, one row for a conversation that has a
    state: the conversation row is read for every list and locked by every write, and stays
    small; a conversation without state pays nothing."""

    __tablename__ = "agentstream_conversation_state"

    conversation_id: Mapped[str] = mapped_column(
        ForeignKey(ConversationRow.id, ondelete="CASCADE"), primary_key=True
    )
    state: Mapped[dict[str, Any]] = mapped_column(CleanJSON)
    updated_at: Mapped[datetime]


class ViewResourceRow(Base):
    """An interactive view's document (an MCP App's ``ui://`` resource) as a conversation
    first showed it, so a reload or another tab draws the same page without asking its
    server again (:mod:`agentstream.store.view_resources`). The row is written when the
    conversation first draws the view, and is what lets the view call tools back: a call
    from a view the conversation never drew is refused."""

    __tablename__ = "agentstream_view_resources"

    conversation_id: Mapped[str] = mapped_column(
        ForeignKey(ConversationRow.id, ondelete="CASCADE"), primary_key=True
    )
    source: Mapped[str] = mapped_column(String(255), primary_key=True)
    """The tool source serving it: an MCP server's label, ``agentstream`` for Python tools."""
    uri: Mapped[str] = mapped_column(String(1024), primary_key=True)
    html: Mapped[str] = mapped_column(CleanText)
    csp: Mapped[dict[str, Any]] = mapped_column(CleanJSON, default=dict)
    prefers_border: Mapped[bool | None] = mapped_column(Boolean)
    fetched_at: Mapped[datetime]


# The tables themselves, for the write path's Core statements: they skip the ORM's
# per-statement work (identity map, unit of work, attribute instrumentation).
CONVERSATIONS = cast(Table, ConversationRow.__table__)
RUNS = cast(Table, RunRow.__table__)
MESSAGES = cast(Table, MessageRow.__table__)
USAGE = cast(Table, UsageRow.__table__)
ATTACHMENTS = cast(Table, AttachmentRow.__table__)
BLOBS = cast(Table, BlobPartRow.__table__)
SUMMARIES = cast(Table, SummaryRow.__table__)
STATES = cast(Table, StateRow.__table__)
VIEW_RESOURCES = cast(Table, ViewResourceRow.__table__)
