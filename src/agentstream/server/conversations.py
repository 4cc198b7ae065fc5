"""``/api/conversations``: list, read, rename and delete the caller's conversations.

The web UI is built against exactly these shapes::

    GET    /api/conversations?limit=20&cursor=<opaque>  -> {"items": [summary...], "next_cursor"}
    GET    /api/conversations/{id}                      -> summary + metadata + messages
                                                         + active_run (the run in progress)
    PATCH  /api/conversations/{id}  {"title": "..."}    -> summary
    DELETE /api/conversations/{id}                      -> 204

A summary is ``{id, title, created_at, updated_at, model}`` with ISO-8601 UTC times ending in
``Z``; messages are what :mod:`agentstream.store.views` shows (a user turn, then one answer per
run with its tool calls folded in). Another user's or tenant's conversation is a ``404
{"detail": "Conversation not found"}``, the same as one that does not exist. Bad input is a
``400 {"detail": "...", "field": "<name>"}`` (FastAPI would say 422; the UI expects 400 and the
field to highlight). Both come from the app's error handlers
(:func:`agentstream.server.errors.install_error_handlers`), which an app that includes this
router on its own installs too.

The router is a factory: the server passes the store and the dependency that authenticates
the caller, so this module knows nothing about sessions, tokens or tenants.

Reference: ``docs/protocols/conversations.md``.
"""

# No ``from __future__ import annotations``: FastAPI reads these annotations at runtime and
# ``CurrentPrincipal`` is local to the factory.

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response
from pydantic import AfterValidator, BaseModel, ConfigDict, model_validator

from agentstream.principal import Principal
from agentstream.runs.store import ConversationEditor, ConversationReader
from agentstream.server.limits import validate_body
from agentstream.store.models import TITLE_LENGTH
from agentstream.store.repository import MAX_PAGE
from agentstream.store.titles import clean_title

__all__ = ["conversations_router"]


class RenameBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: Annotated[str, AfterValidator(lambda title: clean_title(title, TITLE_LENGTH))]

    @model_validator(mode="before")
    @classmethod
    def _checked(cls, data: Any) -> Any:
        return validate_body(data)


def conversations_router(
    store: ConversationReader, principal_dependency: Callable[..., Any]
) -> APIRouter:
    """The conversation endpoints for ``store``; ``principal_dependency`` is a FastAPI
    dependency that returns (or yields) the authenticated :class:`Principal`. Renaming and
    deleting are served when the store is also a
    :class:`~agentstream.runs.store.ConversationEditor`."""
    router = APIRouter(prefix="/api/conversations", tags=["conversations"])
    CurrentPrincipal = Annotated[Principal, Depends(principal_dependency)]

    @router.get("")
    async def list_conversations(
        principal: CurrentPrincipal,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 20,
        cursor: Annotated[str | None, Query(max_length=1000)] = None,
    ) -> dict[str, Any]:
        page = await store.list_conversations(principal, limit=limit, cursor=cursor or None)
        return page.to_json()

    @router.get("/{conversation_id}")
    async def get_conversation(principal: CurrentPrincipal, conversation_id: str) -> dict[str, Any]:
        detail = await store.get_conversation(principal, conversation_id)
        return detail.to_json()

    if not isinstance(store, ConversationEditor):
        return router
    editor = store

    @router.patch("/{conversation_id}")
    async def rename_conversation(
        principal: CurrentPrincipal, conversation_id: str, body: RenameBody
    ) -> dict[str, Any]:
        summary = await editor.rename_conversation(principal, conversation_id, body.title)
        return summary.to_json()

    @router.delete("/{conversation_id}", status_code=204)
    async def delete_conversation(principal: CurrentPrincipal, conversation_id: str) -> Response:
        await editor.delete_conversation(principal, conversation_id)
        return Response(status_code=204)

    return router
