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
field to highlight), handled by this router's route class so the app needs no global handler.

The router is a factory: the server passes the store and the dependency that authenticates
the caller, so this module knows nothing about sessions, tokens or tenants.

Reference: ``docs/protocols/conversations.md``.
"""

# No ``from __future__ import annotations``: FastAPI reads these annotations at runtime and
# ``CurrentPrincipal`` is local to the factory.

from collections.abc import Callable, Coroutine, Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import AfterValidator, BaseModel, ConfigDict

from agentstream.principal import Principal
from agentstream.runs.store import ConversationNotFound
from agentstream.server.errors import bad_request, validation_error_body
from agentstream.store import InvalidCursor, SqlConversationStore
from agentstream.store.models import TITLE_LENGTH
from agentstream.store.repository import MAX_PAGE
from agentstream.store.titles import clean_title

__all__ = ["conversations_router"]

NOT_FOUND = {"detail": "Conversation not found"}


class RenameBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: Annotated[str, AfterValidator(lambda title: clean_title(title, TITLE_LENGTH))]


def conversations_router(
    store: SqlConversationStore, principal_dependency: Callable[..., Any]
) -> APIRouter:
    """The conversation endpoints for ``store``; ``principal_dependency`` is a FastAPI
    dependency that returns (or yields) the authenticated :class:`Principal`."""
    router = APIRouter(prefix="/api/conversations", tags=["conversations"], route_class=_Route)
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

    @router.patch("/{conversation_id}")
    async def rename_conversation(
        principal: CurrentPrincipal, conversation_id: str, body: RenameBody
    ) -> dict[str, Any]:
        summary = await store.rename_conversation(principal, conversation_id, body.title)
        return summary.to_json()

    @router.delete("/{conversation_id}", status_code=204)
    async def delete_conversation(principal: CurrentPrincipal, conversation_id: str) -> Response:
        await store.delete_conversation(principal, conversation_id)
        return Response(status_code=204)

    return router


class _Route(APIRoute):
    """Turns this router's errors into its documented responses (400 with the field, 404)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestValidationError as exc:
                return _bad_request(exc.errors())
            except InvalidCursor as exc:
                return JSONResponse({"detail": str(exc), "field": "cursor"}, status_code=400)
            except ConversationNotFound:
                return JSONResponse(NOT_FOUND, status_code=404)

        return route


def _bad_request(errors: Sequence[Any]) -> JSONResponse:
    return bad_request(*validation_error_body(errors)).response()
