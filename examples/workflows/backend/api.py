"""The backend's REST API: a FastAPI application of its own, mounted by the example under
``/example-api`` (or served alone: ``uvicorn --factory examples.workflows.backend.api:create``).

Every route needs the caller's credentials, checked with the same authenticator as the chat
server (a bearer JWT, or anonymous local mode), and sees only the caller's tenant: another
tenant's rule is a 404, and alerts are the caller's own inbox. Bodies are validated twice:
their shape by pydantic (422 naming the field), their meaning by the store (422 with every
problem: unknown action types, configs that do not fit, edges to unknown actions or ports, no
start, cycles, names taken).
"""

# No ``from __future__ import annotations``: FastAPI reads the route annotations at runtime.

import os
import uuid
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from agentstream.principal import Principal
from agentstream.server.auth import Authenticator, AuthError, authenticator_from_settings
from agentstream.server.settings import Settings
from examples._common import data_dir
from examples.workflows.backend.store import InvalidWorkflow, NotFound, WorkflowStore

__all__ = ["Backend", "WorkflowIn", "create", "default_path"]

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ActionIn(_Body):
    name: Name
    action_type: Name
    config: dict[str, Any] = Field(default_factory=dict)


class EdgeIn(_Body):
    source_action: Name | None = None
    """``None``: a start edge."""
    target_action: Name
    source_output: Name | None = None


class WorkflowIn(_Body):
    name: Name
    description: Annotated[str, StringConstraints(max_length=2000)] = ""
    entity_id: uuid.UUID
    trigger_type_id: uuid.UUID
    is_active: bool = True
    actions: list[ActionIn] = Field(min_length=1, max_length=50)
    edges: list[EdgeIn] = Field(min_length=1, max_length=200)

    def as_record(self) -> dict[str, Any]:
        record = self.model_dump()
        record["entity_id"] = str(self.entity_id)
        record["trigger_type_id"] = str(self.trigger_type_id)
        return record


class Validation(BaseModel):
    valid: bool
    errors: list[str]


def default_path() -> Path:
    """``$WORKFLOWS_EXAMPLE_DB``, else ``workflows.db`` in the example's data directory
    (``data/examples/workflows``, beside the other examples' data)."""
    explicit = os.environ.get("WORKFLOWS_EXAMPLE_DB")
    if explicit:
        return Path(explicit)
    return data_dir("workflows") / "workflows.db"


class Backend:
    """The store and the authenticator, both made on first use (the data is created the first
    time the example answers, not when it is imported)."""

    def __init__(self, path: Path | None = None, authenticator: Authenticator | None = None):
        self._path = path
        self._authenticator = authenticator

    @cached_property
    def store(self) -> WorkflowStore:
        return WorkflowStore(self._path or default_path())

    @cached_property
    def authenticator(self) -> Authenticator:
        return self._authenticator or authenticator_from_settings(Settings.from_env())

    async def caller(self, request: Request) -> Principal:
        try:
            principal = await self.authenticator.authenticate(request, allow_cookie=False)
        except AuthError as exc:
            raise HTTPException(401, str(exc), headers={"WWW-Authenticate": "Bearer"}) from None
        self.store.ensure_seeded(_tenant(principal), principal.user_id, principal.user_id)
        return principal


def _tenant(principal: Principal) -> str:
    return principal.tenant_id or ""


def create(backend: Backend | None = None) -> FastAPI:
    """The backend's application."""
    backend = backend or Backend()
    app = FastAPI(
        title="Workflow example backend",
        summary="Rules, actions, edges, triggers, entities and alerts of the workflow example.",
    )

    @app.exception_handler(NotFound)
    async def not_found(_: Request, exc: NotFound) -> JSONResponse:
        return JSONResponse({"detail": f"Not found: {exc}"}, status_code=404)

    Caller = Annotated[Principal, Depends(backend.caller)]
    workflow = APIRouter(prefix="/v1/workflow")

    @workflow.get("/action-types")
    def action_types(caller: Caller) -> list[dict[str, Any]]:
        return backend.store.action_types()

    @workflow.get("/trigger-types")
    def trigger_types(caller: Caller) -> list[dict[str, Any]]:
        return backend.store.trigger_types()

    @workflow.get("/entities")
    def entities(caller: Caller) -> list[dict[str, Any]]:
        return [{k: v for k, v in e.items() if k != "columns"} for e in backend.store.entities()]

    @workflow.get("/rules")
    def list_rules(caller: Caller) -> list[dict[str, Any]]:
        return backend.store.list_rules(_tenant(caller))

    @workflow.post("/rules/validate")
    def validate_rule(
        body: WorkflowIn, caller: Caller, rule_id: uuid.UUID | None = None
    ) -> Validation:
        errors = backend.store.check(
            _tenant(caller), body.as_record(), str(rule_id) if rule_id else None
        )
        return Validation(valid=not errors, errors=errors)

    @workflow.post("/rules", status_code=201)
    def create_rule(body: WorkflowIn, caller: Caller) -> dict[str, Any]:
        return _saved(backend, caller, body, None)

    @workflow.get("/rules/{rule_id}")
    def get_rule(rule_id: uuid.UUID, caller: Caller) -> dict[str, Any]:
        return backend.store.get_rule(_tenant(caller), str(rule_id))

    @workflow.put("/rules/{rule_id}")
    def update_rule(rule_id: uuid.UUID, body: WorkflowIn, caller: Caller) -> dict[str, Any]:
        return _saved(backend, caller, body, str(rule_id))

    @workflow.get("/rules/{rule_id}/alerts")
    def rule_alerts(rule_id: uuid.UUID, caller: Caller) -> list[dict[str, Any]]:
        return backend.store.alerts_for_rule(_tenant(caller), caller.user_id, str(rule_id))

    @workflow.get("/alerts/mine")
    def my_alerts(caller: Caller) -> list[dict[str, Any]]:
        return backend.store.alerts_for_user(_tenant(caller), caller.user_id)

    @workflow.get("/alerts/{alert_id}")
    def alert(alert_id: uuid.UUID, caller: Caller) -> dict[str, Any]:
        return backend.store.alert(_tenant(caller), caller.user_id, str(alert_id))

    data = APIRouter(prefix="/v1/data")

    @data.get("/tables")
    def tables(caller: Caller) -> list[dict[str, Any]]:
        return [
            {"table": e["qualified_name"], "description": e["description"]}
            for e in backend.store.entities()
        ]

    @data.get("/tables/{schema}/{table}")
    def table(schema: str, table: str, caller: Caller) -> dict[str, Any]:
        return backend.store.entity(schema, table)

    app.include_router(workflow)
    app.include_router(data)
    return app


def _saved(
    backend: Backend, caller: Principal, body: WorkflowIn, rule_id: str | None
) -> dict[str, Any]:
    try:
        return backend.store.save_rule(_tenant(caller), caller.user_id, body.as_record(), rule_id)
    except InvalidWorkflow as exc:
        detail = {"message": "The workflow is not valid.", "errors": exc.errors}
        raise HTTPException(422, detail) from None
