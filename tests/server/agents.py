"""Scripted agents that reproduce each protocol's example sequences."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from agentstream import Agent
from agentstream.events import Payload
from agentstream.providers.scripted import ScriptedProvider
from agentstream.tools import Progress, ToolContext, ToolResult, Toolset, tool

# --- workflow assistant ---------------------------------------------------------------------

seen_tokens: list[str | None] = []
seen_contexts: list[Any] = []


def ichor_toolset() -> Toolset:
    toolset = Toolset()

    @toolset.scoped("workflow")
    @tool
    def get_workflow_rule(ctx: ToolContext, workflow_id: str = "") -> dict[str, Any]:
        """Fetch a rule by name or id."""
        seen_tokens.append(ctx.token)
        seen_contexts.append(ctx.context)
        return {"name": "Low Stock Alert", "actions": 3}

    @toolset.scoped("workflow")
    @tool
    def discover_action_types() -> list[str]:
        """List action types."""
        return ["create_alert", "evaluate_condition"]

    @toolset.scoped("workflow")
    @tool
    def preview_workflow(description: str, workflow: dict[str, Any]) -> ToolResult:
        """Validate a workflow and send a preview for approval."""
        return ToolResult(
            text='{"status":"preview_sent","message":"Preview sent to user for approval..."}',
            payload=Payload(
                kind="workflow_preview",
                data={"description": description, "workflow": workflow, "is_update": False},
            ),
        )

    return toolset


WORKFLOW = {"name": "Low Stock Alert", "actions": [{"name": "Send Alert"}], "edges": []}

ICHOR_SCRIPT = {
    "rules": [
        {
            "match": "what does",
            "turns": [{"text": ["The ", "**Low Stock Alert**", " rule triggers..."]}],
        },
        {
            "match": "look up",
            "turns": [
                {
                    "text": ["Let me look up that workflow."],
                    "tool_calls": [{"id": "t1", "name": "get_workflow_rule", "arguments": {}}],
                },
                {"text": ["The workflow has 3 actions..."]},
            ],
        },
        {
            "match": "create",
            "turns": [
                {"tool_calls": [{"id": "t1", "name": "discover_action_types", "arguments": {}}]},
                {
                    "text": ["I'll build that workflow..."],
                    "tool_calls": [
                        {
                            "id": "t2",
                            "name": "preview_workflow",
                            "arguments": {
                                "description": "Add low stock alert",
                                "workflow": WORKFLOW,
                            },
                        }
                    ],
                },
                {"text": ["I've sent a preview for your review."]},
            ],
        },
        {
            "match": "fail",
            "turns": [
                {
                    "text": ["Partial"],
                    "error": {
                        "kind": "provider",
                        "message": "LLM provider error: context deadline exceeded",
                        "after": 1,
                    },
                }
            ],
        },
        {"turns": [{"text": "Hello from the scripted model."}]},
    ]
}


def ichor_agent() -> Agent:
    return Agent(model=ScriptedProvider(ICHOR_SCRIPT), tools=ichor_toolset())


# --- data playground ------------------------------------------------------------------------


@tool
def sqlPatternTool(input: str) -> ToolResult:  # noqa: N802 - the data playground's tool name
    """Find SQL patterns."""
    return ToolResult(text="[]", output="[]")


PLAYGROUND_SCRIPT = {
    "turns": [
        {
            "text": ["Working on it"],
            "tool_calls": [
                {"id": "c1", "name": "sqlPatternTool", "arguments": {"input": "show 10 customer"}}
            ],
            "usage": {"input_tokens": 300, "output_tokens": 50},
        },
        {
            "reasoning": ["No customer table detected, asking for clarification."],
            "text": ["I couldn't find a customer table..."],
            "usage": {"input_tokens": 500, "output_tokens": 200},
        },
    ]
}


def playground_agent(model: str = "script") -> Agent:
    return Agent(model=ScriptedProvider(PLAYGROUND_SCRIPT, model=model), tools=[sqlPatternTool])


# --- chat tray ------------------------------------------------------------------------------


@tool
async def search_articles(ctx: ToolContext, query: str) -> AsyncIterator[Progress | ToolResult]:
    """Search articles."""
    yield Progress(stage="searching", message="Found 15 articles...", fraction=0.5)
    await asyncio.sleep(0)
    yield ToolResult(text="Found 5 articles: ...", output="Found 5 articles: ...")


TRAY_SCRIPT = {
    "turns": [
        {
            "text": ["Let me search for that..."],
            "tool_calls": [
                {"id": "toolu_abc123", "name": "search_articles", "arguments": {"query": "CRISPR"}}
            ],
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
        {
            "text": ["I found 5 relevant articles."],
            "usage": {"input_tokens": 20, "output_tokens": 6},
        },
    ]
}


def tray_agent() -> Agent:
    return Agent(model=ScriptedProvider(TRAY_SCRIPT), tools=[search_articles])


# --- ops agent ------------------------------------------------------------------------------


@tool(display=lambda args: "Alerting admin...")
def alert_admin(message: str, priority: str = "low") -> dict[str, Any]:
    """Alert an administrator."""
    return {"status": "sent", "ticket_id": 42}


@tool
def check_disk() -> str:
    """Check the disk."""
    raise ConnectionError("Connection timeout")


AGENT_SCRIPT = {
    "turns": [
        {
            "text": "I will alert the admin.",
            "tool_calls": [
                {
                    "id": "call_abc123",
                    "name": "alert_admin",
                    "arguments": {
                        "message": "User is reporting a system failure",
                        "priority": "high",
                    },
                }
            ],
        },
        {"tool_calls": [{"id": "call_def456", "name": "check_disk", "arguments": {}}]},
        {"text": ["Done: ", "ticket 42."]},
    ]
}


def agent_agent() -> Agent:
    return Agent(model=ScriptedProvider(AGENT_SCRIPT), tools=[alert_admin, check_disk])


def slow_agent(delay: float = 0.05, chunks: int = 400) -> tuple[Agent, ScriptedProvider]:
    provider = ScriptedProvider({"turns": [{"text": ["tick "] * chunks}], "delay": delay})
    return Agent(model=provider), provider
