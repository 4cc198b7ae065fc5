"""The wire dialects: one module per protocol, each a request model, an encoder and a route.

| module         | protocol           | endpoint                             | frames              |
|----------------|--------------------|--------------------------------------|---------------------|
| ``ichor``      | workflow assistant | ``POST /v1/agent/chat``              | named SSE events    |
| ``playground`` | data playground    | ``POST /api/chat/agent-chat/stream`` | named SSE or NDJSON |
| ``tray``       | chat tray          | ``POST /api/chat/stream``            | typed ``data:`` SSE |
| ``agent``      | ops agent          | ``POST /agent/stream``               | typed ``data:`` SSE |
| ``agui``       | AG-UI (CopilotKit) | ``POST /ag-ui``                      | typed ``data:`` SSE |

Typed ``data:`` SSE carries the event's ``type`` inside its JSON. Each module declares
itself as a :class:`~agentstream.server.dialects.declaration.Dialect` (``DIALECT``); the
server serves the dialects it is given, by default :data:`BUILT_IN`.
"""

from agentstream.server.dialects import agent, agui, ichor, playground, tray
from agentstream.server.dialects.declaration import Dialect, StreamOptions, UnknownDialect

__all__ = [
    "BUILT_IN",
    "Dialect",
    "StreamOptions",
    "UnknownDialect",
    "agent",
    "agui",
    "ichor",
    "playground",
    "tray",
]

BUILT_IN: tuple[Dialect, ...] = (
    ichor.DIALECT,
    playground.DIALECT,
    tray.DIALECT,
    agent.DIALECT,
    agui.DIALECT,
)
