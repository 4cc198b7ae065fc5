"""The offline demo: what you get with no model configured.

It is a scripted model, labelled as such in every answer, that walks through each kind of
event a real agent produces: reasoning, streamed text, a tool call with progress, a preview
payload, a markdown table and suggested values. It never pretends to be an LLM.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from agentstream.agent import Agent
from agentstream.chat import (
    ActionCall,
    ChatConfig,
    GraphView,
    PayloadAction,
    PayloadType,
    ServerActions,
)
from agentstream.events import Payload
from agentstream.providers.demo import NOTICE, demo_provider
from agentstream.tools import Progress, ToolContext, ToolResult, tool

__all__ = ["NOTICE", "demo_agent", "demo_chat", "demo_provider"]


@tool(display=lambda args: f"Searching the docs for “{args.get('query', '')}”…")
async def search_docs(ctx: ToolContext, query: str) -> AsyncIterator[Progress | ToolResult]:
    """Search the (pretend) documentation.

    Args:
        query: What to look for.
    """
    stages = [("connecting", "Opening the index", 0.2), ("searching", "Scanning 3 documents", 0.6)]
    for stage, message, fraction in stages:
        yield Progress(stage=stage, message=message, fraction=fraction)
        await asyncio.sleep(0.3)
    yield Progress(stage="ranking", message="Ranking 2 matches", fraction=0.9)
    yield ToolResult(
        text=f"2 documents mention {query!r}: 'Streaming events' and 'Tools'.",
        output={"query": query, "matches": ["Streaming events", "Tools"]},
    )


@tool
def preview_workflow(description: str, steps: list[str]) -> ToolResult:
    """Send a workflow preview to the user for approval.

    Args:
        description: What the workflow does.
        steps: The workflow's steps, in order.
    """
    edges = [
        {"source": before, "target": step}
        for before, step in zip([None, *steps], steps, strict=False)
    ]
    workflow = {"name": description, "actions": [{"name": step} for step in steps], "edges": edges}
    return ToolResult(
        text='{"status":"preview_sent","message":"Preview sent to user for approval."}',
        payload=Payload(
            kind="workflow_preview",
            data={"description": description, "workflow": workflow, "is_update": False},
            summary=f"Workflow preview: {description}",
        ),
    )


def demo_agent() -> Agent:
    """The demo's tools on ``$AGENTSTREAM_MODEL``, or on the scripted offline demo model
    (``demo``) when none is configured."""
    return Agent(
        model=None,
        tools=[search_docs, preview_workflow],
        name="demo",
        instructions="You are the agentstream offline demo.",
    )


demo_actions = ServerActions()


@demo_actions.register("approve_preview", description="Approve a workflow preview")
async def approve_preview(call: ActionCall) -> str:
    return "The preview was approved. (The demo saves nothing.)"


@demo_actions.register("reject_preview", description="Discard a workflow preview")
async def reject_preview(call: ActionCall) -> str:
    return "The preview was rejected and discarded."


WORKFLOW_PREVIEW = PayloadType.tool(
    "workflow_preview",
    title="Workflow preview",
    view=GraphView(nodes="workflow.actions", edges="workflow.edges", node_id="name"),
    actions=[
        PayloadAction(label="Approve", action="approve_preview", style="primary"),
        PayloadAction(label="Reject", action="reject_preview"),
    ],
)


def demo_chat() -> ChatConfig:
    """The demo's chat configuration: its preview card is drawn as a graph, and its Approve
    and Reject are server actions."""
    return ChatConfig(server_actions=demo_actions, payload_types=[WORKFLOW_PREVIEW])
