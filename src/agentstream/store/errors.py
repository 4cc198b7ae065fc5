"""The store's own errors (``ConversationNotFound`` is the run pipeline's, in
:mod:`agentstream.runs.store`)."""

from __future__ import annotations

__all__ = ["InvalidConversationId", "InvalidCursor", "StoreNotMigrated", "UnknownRun"]


class InvalidConversationId(ValueError):
    """A conversation id we cannot store: 1 to 64 letters, digits, ``-``, ``_``, ``.``, ``:``
    (UUIDs in any of their usual spellings are normalized)."""


class InvalidCursor(ValueError):
    """A paging cursor that this store did not hand out."""


class StoreNotMigrated(RuntimeError):
    """The database has not been migrated (``agentstream db upgrade``)."""


class UnknownRun(LookupError):
    """``append_messages``/``finish_run`` for a run that ``start_run`` did not start in that
    conversation."""
