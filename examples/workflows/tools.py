"""The assistant's tools: 17 for workflows (``context_type: "workflow"``) and two for tables
(``context_type: "tables"``), each calling the backend's REST API as the user.

Results are summarised before the model reads them where they are large (action types to
field names, first sentences and port names; rule lists and alert lists to a few fields);
``workflow_id`` is taken from the request context by the three tools that read one rule when
the model leaves it out or writes a name; the two preview tools validate against the backend
and send the user a ``workflow_preview`` instead of saving anything.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from agentstream.chat import (
    field_names,
    first_sentence,
    inject_from_context,
    keep_fields,
    names_of,
    preview_interceptor,
)
from agentstream.tools import Tool, ToolContext, tool
from examples.workflows.client import Executors, WorkflowApi
from examples.workflows.drafts import Draft, DraftStore
from examples.workflows.shapes import ActionSpec, WorkflowSpec, to_backend

__all__ = ["WorkflowTools", "compact_rule", "flow_outline", "inject_workflow_id", "validated"]

summarize_action_types = keep_fields(
    "name",
    "description",
    "config_schema",
    "output_ports",
    transform={
        "description": first_sentence,
        "config_schema": field_names,
        "output_ports": names_of,
    },
)
summarize_rules = keep_fields("id", "name", "entity_name", "trigger_type", "is_active")
summarize_alerts = keep_fields(
    "id",
    "title",
    "message",
    "severity",
    "status",
    "created_at",
    "recipients",
    transform={"recipients": names_of},
)
inject_workflow_id = inject_from_context("workflow_id", uuid_only=True)


def _preview_summary(data: Any) -> str:
    workflow = data.get("workflow") or {}
    verb = "Update" if data.get("is_update") else "New rule"
    return f"{verb} “{workflow.get('name', '?')}”: {data.get('description') or 'workflow preview'}"


preview = preview_interceptor(summary=_preview_summary)


def edge_line(edge: dict[str, Any]) -> str:
    """``"Start → Check Total"`` or ``"Check Total --output-true--> Alert Managers"``."""
    if edge["source_action"] is None:
        return f"Start → {edge['target_action']}"
    port = edge.get("source_output") or "next"
    return f"{edge['source_action']} --{port}--> {edge['target_action']}"


def flow_outline(rule: dict[str, Any]) -> list[str]:
    """The rule's edges, one line each."""
    return [edge_line(edge) for edge in rule.get("edges", [])]


def compact_rule(rule: Any) -> Any:
    """A rule as the model needs it: who, when, what, and the flow as lines."""
    if not isinstance(rule, dict) or "actions" not in rule:
        return rule
    return {
        "id": rule["id"],
        "name": rule["name"],
        "description": rule["description"],
        "entity": f"{rule['entity_schema']}.{rule['entity_name']}",
        "trigger_type": rule["trigger_type"],
        "is_active": rule["is_active"],
        "actions": [{"name": a["name"], "action_type": a["action_type"]} for a in rule["actions"]],
        "flow": flow_outline(rule),
    }


def _depths(rule: dict[str, Any]) -> dict[str, int]:
    depth: dict[str, int] = {}
    frontier = [(e["target_action"], 1) for e in rule["edges"] if e["source_action"] is None]
    while frontier:
        name, d = frontier.pop()
        if depth.get(name, 0) >= d or d > len(rule["actions"]) + 1:
            continue
        depth[name] = d
        frontier += [
            (e["target_action"], d + 1) for e in rule["edges"] if e["source_action"] == name
        ]
    return depth


@dataclass
class WorkflowTools:
    """The tools, bound to a backend API and a draft store."""

    api: WorkflowApi
    drafts: DraftStore

    def __post_init__(self) -> None:
        self.executors = Executors(self.api)

    def catalog(self) -> list[tuple[str, Tool]]:
        """``(category, tool)`` for the 17 workflow tools, in the order the prompt lists them."""
        executors, drafts = self.executors, self.drafts

        def ex(ctx: ToolContext) -> Any:
            return executors.for_call(ctx)

        # --- Discovery ---
        @tool(summarize=summarize_action_types, display=lambda a: "Looking up the action types…")
        async def discover_action_types(ctx: ToolContext) -> Any:
            """List the action types a workflow can use: their config fields and output ports."""
            return await ex(ctx).action_types()

        @tool(display=lambda a: "Looking up the trigger types…")
        async def discover_trigger_types(ctx: ToolContext) -> Any:
            """List the trigger types (on_create, on_update, on_delete, manual)."""
            return await ex(ctx).get("/v1/workflow/trigger-types")

        @tool(display=lambda a: "Looking up the entities…")
        async def discover_entities(ctx: ToolContext) -> Any:
            """List the entities a rule can watch, as schema.table names."""
            return await ex(ctx).get("/v1/workflow/entities")

        # --- Read ---
        @tool(
            prepare=inject_workflow_id,
            summarize=compact_rule,
            display=lambda a: "Reading the workflow…",
        )
        async def get_workflow_rule(ctx: ToolContext, workflow_id: str | None = None) -> Any:
            """Fetch a rule by name or id: a compact summary with its flow outline.

            Args:
                workflow_id: The rule's id or name (default: the workflow on screen).
            """
            executor = ex(ctx)
            rule_id = await executor.rule_id(_needed(workflow_id))
            return await executor.get(f"/v1/workflow/rules/{rule_id}")

        @tool(
            prepare=inject_workflow_id, display=lambda a: f"Reading the action “{a.get('action')}”…"
        )
        async def explain_workflow_node(
            ctx: ToolContext, action: str, workflow_id: str | None = None
        ) -> Any:
            """Full detail on one action of a rule: its config, its edges in and out, its depth.

            Args:
                action: The action's name or id.
                workflow_id: The rule's id or name (default: the workflow on screen).
            """
            executor = ex(ctx)
            rule = await executor.get(
                f"/v1/workflow/rules/{await executor.rule_id(_needed(workflow_id))}"
            )
            found = next((a for a in rule["actions"] if action in (a["name"], a["id"])), None)
            if found is None:
                names = [a["name"] for a in rule["actions"]]
                raise LookupError(f"the rule {rule['name']!r} has no action {action!r} ({names})")
            name = found["name"]
            return {
                **found,
                "rule": rule["name"],
                "depth": _depths(rule).get(name),
                "incoming": [edge_line(e) for e in rule["edges"] if e["target_action"] == name],
                "outgoing": [edge_line(e) for e in rule["edges"] if e["source_action"] == name],
            }

        @tool(summarize=summarize_rules, display=lambda a: "Listing the workflow rules…")
        async def list_workflow_rules(ctx: ToolContext) -> Any:
            """List every rule: id, name, entity, trigger and whether it is active."""
            return await ex(ctx).get("/v1/workflow/rules")

        # --- Alerts ---
        @tool(summarize=summarize_alerts, display=lambda a: "Checking your alerts…")
        async def list_my_alerts(ctx: ToolContext) -> Any:
            """The user's alert inbox."""
            return await ex(ctx).get("/v1/workflow/alerts/mine")

        @tool(display=lambda a: "Reading the alert…")
        async def get_alert_detail(ctx: ToolContext, alert_id: uuid.UUID) -> Any:
            """Full detail on one alert.

            Args:
                alert_id: The alert's id (a UUID).
            """
            return await ex(ctx).get(f"/v1/workflow/alerts/{alert_id}")

        @tool(
            prepare=inject_workflow_id,
            summarize=summarize_alerts,
            display=lambda a: "Checking the rule's alerts…",
        )
        async def list_alerts_for_rule(ctx: ToolContext, workflow_id: str | None = None) -> Any:
            """The alerts a rule fired (that the user receives).

            Args:
                workflow_id: The rule's id or name (default: the workflow on screen).
            """
            executor = ex(ctx)
            rule_id = await executor.rule_id(_needed(workflow_id))
            return await executor.get(f"/v1/workflow/rules/{rule_id}/alerts")

        # --- Write ---
        @tool(display=lambda a: "Creating the rule…")
        async def create_workflow(ctx: ToolContext, workflow: WorkflowSpec) -> Any:
            """Create a rule at once. Prefer preview_workflow: the user approves previews.

            Args:
                workflow: The workflow, shaped as for preview_workflow.
            """
            executor = ex(ctx)
            return await executor.send(
                "POST", "/v1/workflow/rules", await to_backend(executor, workflow)
            )

        @tool(display=lambda a: "Updating the rule…")
        async def update_workflow(
            ctx: ToolContext, workflow_id: str, workflow: WorkflowSpec
        ) -> Any:
            """Replace a rule at once. Prefer preview_workflow with workflow_id.

            Args:
                workflow_id: The rule's id or name.
                workflow: The whole new workflow, shaped as for preview_workflow.
            """
            executor = ex(ctx)
            rule_id = await executor.rule_id(workflow_id)
            body = await to_backend(executor, workflow)
            return await executor.send("PUT", f"/v1/workflow/rules/{rule_id}", body)

        @tool(display=lambda a: "Validating the workflow…")
        async def validate_workflow(
            ctx: ToolContext, workflow: WorkflowSpec, workflow_id: str | None = None
        ) -> Any:
            """Dry-run validation of a workflow: every problem, nothing saved.

            Args:
                workflow: The workflow, shaped as for preview_workflow.
                workflow_id: For an update, the rule's id or name.
            """
            return await validated(ex(ctx), workflow, workflow_id)

        # --- Preview ---
        @tool(intercept=preview, display=lambda a: "Preparing a preview…")
        async def preview_workflow(
            ctx: ToolContext,
            description: str,
            workflow: WorkflowSpec,
            workflow_id: str | None = None,
        ) -> Any:
            """Validate a workflow and show it to the user to approve; nothing is saved until
            they approve. Chain actions with 'after' ("Action Name:port", or "Action Name" for
            its default port; none for the first action).

            Args:
                description: What the workflow does (or what changes), for the user.
                workflow: The whole workflow.
                workflow_id: To update an existing rule: its id or name.
            """
            return await validated(ex(ctx), workflow, workflow_id)

        # --- Draft ---
        @tool(display=lambda a: f"Starting a draft of “{a.get('name')}”…")
        async def start_draft(
            ctx: ToolContext, name: str, entity: str, trigger_type: str, description: str = ""
        ) -> Any:
            """Start building a workflow one action at a time (replaces this conversation's
            draft).

            Args:
                name: The rule's name.
                entity: The entity it watches, as schema.table.
                trigger_type: on_create, on_update, on_delete or manual.
                description: What the rule is for.
            """
            executor = ex(ctx)
            await executor.entity_id(entity)  # unknown names are refused now, not at preview
            await executor.trigger_type_id(trigger_type)
            draft = drafts.start(ctx, Draft(name, entity, trigger_type, description))
            return {"status": "draft_started", "draft": draft.outline()}

        @tool(display=lambda a: f"Adding “{a.get('name')}” to the draft…")
        async def add_draft_action(
            ctx: ToolContext,
            name: str,
            action_type: str,
            config: dict[str, Any] | None = None,
            after: str | None = None,
        ) -> Any:
            """Add an action to the draft.

            Args:
                name: The action's name, unique in the draft.
                action_type: A name from discover_action_types.
                config: The action type's config fields.
                after: "Action Name:port" or "Action Name"; omit for the first action.
            """
            draft = drafts.get(ctx)
            types = {t["name"] for t in await ex(ctx).action_types()}
            if action_type not in types:
                raise ValueError(f"unknown action_type {action_type!r} (known: {sorted(types)})")
            if any(a.name == name for a in draft.actions):
                raise ValueError(f"the draft already has an action named {name!r}")
            if after:
                source = (
                    after
                    if any(a.name == after for a in draft.actions)
                    else after.rpartition(":")[0]
                )
                if not any(a.name == source for a in draft.actions):
                    raise ValueError(
                        f"'after' names {after!r}, which is not an action of the draft"
                    )
            draft.actions.append(
                ActionSpec(name=name, action_type=action_type, config=config or {}, after=after)
            )
            return {"status": "action_added", "draft": draft.outline()}

        @tool(display=lambda a: f"Removing “{a.get('name')}” from the draft…")
        async def remove_draft_action(ctx: ToolContext, name: str) -> Any:
            """Remove an action from the draft; the actions after it follow what it followed.

            Args:
                name: The action's name.
            """
            draft = drafts.get(ctx)
            gone = next((a for a in draft.actions if a.name == name), None)
            if gone is None:
                raise LookupError(f"the draft has no action named {name!r}")
            draft.actions.remove(gone)
            for i, a in enumerate(draft.actions):
                if a.after and (a.after == name or a.after.rpartition(":")[0] == name):
                    draft.actions[i] = a.model_copy(update={"after": gone.after})
            return {"status": "action_removed", "draft": draft.outline()}

        @tool(intercept=preview, display=lambda a: "Preparing a preview of the draft…")
        async def preview_draft(ctx: ToolContext, description: str) -> Any:
            """Assemble the draft, validate it and show it to the user to approve.

            Args:
                description: What the workflow does, for the user.
            """
            return await validated(ex(ctx), drafts.get(ctx).workflow(), None)

        return [
            ("Discovery", discover_action_types),
            ("Discovery", discover_trigger_types),
            ("Discovery", discover_entities),
            ("Read", get_workflow_rule),
            ("Read", explain_workflow_node),
            ("Read", list_workflow_rules),
            ("Alerts", list_my_alerts),
            ("Alerts", get_alert_detail),
            ("Alerts", list_alerts_for_rule),
            ("Write", create_workflow),
            ("Write", update_workflow),
            ("Write", validate_workflow),
            ("Preview", preview_workflow),
            ("Draft", start_draft),
            ("Draft", add_draft_action),
            ("Draft", remove_draft_action),
            ("Draft", preview_draft),
        ]

    def table_tools(self) -> list[Tool]:
        """The tools of ``context_type: "tables"``."""
        executors = self.executors

        @tool(display=lambda a: "Listing the tables…")
        async def list_tables(ctx: ToolContext) -> Any:
            """List the tables (schema.table) with what each holds."""
            return await executors.for_call(ctx).get("/v1/data/tables")

        @tool(display=lambda a: f"Reading the columns of {a.get('table')}…")
        async def describe_table(ctx: ToolContext, table: str) -> Any:
            """A table's columns and their types.

            Args:
                table: The table as schema.table.
            """
            schema, dot, name = table.strip().partition(".")
            if not dot or not schema or not name:
                raise ValueError(f"expected schema.table, got {table!r}")
            path = f"/v1/data/tables/{quote(schema, safe='')}/{quote(name, safe='')}"
            return await executors.for_call(ctx).get(path)

        return [list_tables, describe_table]


def _needed(workflow_id: str | None) -> str:
    if not workflow_id:
        raise ValueError("workflow_id is needed: no workflow is open; give the rule's name or id")
    return workflow_id


async def validated(
    executor: Any, workflow: WorkflowSpec, workflow_id: str | None
) -> dict[str, Any]:
    """The backend's verdict on ``workflow``, with the body it checked (for the preview)."""
    rule_id = await executor.rule_id(workflow_id) if workflow_id else None
    body = await to_backend(executor, workflow)
    params = {"rule_id": rule_id} if rule_id else {}
    verdict = await executor.send("POST", "/v1/workflow/rules/validate", body, **params)
    result: dict[str, Any] = {
        "valid": verdict["valid"],
        "errors": verdict["errors"],
        "workflow": body,
    }
    if rule_id:
        result["workflow_id"] = rule_id
    return result
