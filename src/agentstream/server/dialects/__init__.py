"""The wire dialects: one module per protocol, each a request model, an encoder and a route.

| module         | protocol           | endpoint                             | frames              |
|----------------|--------------------|--------------------------------------|---------------------|
| ``workflow``   | workflow assistant | ``POST /v1/agent/chat``              | named SSE events    |
| ``playground`` | data playground    | ``POST /api/chat/agent-chat/stream`` | named SSE or NDJSON |
| ``tray``       | chat tray          | ``POST /api/chat/stream``            | typed ``data:`` SSE |
| ``ops``        | ops agent          | ``POST /agent/stream``               | typed ``data:`` SSE |
| ``agui``       | AG-UI (CopilotKit) | ``POST /ag-ui``                      | typed ``data:`` SSE |
| ``aisdk``      | Vercel AI SDK UI   | ``POST /ai-sdk/chat``                | typed ``data:`` SSE |

Typed ``data:`` SSE carries the event's ``type`` inside its JSON. Each module declares
itself as a :class:`~agentstream.server.dialects.declaration.Dialect` (``DIALECT``): its
name, path prefixes, OpenAPI tag, routes, encoder and disconnect policy. The server serves
the dialects it is given, by default :data:`BUILT_IN`, and derives from them what would
otherwise be lists kept by hand (the paths a mount may not take, the OpenAPI tags, the app's
description). The names runs are stored under predate the module names: the workflow
assistant's is ``ichor`` and the ops agent's ``agent``.
"""

from agentstream.server.dialects import agui, aisdk, ops, playground, tray, workflow
from agentstream.server.dialects.declaration import Dialect, StreamOptions, UnknownDialect

__all__ = [
    "BUILT_IN",
    "Dialect",
    "StreamOptions",
    "UnknownDialect",
    "agui",
    "aisdk",
    "ops",
    "playground",
    "tray",
    "workflow",
]

BUILT_IN: tuple[Dialect, ...] = (
    workflow.DIALECT,
    playground.DIALECT,
    tray.DIALECT,
    ops.DIALECT,
    agui.DIALECT,
    aisdk.DIALECT,
)
