"""The agent the embedded tray's end-to-end tests talk to (``e2e/embed.e2e.ts``): pages with
tools of their own, so a test can see the host page's context choose the tools, and answers
that carry client actions and payloads for the host page to handle.

Its scripted model answers from the request itself:

- ``tools``      lists the tools it was offered and the page the system prompt names
- ``close``      offers a ``close_chat`` client action
- ``go to``      offers a ``navigate`` client action to the host's ``/orders`` page
- ``chart``      calls ``show_chart``: a ``sales_chart`` payload (the host draws it) and an
                 ``order_note`` payload (the built-in card)
- anything else  echoes the message
"""

from __future__ import annotations

import json
from typing import Any

from agentstream import Agent, Payload, ToolResult, tool
from agentstream.chat import ChatConfig, ClientAction, Page, PayloadType, Tab
from agentstream.providers.base import ChatRequest
from agentstream.providers.scripted import ScriptedProvider, position


@tool
def list_invoices() -> str:
    """List the open invoices (billing page only)."""
    return "INV-1, INV-2"


@tool
def refund_invoice(invoice: str) -> str:
    """Refund an invoice (billing page, refunds tab only).

    Args:
        invoice: The invoice to refund.
    """
    return f"Refunded {invoice}."


@tool
def find_order(order: str) -> str:
    """Find an order (orders page only).

    Args:
        order: The order number.
    """
    return f"Order {order} is on its way."


@tool
def show_chart(region: str) -> ToolResult:
    """Show the sales chart of a region, with a note.

    Args:
        region: The region.
    """
    return ToolResult(
        text="Chart shown.",
        payload=Payload(
            kind="sales_chart",
            data={"region": region, "months": ["Jan", "Feb", "Mar"], "sales": [12, 30, 21]},
            summary=f"Sales in {region}",
        ),
    )


@tool
def note_order(order: str) -> ToolResult:
    """Attach a note card about an order.

    Args:
        order: The order number.
    """
    return ToolResult(
        text="Noted.",
        payload=Payload(kind="order_note", data={"order": order, "note": "Ships Monday"}),
    )


def answer(request: ChatRequest) -> dict[str, Any]:
    message, turn = position(request)
    text = message.lower()
    if "tools" in text:
        names = sorted(t.name for t in request.tools)
        return {"text": f"Tools offered: {', '.join(names)}."}
    if "close" in text:
        action = {"label": "Close the chat", "action": "close_chat", "handler": "client"}
        return {"text": f"Done here.\n\nSUGGESTED_ACTIONS: {json.dumps([action])}"}
    if "go to" in text:
        action = {
            "label": "Open orders",
            "action": "navigate",
            "handler": "client",
            "data": {"url": "/orders"},
        }
        return {
            "text": f"Your orders are a page away.\n\nSUGGESTED_ACTIONS: {json.dumps([action])}"
        }
    if "chart" in text:
        if turn == 0:
            return {
                "tool_calls": [
                    {"name": "show_chart", "arguments": {"region": "North"}},
                    {"name": "note_order", "arguments": {"order": "A-7"}},
                ]
            }
        return {"text": "Here is the chart."}
    return {"text": f"You said: {message}"}


agent = Agent(
    model=ScriptedProvider(answer, model="embed-script"),
    tools=[show_chart, note_order],
    name="embed-e2e",
    instructions="You are the embedded tray's test agent.",
)

chat = ChatConfig(
    app_name="Shop assistant",
    starter_prompts=["Which tools do you have?"],
    pages=[
        Page(
            name="billing",
            identity="You help with billing.",
            tools=[list_invoices],
            tabs=[Tab(name="refunds", identity="You help with refunds.", tools=[refund_invoice])],
        ),
        Page(name="orders", identity="You help with orders.", tools=[find_order]),
    ],
    payload_types=[
        PayloadType.tool("sales_chart", title="Sales chart"),
        PayloadType.tool("order_note", title="Order note"),
    ],
    client_actions=[
        ClientAction(name="close_chat", description="Close the chat panel"),
        ClientAction(name="navigate", description='Open a page of the shop; data: {"url"}'),
    ],
)
