"""The wire dialects: one module per spec family, each a request model, an encoder and a route.

| module       | spec     | endpoint                             | frames                     |
|--------------|----------|--------------------------------------|----------------------------|
| ``ichor``    | 000      | ``POST /v1/agent/chat``              | named SSE events           |
| ``playground`` | 001    | ``POST /api/chat/agent-chat/stream`` | named SSE or NDJSON lines  |
| ``tray``     | 002, 003 | ``POST /api/chat/stream``            | ``data:`` SSE with ``type``|
| ``agent``    | 004      | ``POST /agent/stream``               | ``data:`` SSE with ``type``|
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
