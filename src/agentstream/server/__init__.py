"""The HTTP server: every protocol's dialect over one run pipeline, with auth and SSE done right.

``create_app(agent)`` returns the FastAPI app; ``agentstream serve`` runs it under uvicorn.
Modules: ``settings`` (environment), ``config`` (what an application adds: mounted apps, its
sessions, its sign-in page), ``auth`` (who is calling), ``sse`` (the one streaming
response), ``errors`` (HTTP error shapes), ``models`` (which models clients may pick),
``dialects`` (one module per wire format), ``web`` (the browser UI), ``conversations``
(``/api/conversations``, mounted when a store is configured).
"""

from agentstream.server.app import create_app
from agentstream.server.config import ServerConfig
from agentstream.server.settings import Settings, SettingsError

__all__ = ["ServerConfig", "Settings", "SettingsError", "create_app"]
