"""The wire dialects: one module per protocol, each a request model, an encoder and a route.

| module         | protocol           | endpoint                             | frames              |
|----------------|--------------------|--------------------------------------|---------------------|
| ``ichor``      | workflow assistant | ``POST /v1/agent/chat``              | named SSE events    |
| ``playground`` | data playground    | ``POST /api/chat/agent-chat/stream`` | named SSE or NDJSON |
| ``tray``       | chat tray          | ``POST /api/chat/stream``            | typed ``data:`` SSE |
| ``agent``      | ops agent          | ``POST /agent/stream``               | typed ``data:`` SSE |

Typed ``data:`` SSE carries the event's ``type`` inside its JSON.
"""

from collections.abc import Callable

from fastapi import APIRouter

from agentstream.server.context import ServerContext
from agentstream.server.dialects import agent, ichor, playground, tray

__all__ = ["ROUTERS", "agent", "ichor", "playground", "tray"]

ROUTERS: tuple[Callable[[ServerContext], APIRouter], ...] = (
    ichor.router,
    playground.router,
    tray.router,
    agent.router,
)
