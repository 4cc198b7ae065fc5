"""The workflow assistant, served with::

    agentstream serve examples.workflows.app:agent --chat examples.workflows.app:chat \\
        --server examples.workflows.app:server

``agent`` has the 17 workflow tools (``context_type: "workflow"``, also the default for the web
UI), the workflow editor (:mod:`examples.workflows.editor`, a rule opened in an interactive
view where the user edits and validates it again in place) and the two table tools
(``context_type: "tables"``); ``chat`` holds the system prompt blocks, the
``workflow_preview`` card (drawn as a graph, with Approve and Reject) and the
server actions behind those buttons; ``server`` mounts the backend's REST API under
``/example-api``.

The model is ``$AGENTSTREAM_MODEL``; without one, the scripted offline demo
(:mod:`examples.workflows.demo`) plays the main story against the real backend.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agentstream import Agent
from agentstream.chat import (
    ActionCall,
    ActionFailed,
    ChatConfig,
    ContextType,
    GraphView,
    PayloadAction,
    PayloadType,
    ServerActions,
)
from agentstream.chat.toolhooks import is_uuid
from agentstream.server.auth import Authenticator
from agentstream.server.config import ServerConfig
from agentstream.tools import Toolset
from examples.workflows.backend.api import Backend, create
from examples.workflows.client import BackendError, WorkflowApi
from examples.workflows.demo import demo_model
from examples.workflows.drafts import DraftStore
from examples.workflows.editor import editor_tools
from examples.workflows.prompts import (
    CONTEXT_PREAMBLE,
    RESPONSE_GUIDANCE,
    ROLE_BLOCK,
    TABLES_ROLE_BLOCK,
    tool_guidance,
)
from examples.workflows.tools import WorkflowTools

__all__ = ["API_PREFIX", "agent", "build", "chat"]

API_PREFIX = "/example-api"

STARTER_PROMPTS = (
    "Show me my workflow rules",
    "Create a low stock alert for inventory items",
    "Build a restock workflow step by step as a draft",
    "What alerts do I have?",
    "Explain the Large Order Review rule",
    "Edit the Large Order Review rule",
)

WORKFLOW_PREVIEW = GraphView(
    nodes="workflow.actions",
    edges="workflow.edges",
    node_id="name",
    node_detail="action_type",
    edge_source="source_action",
    edge_target="target_action",
    edge_label="source_output",
)


def _server_actions(api: WorkflowApi) -> ServerActions:
    actions = ServerActions()

    @actions.register("approve_workflow", description="Save a previewed workflow")
    async def approve_workflow(call: ActionCall) -> str:
        preview = call.data.get("payload") if isinstance(call.data, dict) else None
        if not isinstance(preview, dict) or not isinstance(preview.get("workflow"), dict):
            raise ActionFailed("the approval did not carry the previewed workflow")
        workflow = preview["workflow"]
        rule_id = preview.get("workflow_id") if preview.get("is_update") else None
        if rule_id is not None and not is_uuid(rule_id):
            raise ActionFailed("the approval names no valid rule to update")
        try:
            if rule_id:
                saved = await api.request(
                    call.principal.token, "PUT", f"/v1/workflow/rules/{rule_id}", json=workflow
                )
            else:
                saved = await api.request(
                    call.principal.token, "POST", "/v1/workflow/rules", json=workflow
                )
        except BackendError as exc:
            raise ActionFailed(f"the backend refused it: {exc}") from None
        verb = "Updated" if rule_id else "Created"
        state = "active" if saved["is_active"] else "paused"
        return (
            f"{verb} the rule “{saved['name']}” ({saved['id']}): {state}, "
            f"{saved['action_count']} actions, on {saved['trigger_type']} of "
            f"{saved['entity_schema']}.{saved['entity_name']}."
        )

    @actions.register("reject_workflow", description="Discard a previewed workflow")
    async def reject_workflow(call: ActionCall) -> str:
        return "The user rejected the preview; nothing was saved. Ask what to change."

    return actions


def build(
    *, database: Path | None = None, authenticator: Authenticator | None = None, model: Any = None
) -> tuple[Agent, ChatConfig, ServerConfig]:
    """The agent, its chat configuration and what it adds to the server (the backend's REST
    API) over a backend at ``database`` (default: the data directory), checking callers with
    ``authenticator`` (default: the server's
    settings), answered by ``model`` (default: ``$AGENTSTREAM_MODEL``, else the offline
    demo)."""
    backend_app = create(Backend(database, authenticator))
    api = WorkflowApi(app=backend_app)
    tools = WorkflowTools(api, DraftStore())
    catalog = tools.catalog()
    toolset = Toolset()
    for _, t in catalog:
        toolset.add(t, scope="workflow")
    for t in editor_tools(tools):
        toolset.add(t, scope="workflow")
    for t in tools.table_tools():
        toolset.add(t, scope="tables")
    server_actions = _server_actions(api)
    chosen = model or os.environ.get("AGENTSTREAM_MODEL") or demo_model()
    agent = Agent(model=chosen, tools=toolset, name="workflows", instructions=ROLE_BLOCK)
    chat = ChatConfig(
        app_name="Workflow assistant",
        starter_prompts=STARTER_PROMPTS,
        identity=ROLE_BLOCK,
        tool_guidance=tool_guidance(catalog),
        guidelines=RESPONSE_GUIDANCE,
        context_preamble=CONTEXT_PREAMBLE,
        context_ids={"workflow_id": "Current workflow ID"},
        context_types={
            "workflow": ContextType(),
            "tables": ContextType(identity=TABLES_ROLE_BLOCK, tool_guidance=""),
        },
        default_context_type="workflow",
        max_turns=20,  # the workflow-assistant protocol's limit, in the web UI too
        payload_types=[
            PayloadType.tool(
                "workflow_preview",
                title="Workflow preview",
                description="A workflow the assistant validated, for the user to approve.",
                view=WORKFLOW_PREVIEW,
                actions=[
                    PayloadAction(label="Approve", action="approve_workflow", style="primary"),
                    PayloadAction(label="Reject", action="reject_workflow"),
                ],
            )
        ],
        server_actions=server_actions,
    )
    return agent, chat, ServerConfig(mounts={API_PREFIX: backend_app})


agent, chat, server = build()
