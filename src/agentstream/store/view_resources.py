"""Interactive views' documents, kept per conversation.

The first time a conversation draws a view, the server reads its ``ui://`` resource from the
tool's source and keeps it here; a reload, another tab or another worker draws it from this
row, and the call's result comes from the stored run's payload. Keeping the document per
conversation (not per server) means a conversation keeps showing the page it was answered
with even after the server changes it.

Every read and write checks the conversation's owner in the statement itself: another user's
or tenant's conversation is :class:`~agentstream.errors.ConversationNotFound`, as anywhere
else in the store.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from agentstream.errors import ConversationNotFound
from agentstream.principal import Principal
from agentstream.store.engine import writer
from agentstream.store.models import CONVERSATIONS, VIEW_RESOURCES, utcnow
from agentstream.store.statements import canonical, owned

__all__ = ["SqlViewResources"]

_v = VIEW_RESOURCES.c
_c = CONVERSATIONS.c


class SqlViewResources:
    """The views' documents of conversations, in the store's database."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._writer = writer(engine)

    async def owns(self, principal: Principal, conversation_id: str) -> None:
        """``ConversationNotFound`` unless the conversation is ``principal``'s."""
        async with self._engine.connect() as conn:
            found = await conn.scalar(
                select(_c.id).where(_c.id == canonical(conversation_id), *owned(principal))
            )
        if found is None:
            raise ConversationNotFound(conversation_id)

    async def get(
        self, principal: Principal, conversation_id: str, source: str, uri: str
    ) -> dict[str, Any] | None:
        """The kept document (``{uri, html, csp, prefers_border}``, as the views API serves
        it), or ``None`` when the conversation has not drawn this view."""
        conversation_id = canonical(conversation_id)
        async with self._engine.connect() as conn:
            mine = await conn.scalar(
                select(_c.id).where(_c.id == conversation_id, *owned(principal))
            )
            if mine is None:
                raise ConversationNotFound(conversation_id)
            row = (
                await conn.execute(
                    select(_v.html, _v.csp, _v.prefers_border).where(
                        _v.conversation_id == conversation_id, _v.source == source, _v.uri == uri
                    )
                )
            ).first()
        if row is None:
            return None
        return {
            "uri": uri,
            "html": row.html,
            "csp": dict(row.csp or {}),
            "prefers_border": row.prefers_border,
        }

    async def keep(
        self, principal: Principal, conversation_id: str, source: str, resource: Mapping[str, Any]
    ) -> None:
        """Keep ``resource`` (the shape :meth:`get` returns) for the conversation; the first
        one kept stays (two tabs opening a view at once keep one copy)."""
        conversation_id = canonical(conversation_id)
        await self.owns(principal, conversation_id)
        async with self._writer.begin() as conn:
            try:
                async with conn.begin_nested():
                    await conn.execute(
                        insert(VIEW_RESOURCES).values(
                            conversation_id=conversation_id,
                            source=source,
                            uri=resource["uri"],
                            html=resource["html"],
                            csp=resource["csp"],
                            prefers_border=resource["prefers_border"],
                            fetched_at=utcnow(),
                        )
                    )
            except IntegrityError:
                pass  # kept a moment ago by another request
