"""The server's state, built once per app: the runner, settings, auth and the models every
route needs.

Routers are built by factories that take a :class:`ServerContext`, so no route reaches for
globals and one process can host several apps (tests run many).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from weakref import WeakSet

from starlette.requests import Request

from agentstream.principal import Principal
from agentstream.runs import Runner
from agentstream.server.auth import Authenticator, is_admin
from agentstream.server.models import ModelCatalog
from agentstream.server.settings import Settings

if TYPE_CHECKING:
    from agentstream.server.intake import Intake
    from agentstream.server.sse import EventStream
    from agentstream.telemetry.metrics import Metrics
    from agentstream.telemetry.tracing import Tracing

__all__ = ["ServerContext"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerContext:
    runner: Runner
    settings: Settings
    authenticator: Authenticator
    models: ModelCatalog
    tracing: Tracing | None = None
    """Traces, when they are on (:mod:`agentstream.telemetry.tracing`)."""
    metrics: Metrics | None = None
    """Metrics, when they are on (:mod:`agentstream.telemetry.metrics`)."""
    intake: Intake | None = None
    """Where files come in (uploads, and files messages carry inline); none without a SQL
    store (:mod:`agentstream.server.intake`)."""
    followers: WeakSet[EventStream] = field(default_factory=WeakSet)
    """The streams following runs from the log (reconnects, second tabs), which a draining
    worker ends before it stops (:meth:`drain`)."""

    async def drain(self, within: float) -> None:
        """Drain this worker (:mod:`agentstream.server.drain`): its runs end, or leave it,
        within ``within`` seconds (:meth:`Runner.drain <agentstream.runs.Runner.drain>`);
        then the streams still following runs (other workers') are ended, and their clients
        follow those runs at another worker."""
        await self.runner.drain(within)
        for stream in list(self.followers):
            stream.end()

    def principal(self, *, allow_cookie: bool) -> Callable[[Request], Awaitable[Principal]]:
        """A FastAPI dependency that authenticates the caller (401 on failure)."""
        authenticator = self.authenticator

        async def current_principal(request: Request) -> Principal:
            return await authenticator.authenticate(request, allow_cookie=allow_cookie)

        return current_principal

    async def stop_run(self, run_id: str, principal: Principal, reason: str) -> bool:
        """Stop ``run_id`` wherever it runs if ``principal`` owns it (a stop button); traced,
        as a child of the run's span, when traces are on."""
        runner = self.runner
        if self.tracing is None:
            return await runner.request_cancel(run_id, principal, reason)
        async with self.tracing.stopping(run_id, principal, runner.broker):
            return await runner.request_cancel(run_id, principal, reason)

    def is_admin(self, principal: Principal) -> bool:
        """Whether ``principal`` is an administrator (:func:`~agentstream.server.auth.is_admin`)."""
        return is_admin(principal, self.settings, self.authenticator)
