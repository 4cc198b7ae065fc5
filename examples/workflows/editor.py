"""The workflow editor: a rule opened in an interactive view (an MCP App drawn by the chat)
where the user changes it and validates it again in place, without a model turn per change.

``open_workflow_editor`` reads a rule and returns it as a workflow the model could send back
(names, not ids, and explicit edges); its result is drawn by ``editor.html`` beside this
module. The page's Validate button calls ``check_edited_workflow``, a tool only the page may
call (``visibility=("app",)``: the model never sees it), which asks the backend for a dry
run as the user who sees the page. A valid edit is added to the model's context, so "preview
it" in the next message previews what the user made.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentstream import View
from agentstream.tools import Tool, ToolContext, tool
from examples.workflows.shapes import WorkflowSpec
from examples.workflows.tools import WorkflowTools, inject_workflow_id, validated

__all__ = ["EDITOR", "editor_tools", "editable"]

EDITOR = View(path=Path(__file__).parent / "editor.html", prefers_border=True)


def editable(rule: dict[str, Any]) -> dict[str, Any]:
    """A rule as the backend shows it, shaped as a workflow it takes back (``WorkflowSpec``)."""
    return {
        "name": rule["name"],
        "description": rule.get("description") or "",
        "entity": f"{rule['entity_schema']}.{rule['entity_name']}",
        "trigger_type": rule["trigger_type"],
        "is_active": rule["is_active"],
        "actions": [
            {"name": a["name"], "action_type": a["action_type"], "config": a.get("config") or {}}
            for a in rule["actions"]
        ],
        "edges": [
            {
                "source_action": e["source_action"],
                "target_action": e["target_action"],
                "source_output": e.get("source_output"),
            }
            for e in rule["edges"]
        ],
    }


def editor_tools(tools: WorkflowTools) -> list[Tool]:
    """The editor's two tools, over the same backend and executors as ``tools``."""

    @tool(view=EDITOR, prepare=inject_workflow_id, display=lambda a: "Opening the editor…")
    async def open_workflow_editor(ctx: ToolContext, workflow_id: str | None = None) -> Any:
        """Open a rule in an editor the user changes and validates in place (they see it
        under your answer). Use it when the user wants to edit or tweak a rule themselves.

        Args:
            workflow_id: The rule's id or name (default: the workflow on screen).
        """
        if not workflow_id:
            raise ValueError("workflow_id is needed: give the rule's name or id")
        executor = tools.executors.for_call(ctx)
        rule_id = await executor.rule_id(workflow_id)
        rule = await executor.get(f"/v1/workflow/rules/{rule_id}")
        return {"workflow_id": rule_id, "workflow": editable(rule)}

    @tool(visibility=("app",))
    async def check_edited_workflow(
        ctx: ToolContext, workflow: WorkflowSpec, workflow_id: str | None = None
    ) -> Any:
        """Dry-run validation of the workflow as the user edited it (the editor's button).

        Args:
            workflow: The edited workflow.
            workflow_id: The rule it changes.
        """
        return await validated(tools.executors.for_call(ctx), workflow, workflow_id)

    return [open_workflow_editor, check_edited_workflow]
