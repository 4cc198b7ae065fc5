"""Interactive views' documents kept per conversation (``SqlViewResources``), on SQLite and
PostgreSQL: only the owner reads or keeps them, the first kept stays, and they go with their
conversation."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from agentstream.errors import ConversationNotFound
from agentstream.principal import Principal
from agentstream.store import SqlConversationStore
from agentstream.store.models import VIEW_RESOURCES
from agentstream.store.view_resources import SqlViewResources

from .helpers import exchange, new_principal

URI = "ui://board/view.html"


def document(html: str) -> dict[str, object]:
    csp = {"connectDomains": ["https://api.example.com"]}
    return {"uri": URI, "html": html, "csp": csp, "prefers_border": True}


async def test_kept_per_conversation_and_owner(
    store: SqlConversationStore, alice: Principal
) -> None:
    bob = new_principal()
    views = SqlViewResources(store.engine)
    first = await exchange(store, alice, "show the board", "Here.")
    second = await exchange(store, alice, "again", "Here.")
    assert await views.get(alice, first, "board", URI) is None

    await views.keep(alice, first, "board", document("<p>v1</p>"))
    assert await views.get(alice, first, "board", URI) == document("<p>v1</p>")
    assert await views.get(alice, second, "board", URI) is None  # per conversation
    assert await views.get(alice, first, "other", URI) is None  # per source

    # Kept twice at once (two tabs): one copy, the first.
    await asyncio.gather(
        views.keep(alice, second, "board", document("<p>a</p>")),
        views.keep(alice, second, "board", document("<p>b</p>")),
    )
    kept = await views.get(alice, second, "board", URI)
    assert kept is not None and kept["html"] in ("<p>a</p>", "<p>b</p>")
    await views.keep(alice, first, "board", document("<p>v2</p>"))
    assert await views.get(alice, first, "board", URI) == document("<p>v1</p>")

    with pytest.raises(ConversationNotFound):
        await views.get(bob, first, "board", URI)
    with pytest.raises(ConversationNotFound):
        await views.keep(bob, first, "board", document("<p>bob's</p>"))
    with pytest.raises(ConversationNotFound):
        await views.get(alice, "not-a-conversation", "board", URI)
    assert await views.get(alice, first, "board", URI) == document("<p>v1</p>")

    await store.delete_conversation(alice, first)
    with pytest.raises(ConversationNotFound):
        await views.get(alice, first, "board", URI)
    async with store.engine.connect() as conn:
        left = await conn.scalar(
            select(func.count())
            .select_from(VIEW_RESOURCES)
            .where(VIEW_RESOURCES.c.conversation_id == first)
        )
    assert left == 0  # they go with their conversation
