"""How the assistant's tools reach the backend: its REST API over HTTP, with the user's bearer
token forwarded verbatim, never its database.

By default the calls go to the backend application in this process (the one the example mounts
under ``/example-api``) through httpx's ASGI transport, so the example needs no address of its
own; with ``WORKFLOWS_API_URL`` they go to a backend served elsewhere.

An :class:`Executor` serves the tool calls of one run: it resolves the names a model writes
(``"inventory.inventory_items"``, ``"on_update"``, a rule's name) to the backend's ids and
caches what it learned for the rest of the run.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Any

import httpx
from starlette.types import ASGIApp

from agentstream.chat.toolhooks import is_uuid
from agentstream.tools import ToolContext

__all__ = ["BackendError", "Executor", "WorkflowApi"]


class BackendError(Exception):
    """The backend refused a call; the message (and its list of problems) goes to the model."""

    def __init__(self, status: int, message: str, errors: list[str] | None = None) -> None:
        self.status = status
        self.errors = errors or []
        super().__init__(message + (": " + "; ".join(self.errors) if self.errors else ""))


class WorkflowApi:
    """The backend's REST API, called as the user whose token a tool holds."""

    def __init__(self, app: ASGIApp | None = None, base_url: str | None = None) -> None:
        self._app = app
        self._base_url = base_url or os.environ.get("WORKFLOWS_API_URL")
        if self._app is None and not self._base_url:
            raise ValueError("WorkflowApi needs the backend app or its URL")

    def _client(self, token: str | None) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if self._base_url:
            return httpx.AsyncClient(base_url=self._base_url, headers=headers, timeout=15)
        assert self._app is not None
        transport = httpx.ASGITransport(app=self._app, client=("127.0.0.1", 40000))
        return httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1", headers=headers, timeout=15
        )

    async def request(
        self, token: str | None, method: str, path: str, *, json: Any = None, params: Any = None
    ) -> Any:
        async with self._client(token) as client:
            response = await client.request(method, path, json=json, params=params)
        if response.is_success:
            return response.json()
        raise _error(response)


def _error(response: httpx.Response) -> BackendError:
    try:
        detail = response.json().get("detail")
    except ValueError:
        detail = None
    if isinstance(detail, dict):
        return BackendError(
            response.status_code, str(detail.get("message", "Refused")), detail.get("errors")
        )
    if isinstance(detail, list):  # pydantic's field errors
        problems = [
            f"{'.'.join(str(p) for p in d.get('loc', [])[1:])}: {d.get('msg')}" for d in detail
        ]
        return BackendError(response.status_code, "The request is not valid", problems)
    text = detail if isinstance(detail, str) else response.reason_phrase
    return BackendError(
        response.status_code, f"The backend answered {response.status_code}: {text}"
    )


class Executor:
    """The backend as one run's tools see it: calls with the run's token, and the names the
    model used resolved to ids once per run."""

    def __init__(self, api: WorkflowApi, token: str | None) -> None:
        self.api = api
        self.token = token
        self._entities: dict[str, str] | None = None
        self._triggers: dict[str, str] | None = None
        self._rules: dict[str, str] = {}
        self._action_types: list[dict[str, Any]] | None = None

    async def get(self, path: str, **params: Any) -> Any:
        return await self.api.request(self.token, "GET", path, params=params or None)

    async def send(self, method: str, path: str, body: Any, **params: Any) -> Any:
        return await self.api.request(self.token, method, path, json=body, params=params or None)

    async def action_types(self) -> list[dict[str, Any]]:
        if self._action_types is None:
            self._action_types = await self.get("/v1/workflow/action-types")
        return self._action_types

    async def entity_id(self, name: str) -> str:
        """``"schema.table"`` (or an entity's id) to its id."""
        if is_uuid(name):
            return name
        if self._entities is None:
            found = await self.get("/v1/workflow/entities")
            self._entities = {e["qualified_name"]: e["id"] for e in found}
        try:
            return self._entities[name.strip()]
        except KeyError:
            known = ", ".join(sorted(self._entities))
            raise LookupError(f"unknown entity {name!r}; the entities are {known}") from None

    async def trigger_type_id(self, name: str) -> str:
        """``"on_update"`` (or a trigger type's id) to its id."""
        if is_uuid(name):
            return name
        if self._triggers is None:
            found = await self.get("/v1/workflow/trigger-types")
            self._triggers = {t["name"]: t["id"] for t in found}
        try:
            return self._triggers[name.strip()]
        except KeyError:
            known = ", ".join(self._triggers)
            raise LookupError(f"unknown trigger type {name!r}; the types are {known}") from None

    async def rule_id(self, name_or_id: str) -> str:
        """A rule's name (or id) to its id."""
        if is_uuid(name_or_id):
            return name_or_id
        key = name_or_id.strip().casefold()
        if key not in self._rules:
            rules = await self.get("/v1/workflow/rules")
            self._rules.update({r["name"].casefold(): r["id"] for r in rules})
        try:
            return self._rules[key]
        except KeyError:
            raise LookupError(
                f"no workflow rule named {name_or_id!r}; list_workflow_rules shows them"
            ) from None


class Executors:
    """One :class:`Executor` per run (and caller), kept for the run's later tool calls; the
    oldest are dropped beyond ``limit``."""

    def __init__(self, api: WorkflowApi, limit: int = 256) -> None:
        self.api = api
        self.limit = limit
        self._by_run: OrderedDict[tuple[str, str, str | None], Executor] = OrderedDict()

    def for_call(self, ctx: ToolContext) -> Executor:
        key = (ctx.run_id, ctx.principal.user_id, ctx.principal.tenant_id)
        executor = self._by_run.get(key)
        if executor is None:
            executor = Executor(self.api, ctx.token)
            self._by_run[key] = executor
            while len(self._by_run) > self.limit:
                self._by_run.popitem(last=False)
        return executor
