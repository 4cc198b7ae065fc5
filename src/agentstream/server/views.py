"""``/api/conversations/{id}/views``: what an interactive view (an MCP App) asks of the server.

A view runs in the browser in a sandboxed frame with an origin of its own, so it can reach
nothing of ours; the page hosting it (the web UI, the tray) asks these two endpoints for it,
as the signed-in user who sees it::

    GET  /api/conversations/{id}/views/document?source=<source>&uri=<ui://...>
         -> {uri, html, csp, prefers_border}
    POST /api/conversations/{id}/views/calls
         {source, uri, name, arguments, approved?} -> the call's CallToolResult

The document is read from the tool's source (an MCP server's ``resources/read``, or a Python
tool's own :class:`~agentstream.tools.views.View`) the first time the conversation draws it,
and kept with the conversation (:mod:`agentstream.store.view_resources`): a reload, another
tab or another worker draws the same page. Only a ``ui://`` resource that one of the source's
tools names is read.

A call is run only for a view the conversation has drawn, and only for a tool of that view's
own source that the source lets views call (``_meta.ui.visibility`` holding ``"app"``, or a
Python tool's ``visibility``): any other is a 403. A tool that needs a person's approval
answers 409 ``{"approval_required": true}`` until the host asks the user and sends the call
again with ``approved: true``. The call runs under the agent's tool timeout with a tool
context for the user (their token, the conversation), and every read and call is logged
(user, conversation, source, tool; never arguments or tokens). What a view does in the browser
alone (a message sent as the user, the model's context added to, a link asked for) the page
reports to ``POST .../views/actions`` ``{source, uri, action, url?}``, which logs it too.
"""

# No ``from __future__ import annotations``: FastAPI reads these annotations at runtime and
# ``CurrentPrincipal`` is local to the factory.

import json
import logging
from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentstream.agent import Agent
from agentstream.errors import Forbidden, Unavailable, ViewNotFound
from agentstream.events import Payload
from agentstream.ids import new_id
from agentstream.messages import ToolCall
from agentstream.principal import Principal
from agentstream.server.errors import ApiError
from agentstream.server.limits import validate_body
from agentstream.store.view_resources import SqlViewResources
from agentstream.tools.context import ToolContext
from agentstream.tools.execution import CallOutcome, PreparedCall, prepare_call, run_call
from agentstream.tools.views import VIEW_PAYLOAD, LocalViews, ViewSource, call_result

__all__ = ["views_router"]

log = logging.getLogger("agentstream.views")

URI_LENGTH = 1024


class CallBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1, max_length=255)
    uri: str = Field(min_length=1, max_length=URI_LENGTH, pattern=r"^ui://")
    name: str = Field(min_length=1, max_length=255)
    arguments: dict[str, Any] = Field(default_factory=dict)
    approved: bool = False
    """The user agreed to this call (the host asked them after a 409)."""

    @model_validator(mode="before")
    @classmethod
    def _checked(cls, data: Any) -> Any:
        return validate_body(data)


class ActionBody(BaseModel):
    """Something a view did in the browser, for the log."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1, max_length=255)
    uri: str = Field(min_length=1, max_length=URI_LENGTH, pattern=r"^ui://")
    action: Literal["message", "context", "open_link"]
    url: str | None = Field(default=None, max_length=2048)
    """The link a view asked to open (``open_link``)."""

    @model_validator(mode="before")
    @classmethod
    def _checked(cls, data: Any) -> Any:
        return validate_body(data)


class ViewUnreachable(Unavailable):
    detail = "The view's server could not be reached"


def view_sources(agent: Agent) -> dict[str, ViewSource]:
    """Every source whose tools may be drawn by views, by the name payloads carry: the
    agent's own tools (scoped ones too) and each tool source that hosts views."""
    local = agent.toolset.resolve(agent.toolset.scopes)
    sources: dict[str, ViewSource] = {LocalViews.view_source: LocalViews(local)}
    for source in agent.tool_sources:
        if isinstance(source, ViewSource):
            sources.setdefault(source.view_source, source)
    return sources


def views_router(
    agent: Agent, documents: SqlViewResources, principal_dependency: Callable[..., Any]
) -> APIRouter:
    """The views endpoints for ``agent``'s sources, keeping documents in ``documents``."""
    router = APIRouter(prefix="/api/conversations", tags=["conversations"])
    CurrentPrincipal = Annotated[Principal, Depends(principal_dependency)]

    def source_of(name: str) -> ViewSource:
        found = view_sources(agent).get(name)
        if found is None:
            raise ViewNotFound(name)
        return found

    @router.get("/{conversation_id}/views/document")
    async def view_document(
        principal: CurrentPrincipal,
        conversation_id: str,
        source: Annotated[str, Query(min_length=1, max_length=255)],
        uri: Annotated[str, Query(min_length=1, max_length=URI_LENGTH, pattern=r"^ui://")],
    ) -> dict[str, Any]:
        kept = await documents.get(principal, conversation_id, source, uri)
        if kept is not None:
            return kept
        serving = source_of(source)
        try:
            resource = await serving.read_view(principal, uri)
        except LookupError as exc:
            log.info("view %s of %s not found: %s", uri, source, exc)
            raise ViewNotFound(uri) from None
        except ValueError as exc:  # a declared policy that is not a list of origins
            log.warning("view %s of %s refused: %s", uri, source, exc)
            raise ApiError(502, f"The view's document was refused: {exc}") from None
        except Exception as exc:  # the server is down, or sent a document we refuse
            log.warning("view %s of %s could not be read: %r", uri, source, exc)
            raise ViewUnreachable(str(exc)) from None
        document = resource.as_json()
        await documents.keep(principal, conversation_id, source, document)
        log.info(
            "view drawn: user=%s conversation=%s source=%s uri=%s csp=%s",
            principal.user_id,
            conversation_id,
            source,
            uri,
            json.dumps(resource.csp),
        )
        return document

    @router.post("/{conversation_id}/views/calls", response_model=None)
    async def view_call(
        principal: CurrentPrincipal, conversation_id: str, body: CallBody
    ) -> dict[str, Any] | JSONResponse:
        if await documents.get(principal, conversation_id, body.source, body.uri) is None:
            raise ViewNotFound(body.uri)  # a view this conversation never drew calls nothing
        serving = source_of(body.source)
        try:
            callable_tools = {t.name: t for t in await serving.app_tools(principal)}
        except Exception as exc:
            log.warning("tools of %s could not be listed: %r", body.source, exc)
            raise ViewUnreachable(str(exc)) from None
        where = (principal.user_id, conversation_id, body.source, body.name)
        found = callable_tools.get(body.name)
        if found is None:
            log.warning("view call refused: user=%s conversation=%s source=%s tool=%s", *where)
            raise Forbidden(f"{body.name} is not a tool this view may call")
        call_id = f"view_{new_id()}"
        asked = ToolCall(id=call_id, name=body.name, arguments=body.arguments)
        if not body.approved and found.needs_approval(asked):
            detail = f"{body.name} needs the user's approval: ask them, then send approved"
            return JSONResponse({"detail": detail, "approval_required": True}, 409)
        ctx = ToolContext(
            principal=principal,
            run_id=call_id,
            call_id=call_id,
            tool_name=body.name,
            conversation_id=conversation_id,
        )
        _, prepared = prepare_call(callable_tools, body.name, json.dumps(body.arguments), ctx)
        outcome = (
            await run_call(prepared, ctx, agent.tool_timeout)
            if isinstance(prepared, PreparedCall)
            else prepared
        )
        log.info(
            "view call: user=%s conversation=%s source=%s tool=%s outcome=%s",
            *where,
            outcome.outcome,
        )
        return _as_call_result(outcome)

    @router.post("/{conversation_id}/views/actions", status_code=204)
    async def view_action(
        principal: CurrentPrincipal, conversation_id: str, body: ActionBody
    ) -> None:
        """What a view did in the browser (a message sent as the user, the model's context
        added to, a link asked for) is logged here, as its calls are: the page hosting it
        says so, for a view the conversation drew."""
        if await documents.get(principal, conversation_id, body.source, body.uri) is None:
            raise ViewNotFound(body.uri)
        log.info(
            "view action: user=%s conversation=%s source=%s uri=%s action=%s%s",
            principal.user_id,
            conversation_id,
            body.source,
            body.uri,
            body.action,
            f" url={body.url}" if body.url else "",
        )

    return router


def _as_call_result(outcome: CallOutcome) -> dict[str, Any]:
    """What the view receives: MCP's ``CallToolResult`` as its source gave it (an MCP
    server's, with its structured content) or as a Python tool's value makes it."""
    payload: Payload | None = outcome.payload
    if payload is not None and payload.kind == VIEW_PAYLOAD and not outcome.is_error:
        return dict(payload.data["result"])
    return call_result(outcome.result, outcome.output, is_error=outcome.is_error)
