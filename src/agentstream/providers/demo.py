"""The offline demo model: what answers when no model is configured.

A scripted model, labelled as such in every answer, that walks through each kind of event a
real agent produces (reasoning, streamed text, a tool call with progress, a preview payload, a
markdown table, suggested values) when it is offered the demo's tools
(:func:`agentstream.demo.demo_agent`), and otherwise explains how to configure a real model. It
never pretends to be an LLM.
"""

from __future__ import annotations

import os
from typing import Any

from agentstream.providers.base import ChatRequest
from agentstream.providers.catalog import builtin_specs
from agentstream.providers.scripted import ScriptedProvider, ScriptedTurn
from agentstream.providers.scripted import position as scripted_position

__all__ = ["DEMO_TOOLS", "NOTICE", "demo_provider", "notice"]

DEMO_TOOLS = frozenset({"search_docs", "preview_workflow"})

NOTICE = (
    "This is agentstream's **offline demo**: no model is chosen (`AGENTSTREAM_MODEL` is not "
    "set), so this reply is scripted. Set `AGENTSTREAM_MODEL` (for example "
    "`anthropic:claude-sonnet-4-5` with `ANTHROPIC_API_KEY`, or `ollama:qwen3:14b`) to talk to "
    "a real model."
)
"""What the demo says when nothing tells it which model the user meant."""

EXAMPLE_MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-5",
    "openai": "openai:gpt-4.1-mini",
    "google": "google:gemini-2.5-flash",
}


def notice() -> str:
    """:data:`NOTICE`, or, when a provider's key is set, that the key alone chooses no model:
    a user who exported ``ANTHROPIC_API_KEY`` and expected Claude is told what is missing."""
    for spec in builtin_specs():
        present = [name for name in spec.key_env if os.environ.get(name)]
        if present and spec.prefix in EXAMPLE_MODELS:
            return (
                f"This is agentstream's **offline demo**: `{present[0]}` is set, but no model is "
                "chosen, so this reply is scripted. Set `AGENTSTREAM_MODEL` to one of its "
                f"models (for example `{EXAMPLE_MODELS[spec.prefix]}`) to talk to it."
            )
    return NOTICE


def _demo_turn(request: ChatRequest) -> ScriptedTurn:
    asked, position = scripted_position(request)
    if "\nOutcome: " in asked:  # a server action the client sent back (agentstream.chat)
        outcome = asked.split("\nOutcome: ", 1)[1].strip()
        return ScriptedTurn(text=f"Done. {outcome}", delay=0.015)
    offered = {spec.name for spec in request.tools}
    if not offered >= DEMO_TOOLS:
        # Your own agent with no model configured: say so, and do not call tools it lacks.
        names = ", ".join(sorted(offered)) or "none"
        return ScriptedTurn(
            text=f"{notice()}\n\nYour agent's tools ({names}) will be called by the model "
            "you configure.",
            delay=0.015,
        )
    turns: list[dict[str, Any]] = [
        {
            "reasoning": f"The user wrote “{asked[:80]}”. No model is configured, so I am the "
            "offline demo: I will show each kind of event.",
            "text": notice() + "\n\nLet me show you a tool at work.",
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
