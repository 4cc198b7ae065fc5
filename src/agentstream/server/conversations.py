"""``/api/conversations``: list, read, rename and delete the caller's conversations.

The web UI is built against exactly these shapes::

    GET    /api/conversations?limit=20&cursor=<opaque>  -> {"items": [summary...], "next_cursor"}
    GET    /api/conversations/{id}                      -> summary + metadata + messages
                                                         + active_run (the run in progress)
    PATCH  /api/conversations/{id}  {"title": "..."}    -> summary
    DELETE /api/conversations/{id}                      -> 204

and the branches of a conversation (``docs/guides/branches.md``), where ``{message_id}`` is
an id the conversation shows (a user message's, an answer's run id)::

    GET  /api/conversations/{id}/messages/{message_id}/siblings -> {"siblings", "index"}
    PUT  /api/conversations/{id}/active_leaf {"message_id"}      -> the conversation
    POST /api/conversations/{id}/messages/{message_id}/edit {"content"}  -> 202 the run
    POST /api/conversations/{id}/messages/{message_id}/regenerate {}     -> 202 the run

An edit or a regenerate starts a run on the new branch and answers at once with its id;
the run goes on without the request, its canonical events at ``/api/runs/{run_id}/events``.

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

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Response
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from agentstream.principal import Principal
from agentstream.runs import Branch, RunRequest, RunSession
from agentstream.runs.store import ConversationEditor, ConversationReader, ConversationTree
from agentstream.server.dialects.base import NonEmptyText
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


class ActiveLeafBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message_id: str = Field(min_length=1, max_length=64)
    """The message whose branch becomes the active one (down to its newest message)."""

    @model_validator(mode="before")
    @classmethod
    def _checked(cls, data: Any) -> Any:
        return validate_body(data)


class EditBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: NonEmptyText
    """The question as it now reads."""

    @model_validator(mode="before")
    @classmethod
    def _checked(cls, data: Any) -> Any:
        return validate_body(data)


class RegenerateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _checked(cls, data: Any) -> Any:
        return validate_body(data)


class StartedBranch(BaseModel):
    """A run started on a new branch: follow it at ``events``."""

    conversation_id: str
    run_id: str
    events: str


Begin = Callable[[RunRequest], Awaitable[RunSession]]
"""Starts a run (the server's runner), for the endpoints that answer on a new branch."""


def conversations_router(
    store: ConversationReader,
    principal_dependency: Callable[..., Any],
    begin: Begin | None = None,
) -> APIRouter:
    """The conversation endpoints for ``store``; ``principal_dependency`` is a FastAPI
    dependency that returns (or yields) the authenticated :class:`Principal`. Renaming and
    deleting are served when the store is also a
    :class:`~agentstream.runs.store.ConversationEditor`; siblings and the active leaf when
    it is a :class:`~agentstream.runs.store.ConversationTree`, and edits and regenerates
    when ``begin`` starts runs too."""
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

    if isinstance(store, ConversationTree):
        _branch_routes(router, store, CurrentPrincipal, begin)
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


def _branch_routes(
    router: APIRouter, tree: ConversationTree, CurrentPrincipal: Any, begin: Begin | None
) -> None:
    """Siblings, the active leaf, and (with ``begin``) edits and regenerates."""
    not_found: dict[int | str, dict[str, Any]] = {
        404: {"description": "No such conversation, or message in it, for the caller"}
    }

    @router.get("/{conversation_id}/messages/{message_id}/siblings", responses=not_found)
    async def siblings(
        principal: CurrentPrincipal, conversation_id: str, message_id: str
    ) -> dict[str, Any]:
        """The ids of the message and of those in its place on other branches, oldest
        first, and where it is among them."""
        ids = list(await tree.siblings(principal, conversation_id, message_id))
        return {"siblings": ids, "index": ids.index(message_id) if message_id in ids else 0}

    @router.put("/{conversation_id}/active_leaf", responses=not_found)
    async def set_active_leaf(
        principal: CurrentPrincipal, conversation_id: str, body: ActiveLeafBody
    ) -> dict[str, Any]:
        """Switch to the branch through ``message_id``: the conversation as it now reads."""
        detail = await tree.set_active(principal, conversation_id, body.message_id)
        return detail.to_json()

    if begin is None:
        return
    start = begin

    async def answer(
        principal: Principal, conversation_id: str, branch: Branch, message: str
    ) -> StartedBranch:
        request = RunRequest(
            message=message, principal=principal, conversation_id=conversation_id, branch=branch
        )
        session = await start(request)
        cid = session.conversation_id or conversation_id
        return StartedBranch(
            conversation_id=cid,
            run_id=session.run_id,
            events=f"/api/runs/{session.run_id}/events",
        )

    started: dict[int | str, dict[str, Any]] = {
        202: {"description": "The run started: follow it at `events`"},
        400: {"description": "Not a message that can be edited"},
        **not_found,
    }

    @router.post(
        "/{conversation_id}/messages/{message_id}/edit", status_code=202, responses=started
    )
    async def edit_message(
        principal: CurrentPrincipal, conversation_id: str, message_id: str, body: EditBody
    ) -> StartedBranch:
        """Ask the user message again as ``content``: a new branch beside it, answered."""
        branch = await tree.branch_for(principal, conversation_id, message_id, again=False)
        return await answer(principal, conversation_id, branch, body.content)

    @router.post(
        "/{conversation_id}/messages/{message_id}/regenerate", status_code=202, responses=started
    )
    async def regenerate(
        principal: CurrentPrincipal,
        conversation_id: str,
        message_id: str,
        body: RegenerateBody | None = None,
    ) -> StartedBranch:
        """A new answer to the user message (or to the question an answer answers), beside
        the answers it has."""
        branch = await tree.branch_for(principal, conversation_id, message_id, again=True)
        return await answer(principal, conversation_id, branch, "")
