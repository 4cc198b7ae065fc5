"""The server's state, built once per app: the runner, settings, auth and the models every
route needs.

Routers are built by factories that take a :class:`ServerContext`, so no route reaches for
globals and one process can host several apps (tests run many).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.requests import Request

from agentstream.principal import Principal
from agentstream.runs import Runner
from agentstream.server.auth import Authenticator
from agentstream.server.models import ModelCatalog
from agentstream.server.settings import Settings

__all__ = ["ServerContext"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerContext:
    runner: Runner
    settings: Settings
    authenticator: Authenticator
    models: ModelCatalog

    def principal(self, *, allow_cookie: bool) -> Callable[[Request], Awaitable[Principal]]:
        """A FastAPI dependency that authenticates the caller (401 on failure)."""
        authenticator = self.authenticator

        async def current_principal(request: Request) -> Principal:
            return await authenticator.authenticate(request, allow_cookie=allow_cookie)

        return current_principal
