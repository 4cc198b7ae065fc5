"""Workflows as the model writes them, and as the backend takes them.

The model names things (``entity: "inventory.inventory_items"``, ``trigger_type: "on_update"``)
and may chain actions with the ``after`` shorthand instead of an edges array:

- an action without ``after`` runs first (a start edge);
- ``"after": "Check Stock:output-true"`` follows that action's ``output-true`` port;
- ``"after": "Check Stock"`` follows that action's default port.

:func:`to_backend` turns such a workflow into the backend's body (ids and explicit edges), or
raises ``ValueError`` saying what the model should fix.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from examples.workflows.client import Executor

__all__ = ["ActionSpec", "EdgeSpec", "WorkflowSpec", "expand_after", "to_backend"]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ActionSpec(_Spec):
    name: str = Field(min_length=1, description="Unique within the workflow, e.g. 'Check Stock'.")
    action_type: str = Field(min_length=1, description="A name from discover_action_types.")
    config: dict[str, Any] = Field(
        default_factory=dict, description="The action type's config fields."
    )
    after: str | None = Field(
        default=None,
        description="'Action Name:port' or 'Action Name' (its default port); omit for the "
        "action that runs first.",
    )


class EdgeSpec(_Spec):
    source_action: str | None = Field(default=None, description="None for a start edge.")
    target_action: str
    source_output: str | None = None


class WorkflowSpec(_Spec):
    name: str = Field(min_length=1, description="The rule's name.")
    description: str = ""
    entity: str = Field(description="'schema.table' from discover_entities (or its id).")
    trigger_type: str = Field(description="on_create, on_update, on_delete or manual (or its id).")
    is_active: bool = True
    actions: list[ActionSpec] = Field(min_length=1)
    edges: list[EdgeSpec] | None = Field(
        default=None, description="Explicit edges; usually leave out and use 'after'."
    )


def expand_after(
    actions: list[ActionSpec], default_ports: dict[str, str | None], *, starts: bool = True
) -> list[dict[str, Any]]:
    """The edges the ``after`` fields describe: one per action (``starts=False``: only for
    the actions that have ``after``, beside explicit edges)."""
    names = {a.name for a in actions}
    by_name = {a.name: a for a in actions}
    edges: list[dict[str, Any]] = []
    for action in actions:
        after = action.after.strip() if action.after else None
        if not after:
            if starts:
                edges.append({"source_action": None, "target_action": action.name})
            continue
        if after in names:
            source, port = after, default_ports.get(by_name[after].action_type)
        else:
            source, _, port = after.rpartition(":")
            if source not in names:
                raise ValueError(
                    f"action {action.name!r}: 'after' names {after!r}, which is not an action "
                    f"of this workflow (actions: {sorted(names)})"
                )
        edges.append({"source_action": source, "target_action": action.name, "source_output": port})
    return edges


async def to_backend(executor: Executor, workflow: WorkflowSpec) -> dict[str, Any]:
    """The backend's body for ``workflow``: names resolved, edges explicit."""
    types = await executor.action_types()
    default_ports = {
        t["name"]: next(
            (p["name"] for p in t["output_ports"] if p.get("is_default")),
            t["output_ports"][0]["name"] if t["output_ports"] else None,
        )
        for t in types
    }
    if workflow.edges is None:
        edges = expand_after(workflow.actions, default_ports)
    else:
        edges = [e.model_dump() for e in workflow.edges]
        edges = _dedupe(edges + expand_after(workflow.actions, default_ports, starts=False))
    return {
        "name": workflow.name,
        "description": workflow.description,
        "entity_id": await executor.entity_id(workflow.entity),
        "trigger_type_id": await executor.trigger_type_id(workflow.trigger_type),
        "is_active": workflow.is_active,
        "actions": [
            {"name": a.name, "action_type": a.action_type, "config": a.config}
            for a in workflow.actions
        ],
        "edges": edges,
    }


def _dedupe(edges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for e in edges:
        key = (e.get("source_action"), e["target_action"], e.get("source_output"))
        if key not in seen:
            seen.add(key)
            kept.append(e)
    return kept
