"""The workflow example's client side against its real backend app (in-process, over httpx's
ASGI transport): names resolved and cached per executor, the ``after`` shorthand, and what a
tool sees when the backend refuses or cannot be reached."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentstream.server.auth import AnonymousAuthenticator
from examples.workflows.backend.api import Backend, create
from examples.workflows.client import BackendError, Executor, WorkflowApi
from examples.workflows.shapes import ActionSpec, EdgeSpec, WorkflowSpec, expand_after, to_backend


class CountingApi(WorkflowApi):
    """The real API client, counting the requests it makes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.paths: list[str] = []

    async def request(self, token: str | None, method: str, path: str, **kwargs: Any) -> Any:
        self.paths.append(path)
        return await super().request(token, method, path, **kwargs)


@pytest.fixture
def api(tmp_path: Path) -> CountingApi:
    backend = Backend(tmp_path / "wf.sqlite", AnonymousAuthenticator())
    return CountingApi(app=create(backend))


async def test_names_are_resolved_once_per_executor(api: CountingApi) -> None:
    executor = Executor(api, token=None)
    items = await executor.entity_id("inventory.inventory_items")
    assert await executor.entity_id("inventory.inventory_items") == items
    assert await executor.entity_id(items) == items  # an id is kept as it is
    on_update = await executor.trigger_type_id("on_update")
    assert await executor.trigger_type_id("on_update") == on_update
    welcome = await executor.rule_id("New Customer Welcome")
    assert await executor.rule_id("new customer welcome") == welcome
    assert api.paths == [
        "/v1/workflow/entities",
        "/v1/workflow/trigger-types",
        "/v1/workflow/rules",
    ]
    # Another executor (another run) asks again.
    await Executor(api, token=None).entity_id("inventory.inventory_items")
    assert api.paths.count("/v1/workflow/entities") == 2


async def test_unknown_names_say_what_exists(api: CountingApi) -> None:
    executor = Executor(api, token=None)
    with pytest.raises(LookupError, match=r"unknown entity 'stock.items'; the entities are core"):
        await executor.entity_id("stock.items")
    with pytest.raises(
        LookupError, match="unknown trigger type 'on_save'; the types are on_create"
    ):
        await executor.trigger_type_id("on_save")
    with pytest.raises(LookupError, match="no workflow rule named 'Nope'"):
        await executor.rule_id("Nope")


def test_the_after_shorthand() -> None:
    actions = [
        ActionSpec(name="Check", action_type="evaluate_condition"),
        ActionSpec(name="Alert", action_type="create_alert", after="Check:output-false"),
        ActionSpec(name="Mail", action_type="send_email", after="Alert"),
    ]
    ports: dict[str, str | None] = {"create_alert": "output-success"}
    assert expand_after(actions, ports) == [
        {"source_action": None, "target_action": "Check"},
        {"source_action": "Check", "target_action": "Alert", "source_output": "output-false"},
        {"source_action": "Alert", "target_action": "Mail", "source_output": "output-success"},
    ]
    stray = [ActionSpec(name="A", action_type="x", after="Ghost:out")]
    with pytest.raises(ValueError, match="'after' names 'Ghost:out', which is not an action"):
        expand_after(stray, ports)


async def test_explicit_edges_and_after_combine(api: CountingApi) -> None:
    workflow = WorkflowSpec(
        name="W",
        entity="sales.orders",
        trigger_type="on_create",
        actions=[
            ActionSpec(name="Check", action_type="evaluate_condition"),
            ActionSpec(name="Alert", action_type="create_alert", after="Check"),
        ],
        edges=[EdgeSpec(target_action="Check")],
    )
    body = await to_backend(Executor(api, token=None), workflow)
    assert body["edges"] == [
        {"source_action": None, "target_action": "Check", "source_output": None},
        {"source_action": "Check", "target_action": "Alert", "source_output": "output-true"},
    ]


async def test_refusals_and_an_unreachable_backend_are_errors_for_the_tool(
    api: CountingApi,
) -> None:
    with pytest.raises(BackendError, match="The backend answered 404: Not found: no alert"):
        await api.request(None, "GET", "/v1/workflow/alerts/00000000-0000-4000-8000-000000000000")
    with pytest.raises(
        BackendError,
        match=r"The request is not valid: name: Field required; entity_id: .*valid UUID",
    ):
        await api.request(None, "POST", "/v1/workflow/rules", json={"entity_id": "x"})
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(httpx.ConnectError):
        await WorkflowApi(base_url=f"http://127.0.0.1:{port}").request(None, "GET", "/v1/x")
    with pytest.raises(ValueError, match="needs the backend app or its URL"):
        WorkflowApi()
