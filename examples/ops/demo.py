"""The ops example's offline model: a scripted on-call assistant that walks through the main
story (check the service the user names, alert the admin, report the ticket), continues a
conversation about its ticket, and says plainly when its tools are unavailable. Files sent
with a message (a screenshot of the failing page) are counted and named: it cannot look
inside them, a real model does. Every answer is labelled as the offline demo."""

from __future__ import annotations

import json
import re
from typing import Any

from agentstream.messages import ToolResultsMessage
from agentstream.providers.base import ChatRequest
from agentstream.providers.scripted import ScriptedProvider, ScriptedTurn, position
from examples._common import DEMO_LABEL, files_seen, tool_results_since_user

__all__ = ["ops_demo_model"]

SERVICES = ("billing", "checkout", "search", "auth")
_DELAY = 0.01


def _say(text: str, **extra: Any) -> ScriptedTurn:
    return ScriptedTurn.model_validate({"text": text, "delay": _DELAY, **extra})


def _earlier_ticket(request: ChatRequest) -> dict[str, Any] | None:
    """The last ticket opened in this conversation, from the stored tool results."""
    for message in reversed(request.messages):
        if isinstance(message, ToolResultsMessage):
            for part in message.results:
                if part.name == "alert_admin" and not part.is_error:
                    found: dict[str, Any] = json.loads(part.content)
                    return found
    return None


def _seen(request: ChatRequest) -> str:
    seen = files_seen(request.messages)
    return f"{seen}\n\n" if seen else ""


def _turn(request: ChatRequest) -> ScriptedTurn:
    asked, turn = position(request)
    offered = {spec.name for spec in request.tools}
    words = asked.lower()
    if not offered:
        return _say(
            f"{DEMO_LABEL}\n\nMy tools are unavailable right now (the monitoring service is "
            "not answering), so I cannot check services or open a ticket. If this is urgent, "
            "page the admin on duty directly; I will be able to help again once monitoring "
            "is back."
        )
    ticket = _earlier_ticket(request)
    if ticket is not None and re.search(r"\b(ticket|status|update)\b", words) and turn == 0:
        return _say(
            f"{DEMO_LABEL}\n\nTicket #{ticket['ticket_id']} that I opened earlier in this "
            f"conversation is with the admin on duty, priority {ticket['priority']}. You can "
            "see it in the ticket list at `/example-api/tickets`."
        )
    service = next((s for s in SERVICES if s in words), "billing")
    if turn == 0:
        return _say(
            f"{DEMO_LABEL}\n\n{_seen(request)}Let me check the {service} service first.",
            tool_calls=[{"name": "check_service", "arguments": {"service": service}}],
        )
    results = tool_results_since_user(request.messages)
    check: dict[str, Any] = next((r["value"] for r in results if r["tool"] == "check_service"), {})
    opened = next((r["value"] for r in results if r["tool"] == "alert_admin"), None)
    if opened is None:
        if check.get("status") == "ok":
            return _say(
                f"{service} looks healthy: {check.get('latency_ms')} ms, "
                f"{100 * float(check.get('error_rate', 0)):.1f}% errors. No alert needed; "
                "tell me what you see and I will dig further."
            )
        summary = (
            f"{service} is {check.get('status', 'unhealthy')}: {check.get('latency_ms')} ms "
            f"and {100 * float(check.get('error_rate', 0)):.0f}% errors"
        )
        note = check.get("note")
        message = f"{summary}{f' ({note})' if note else ''}. Reported by the user: {asked[:200]}"
        return _say(
            f"{summary}{f', {note}' if note else ''}. I am alerting the admin.",
            tool_calls=[
                {"name": "alert_admin", "arguments": {"message": message, "priority": "high"}}
            ],
        )
    return _say(
        f"Done: ticket **#{opened.get('ticket_id')}** is open with "
        f"{opened.get('priority')} priority, and the admin on duty has been alerted. Ask me "
        "about the ticket any time in this conversation."
    )


def ops_demo_model() -> ScriptedProvider:
    return ScriptedProvider(_turn, model="ops-demo")
