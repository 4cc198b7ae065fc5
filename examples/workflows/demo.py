"""The offline demo model: with no ``AGENTSTREAM_MODEL``, this scripted model walks through
the assistant's main story, calling the real tools against the real backend and describing
what they returned. Every answer says it is a scripted demo; it never pretends to be a model.

What it understands (by words in the user's message): listing rules, explaining a rule (the
one on screen, or Large Order Review), opening a rule in the editor ("Edit the Large Order
Review rule"), the alert inbox, creating a low stock alert (a preview
to approve), building a restock workflow as a draft, and, for ``context_type: "tables"``,
listing tables and describing one. An approved or rejected preview is acknowledged. Asked to
turn a rule off or on, it reads the rule and says that it changes none.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentstream.messages import ToolResultsMessage, UserMessage
from agentstream.providers.base import ChatRequest
from agentstream.providers.scripted import ScriptedProvider, ScriptedTurn, position

__all__ = ["LABEL", "LOW_STOCK", "demo_model"]

LABEL = "*Offline demo: these replies are scripted (set `AGENTSTREAM_MODEL` for a real model).*"

LOW_STOCK: dict[str, Any] = {
    "name": "Low Stock Alert",
    "description": "Alert the warehouse team and reorder when stock falls below 10.",
    "entity": "inventory.inventory_items",
    "trigger_type": "on_update",
    "actions": [
        {
            "name": "Check Stock",
            "action_type": "evaluate_condition",
            "config": {"field": "quantity", "operator": "lt", "value": 10},
        },
        {
            "name": "Alert Warehouse",
            "action_type": "create_alert",
            "config": {
                "title": "Stock is low",
                "message": "{{sku}} is below 10 in {{warehouse}}.",
                "severity": "high",
                "recipients": ["warehouse-team"],
            },
            "after": "Check Stock:output-true",
        },
        {
            "name": "Reorder",
            "action_type": "create_purchase_order",
            "config": {"quantity": 100},
            "after": "Alert Warehouse",
        },
    ],
}

DRAFT_STEPS: list[dict[str, Any]] = [
    {
        "name": "start_draft",
        "arguments": {
            "name": "Restock Purchase Orders",
            "entity": "inventory.inventory_items",
            "trigger_type": "on_update",
            "description": "Order more when an item reaches its reorder point.",
        },
    },
    {
        "name": "add_draft_action",
        "arguments": {
            "name": "At Reorder Point",
            "action_type": "evaluate_condition",
            "config": {"field": "quantity", "operator": "lte", "value": 5},
        },
    },
    {
        "name": "add_draft_action",
        "arguments": {
            "name": "Order More",
            "action_type": "create_purchase_order",
            "config": {"quantity": 50},
            "after": "At Reorder Point:output-true",
        },
    },
    {
        "name": "add_draft_action",
        "arguments": {
            "name": "Tell Buyers",
            "action_type": "send_email",
            "config": {"to": "buyers@example.com", "subject": "Restock ordered for {{sku}}"},
            "after": "Order More",
        },
    },
    {
        "name": "preview_draft",
        "arguments": {"description": "Order 50 more and tell the buyers at the reorder point."},
    },
]

HELP = f"""{LABEL}

I am the workflow assistant. Try:
- **Show me my workflow rules**
- **Explain the Large Order Review rule**
- **What alerts do I have?**
- **Create a low stock alert for inventory items** (a preview you approve)
- **Build a restock workflow step by step** (a draft)"""


def _results(request: ChatRequest) -> list[tuple[str, Any, bool]]:
    """The latest tool results: ``(tool name, parsed content, is_error)``."""
    for message in reversed(request.messages):
        if isinstance(message, ToolResultsMessage):
            parsed = []
            for part in message.results:
                try:
                    content = json.loads(part.content)
                except ValueError:
                    content = part.content
                parsed.append((part.name, content, part.is_error))
            return parsed
        if isinstance(message, UserMessage):
            break
    return []


def _call(tool: str, text: str = "", arguments: dict[str, Any] | None = None) -> ScriptedTurn:
    call = {"name": tool, "arguments": arguments or {}}
    return ScriptedTurn.model_validate({"text": text, "tool_calls": [call], "delay": 0.01})


def _say(text: str) -> ScriptedTurn:
    return ScriptedTurn(text=text, delay=0.01)


def _failed(results: list[tuple[str, Any, bool]]) -> str | None:
    for name, content, is_error in results:
        if is_error:
            message = content.get("error") if isinstance(content, dict) else content
            return f"`{name}` failed: {message}"
    return None


def _turn(request: ChatRequest) -> ScriptedTurn:
    asked, turn = position(request)
    words = asked.lower()
    offered = {t.name for t in request.tools}
    results = _results(request)
    failure = _failed(results)
    if failure and turn > 0:
        return _say(f"{LABEL}\n\n{failure}")
    if "\nOutcome: " in asked or "\nThe action failed" in asked:
        outcome = asked.split("\n", 1)[1].removeprefix("Outcome: ").strip()
        if "reject_workflow" in asked:
            # The outcome is the model's instruction; the user is asked in the demo's words.
            return _say(f"{LABEL}\n\nUnderstood: nothing was saved. What should I change?")
        return _say(f"{LABEL}\n\n{outcome}")
    if "list_tables" in offered:
        return _tables(words, turn, results)
    switch = SWITCH.search(asked)
    if switch:
        return _switch(switch, turn, results)
    editing = EDIT.search(asked)
    if editing:
        if turn == 0:
            arguments = {"workflow_id": editing.group("rule")}
            return _call("open_workflow_editor", f"{LABEL}\n\nI'll open it for you.", arguments)
        return _say(
            "Here it is in the editor: change the name, the description or an action's config, "
            "then press **Validate** to check it again, right there."
        )
    if "draft" in words or "step by step" in words:
        if turn < len(DRAFT_STEPS):
            step = DRAFT_STEPS[turn]
            text = (
                f"{LABEL}\n\nI'll build it as a draft, one action at a time." if turn == 0 else ""
            )
            return _call(step["name"], text, step["arguments"])
        return _say(
            "I've sent a preview of the draft for your review: approve it to save the rule."
        )
    if "low stock" in words or re.search(r"\b(create|build|new)\b", words):
        if turn == 0:
            return _call(
                "discover_action_types", f"{LABEL}\n\nLet me check the action types first."
            )
        if turn == 1:
            return _call(
                "preview_workflow",
                "I'll build that workflow.",
                {"description": LOW_STOCK["description"], "workflow": LOW_STOCK},
            )
        verdict = results[0][1] if results else {}
        if isinstance(verdict, dict) and verdict.get("valid") is False:
            problems = "\n".join(f"- {e}" for e in verdict.get("errors", []))
            return _say(f"The backend refused this workflow:\n{problems}")
        return _say(
            "I've sent a preview for your review: **Low Stock Alert** checks the quantity on "
            "every update, alerts the warehouse team below 10 and drafts a purchase order."
        )
    if "alert" in words:
        if turn == 0:
            return _call("list_my_alerts", f"{LABEL}\n\nLet me check your inbox.")
        alerts = results[0][1] if results else []
        lines = "\n".join(
            f"- **{a['title']}** ({a['severity']}, {a['status']}): {a['message']}" for a in alerts
        )
        return _say(
            f"You have {len(alerts)} alerts:\n{lines}" if alerts else "Your inbox is empty."
        )
    if "explain" in words or "what does" in words:
        if turn == 0:
            named = re.search(r"explain the (.+?) rule", asked, re.IGNORECASE)
            arguments = {"workflow_id": named.group(1)} if named else {}
            return _call(
                "get_workflow_rule", f"{LABEL}\n\nLet me look up that workflow.", arguments
            )
        rule = results[0][1] if results else {}
        flow = "\n".join(f"- {line}" for line in rule.get("flow", []))
        state = "active" if rule.get("is_active") else "paused"
        return _say(
            f"**{rule.get('name')}** ({state}) runs {rule.get('trigger_type')} of "
            f"`{rule.get('entity')}`: {rule.get('description')}\n\nIts flow:\n{flow}"
        )
    if "rule" in words or "workflow" in words:
        if turn == 0:
            return _call("list_workflow_rules", f"{LABEL}\n\nLet me list your rules.")
        rules = results[0][1] if results else []
        lines = "\n".join(
            f"| {r['name']} | {r['entity_name']} | {r['trigger_type']} | "
            f"{'yes' if r['is_active'] else 'no'} |"
            for r in rules
        )
        return _say(
            f"You have {len(rules)} rules:\n\n| rule | entity | trigger | active |\n"
            f"|---|---|---|---|\n{lines}"
        )
    return _say(HELP)


EDIT = re.compile(r"\b(?:edit|tweak|open)\s+(?:the\s+)?(?P<rule>.+?)\s+rule\b", re.IGNORECASE)
"""Opening a rule in the editor, by name: "Edit the Large Order Review rule"."""

SWITCH = re.compile(
    r"\b(?P<verb>turn (?:off|on)|pause|disable|deactivate|enable|activate|resume)\b"
    r"(?:\s+the)?\s+(?P<rule>.+?)\s+(?:rule|workflow)\b",
    re.IGNORECASE,
)
"""Turning a rule off or on, by name: "Turn off the New Customer Welcome rule"."""


def _switch(asked: re.Match[str], turn: int, results: list[tuple[str, Any, bool]]) -> ScriptedTurn:
    """Read the named rule and say what a real model would do: the demo changes no rules."""
    if turn == 0:
        return _call(
            "get_workflow_rule",
            f"{LABEL}\n\nLet me look up that rule.",
            {"workflow_id": asked.group("rule")},
        )
    rule = results[0][1] if results else {}
    off = asked.group("verb").lower() in {"turn off", "pause", "disable", "deactivate"}
    state = "active" if rule.get("is_active") else "paused"
    wanted = "paused" if off else "active"
    if state == wanted:
        return _say(f"**{rule.get('name')}** is already {state}: nothing to change.")
    return _say(
        f"**{rule.get('name')}** is {state}. The offline demo changes no rules: with a real "
        f"model (`AGENTSTREAM_MODEL`), I would preview it {wanted} for you to approve. You can "
        "**create a low stock alert** to see how a preview is approved."
    )


def _tables(words: str, turn: int, results: list[tuple[str, Any, bool]]) -> ScriptedTurn:
    if "column" in words or "describe" in words:
        if turn == 0:
            return _call(
                "describe_table",
                f"{LABEL}\n\nLet me read its columns.",
                {"table": "inventory.inventory_items"},
            )
        table = results[0][1] if results else {}
        rows = "\n".join(f"| {c['name']} | {c['type']} |" for c in table.get("columns", []))
        return _say(f"`{table.get('qualified_name')}` has:\n\n| column | type |\n|---|---|\n{rows}")
    if turn == 0:
        return _call("list_tables", f"{LABEL}\n\nLet me list the tables.")
    tables = results[0][1] if results else []
    lines = "\n".join(f"- `{t['table']}`: {t['description']}" for t in tables)
    return _say(f"There are {len(tables)} tables:\n{lines}")


def demo_model() -> ScriptedProvider:
    """The scripted model of the offline demo."""
    return ScriptedProvider(_turn, model="workflows-offline-demo")
