"""Conversations that last: the SQL store behind the run pipeline and ``/api/conversations``.

``SqlConversationStore.open()`` connects to ``AGENTSTREAM_DATABASE_URL`` (default: the SQLite
file ``$AGENTSTREAM_DATA_DIR/agentstream.db``, data directory ``./data``), applies migrations
on SQLite, and implements :class:`agentstream.runs.store.ConversationStore`. PostgreSQL
(``postgresql+asyncpg://...``) is migrated with ``agentstream db upgrade``.

Modules: ``engine`` (URLs, SQLite tuning), ``models`` (tables), ``migrate`` (Alembic from
code), ``history`` (messages to rows and back), ``views`` (what a UI shows), ``titles``,
``tree`` (branches and the active path), ``statements`` (its SQL), ``repository`` (the
store), ``errors``.
"""

from agentstream.runs.store import ConversationNotFound
from agentstream.store.engine import create_engine, resolve_database_url
from agentstream.store.errors import (
    InvalidConversationId,
    InvalidCursor,
    StoreNotMigrated,
    UnknownRun,
)
from agentstream.store.migrate import current_revision, head_revision, upgrade
from agentstream.store.repository import SqlConversationStore
from agentstream.store.statements import normalize_conversation_id
from agentstream.store.titles import title_from_message
from agentstream.store.views import (
    ActiveRun,
    ConversationDetail,
    ConversationPage,
    ConversationSummary,
    DisplayMessage,
    DisplayPendingCall,
    DisplayToolCall,
)

__all__ = [
    "ActiveRun",
    "ConversationDetail",
    "ConversationNotFound",
    "ConversationPage",
    "ConversationSummary",
    "DisplayMessage",
    "DisplayPendingCall",
    "DisplayToolCall",
    "InvalidConversationId",
    "InvalidCursor",
    "SqlConversationStore",
    "StoreNotMigrated",
    "UnknownRun",
    "create_engine",
    "current_revision",
    "head_revision",
    "normalize_conversation_id",
    "resolve_database_url",
    "title_from_message",
    "upgrade",
]
