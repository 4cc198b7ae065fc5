"""What an application adds to the server beside its agent and its chat: its own ASGI apps
mounted under path prefixes, who its callers are, and where they sign in.

These are the server's concerns, not the chat's (:class:`~agentstream.chat.ChatConfig` says
what the model is told and how answers are shaped, and knows nothing of HTTP). An
application gives them to :func:`~agentstream.server.create_app` (``server=``) or to
``agentstream serve --server module:name``::

    server = ServerConfig(
        mounts={"/example-api": backend},   # its own REST API, served by the same process
        authenticator=Sessions(db),         # its sign-in cookie instead of the JWT settings
        sign_in_url="/example-api/sign-in", # named by every 401
    )

A prefix must name a path of its own: ``create_app`` refuses one that would take a path of the
server's routes (a protocol's, the conversations API, the docs, the web UI's files), or of
another mount.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentstream.errors import ConfigurationError
from agentstream.runs.limits import Limits

if TYPE_CHECKING:
    from agentstream.server.auth import Authenticator

__all__ = ["ServerConfig"]


@dataclass(frozen=True, kw_only=True)
class ServerConfig:
    """An application's additions to the server; every field has a default."""

    mounts: Mapping[str, Any] = field(default_factory=dict)
    """ASGI applications mounted beside the chat API, by path prefix (``{"/example-api":
    backend}``): mounted after the API routes and before the web UI's catch-all. A prefix
    starts with ``/``, names a path, and does not end with ``/``."""
    authenticator: Authenticator | None = None
    """Who is calling, when the application keeps its own sessions (a sign-in page that sets
    a cookie); ``None`` uses the authentication the server settings describe."""
    sign_in_url: str | None = None
    """The application's own sign-in page: every 401 names it (``sign_in_url`` in the body),
    so a chat UI can send a user who is not signed in there. The web UI adds
    ``next=<the page it was on>``."""
    tracer_provider: Any = None
    """An OpenTelemetry ``TracerProvider`` to trace runs with (:mod:`agentstream.telemetry`):
    traces are on with it, whatever the ``OTEL_*`` variables say; the application owns it
    (and shuts it down)."""
    limits: Limits | None = None
    """The limits of users and tenants (:mod:`agentstream.runs.limits`), instead of the
    configuration file's ``[limits]`` table; each user's limits set by
    ``AGENTSTREAM_LIMIT_*`` still apply over them."""

    def __post_init__(self) -> None:
        for prefix, app in self.mounts.items():
            if not prefix.startswith("/") or prefix == "/" or prefix.endswith("/"):
                raise ConfigurationError(
                    f"mount prefix {prefix!r} must start with '/', name a path, and not end "
                    "with '/'"
                )
            if not callable(app):
                raise ConfigurationError(f"the mount at {prefix!r} is not an ASGI application")
