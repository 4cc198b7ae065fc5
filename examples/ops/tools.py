"""The ops agent's tools: ``alert_admin`` (opens a ticket in the example's database) and the
monitoring tools, which come from a :class:`~agentstream.tools.ToolSource` so that an outage
of the monitoring service gives the client a ``tool_fallback`` warning and the chat goes on
without tools."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Annotated, Literal

from pydantic import Field

from agentstream import Progress, Tool, ToolContext, ToolResult, tool
from agentstream.principal import Principal
from examples.ops.database import OpsDatabase

__all__ = ["MonitoringDown", "MonitoringTools", "alert_admin_tool"]

Priority = Literal["low", "medium", "high", "critical"]


def alert_admin_tool(db: OpsDatabase) -> Tool:
    """``alert_admin`` bound to the example's database."""

    @tool(display=lambda args: f"Alerting the admin ({args.get('priority', 'medium')})…")
    def alert_admin(
        ctx: ToolContext,
        message: Annotated[str, Field(min_length=3, max_length=2000)],
        priority: Priority = "medium",
    ) -> ToolResult:
        """Alert the administrator on duty about a problem: opens a ticket they will see.

        Args:
            message: What is wrong, with the facts you checked (service, symptoms, since when).
            priority: How urgent it is: low, medium, high or critical.
        """
        ticket = db.open_ticket(
            message=message.strip(),
            priority=priority,
            opened_by=ctx.user_id,
            conversation_id=ctx.conversation_id,
        )
        result = {"status": "sent", "ticket_id": ticket.id, "priority": ticket.priority}
        return ToolResult(
            text=json.dumps(result),
            output=result,
            display=f"Admin alerted: ticket #{ticket.id} ({ticket.priority})",
        )

    return alert_admin


class MonitoringDown(ConnectionError):
    """The monitoring service cannot be reached."""


class MonitoringTools:
    """The monitoring service's tools, loaded when a run starts. While the service is down
    (``PUT /example-api/monitoring {"online": false}`` simulates an outage), loading fails."""

    def __init__(self, db: OpsDatabase) -> None:
        self.db = db
        self._tools = [self._check_service(), self._list_services()]

    def __repr__(self) -> str:
        return "MonitoringTools()"

    async def load(self, principal: Principal, scopes: Sequence[str]) -> Sequence[Tool]:
        online = await asyncio.to_thread(self.db.monitoring_online)
        if not online:
            raise MonitoringDown("the monitoring service is not answering")
        return self._tools

    def _check_service(self) -> Tool:
        db = self.db

        @tool(display=lambda args: f"Checking {args.get('service', 'the service')}…")
        async def check_service(service: str) -> AsyncIterator[Progress | ToolResult]:
            """Check one service's health: status, latency, error rate and recent notes.

            Args:
                service: The service's name (billing, checkout, search, auth).
            """
            yield Progress(stage="connecting", message=f"Reaching {service}", fraction=0.2)
            await asyncio.sleep(0.2)
            found = await asyncio.to_thread(db.service, service)
            yield Progress(stage="probing", message="Reading health checks", fraction=0.7)
            await asyncio.sleep(0.2)
            status = found["status"]
            yield ToolResult(
                text=json.dumps(found),
                output=found,
                display=f"{found['name']}: {status}, {found['latency_ms']} ms",
            )

        return check_service

    def _list_services(self) -> Tool:
        db = self.db

        @tool(display=lambda args: "Listing services…")
        def list_services() -> list[dict[str, object]]:
            """List every monitored service with its current status."""
            return db.services()

        return list_services
