"""The offline demo: what you get with no model configured.

It is a scripted model, labelled as such in every answer, that walks through each kind of
event a real agent produces: reasoning, streamed text, a tool call with progress, a preview
payload, a markdown table and suggested values. It never pretends to be an LLM.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from agentstream.agent import Agent
from agentstream.events import Payload
from agentstream.providers.base import ChatRequest
from agentstream.providers.scripted import ScriptedProvider, ScriptedTurn
from agentstream.providers.scripted import position as scripted_position
from agentstream.tools import Progress, ToolContext, ToolResult, tool

__all__ = ["demo_agent", "demo_provider"]

NOTICE = (
    "This is agentstream's **offline demo**: no language model is configured, so this reply "
    "is scripted. Set `AGENTSTREAM_MODEL` (for example `anthropic:claude-sonnet-4-5` or "
    "`ollama:qwen3:14b`) to talk to a real model."
)


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
    workflow = {"name": description, "actions": [{"name": step} for step in steps]}
    return ToolResult(
        text='{"status":"preview_sent","message":"Preview sent to user for approval."}',
        payload=Payload(
            kind="workflow_preview",
            data={"description": description, "workflow": workflow, "is_update": False},
            summary=f"Workflow preview: {description}",
        ),
    )


def _demo_turn(request: ChatRequest) -> ScriptedTurn:
    asked, position = scripted_position(request)
    offered = {spec.name for spec in request.tools}
    if not {"search_docs", "preview_workflow"} <= offered:
        # Your own agent with no model configured: say so, and do not call tools it lacks.
        names = ", ".join(sorted(offered)) or "none"
        return ScriptedTurn(
            text=f"{NOTICE}\n\nYour agent's tools ({names}) will be called by the model "
            "you configure.",
            delay=0.015,
        )
    turns: list[dict[str, Any]] = [
        {
            "reasoning": f"The user wrote “{asked[:80]}”. No model is configured, so I am the "
            "offline demo: I will show each kind of event.",
            "text": NOTICE + "\n\nLet me show you a tool at work.",
            "tool_calls": [{"name": "search_docs", "arguments": {"query": asked[:60] or "demo"}}],
            "usage": {"input_tokens": 120, "output_tokens": 40},
        },
        {
            "text": "Tools can also send structured previews for you to approve:",
            "tool_calls": [
                {
                    "name": "preview_workflow",
                    "arguments": {
                        "description": "Notify the team when stock runs low",
                        "steps": ["Check stock level", "Send alert"],
                    },
                }
            ],
            "usage": {"input_tokens": 180, "output_tokens": 30},
        },
        {
            "text": "Here is what this stream contained:\n\n"
            "| event | what it shows |\n|---|---|\n"
            "| reasoning | the model's thinking |\n"
            "| text | the answer as it streams |\n"
            "| tool call | progress and a result |\n"
            "| payload | a preview to approve |\n\n"
            'SUGGESTED_VALUES: [{"label": "Show me again", "value": "Run the demo again"}, '
            '{"label": "How do I add a model?", "value": "How do I configure a real model?"}]',
            "usage": {"input_tokens": 260, "output_tokens": 60},
        },
    ]
    return ScriptedTurn.model_validate({**turns[min(position, 2)], "delay": 0.015})


def demo_provider() -> ScriptedProvider:
    return ScriptedProvider(_demo_turn, model="offline-demo")


def demo_agent() -> Agent:
    return Agent(
        model=demo_provider(),
        tools=[search_docs, preview_workflow],
        name="demo",
        instructions="You are the agentstream offline demo.",
    )
