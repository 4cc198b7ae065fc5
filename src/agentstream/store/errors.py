"""The store's own errors, defined in :mod:`agentstream.errors` with the rest of the tree
(``ConversationNotFound`` too) and importable from here as before."""

from __future__ import annotations

from agentstream.errors import InvalidConversationId, InvalidCursor, StoreNotMigrated, UnknownRun

__all__ = ["InvalidConversationId", "InvalidCursor", "StoreNotMigrated", "UnknownRun"]
