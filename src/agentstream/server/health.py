"""``GET /healthz`` and ``GET /readyz``: what load balancers and orchestrators ask a worker.

``/healthz`` says the process is alive and serving (200 as long as it answers at all, draining
or not): restart it when this fails. ``/readyz`` says whether it should be sent new work:
200 when the parts it needs answer (the database, Redis) and it is not draining, else 503,
naming which check failed. A worker told to stop answers 503 here from the moment it starts
draining (:mod:`agentstream.server.drain`), so a balancer that probes it takes it out of
rotation while it lets its runs finish.

Both are unauthenticated (a probe carries no token) and say nothing beyond ``ok``,
``unreachable`` or ``draining``: why a part is unreachable is logged, never answered.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol, runtime_checkable

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from agentstream.server.state import ServerContext

__all__ = ["HEALTH_PATH", "PATHS", "READY_PATH", "READY_TIMEOUT_SECONDS", "Reachable", "router"]

log = logging.getLogger("agentstream.health")

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
PATHS = (HEALTH_PATH, READY_PATH)

READY_TIMEOUT_SECONDS = 2.0
"""How long each check may take before its part counts as unreachable (probes time out
too: Kubernetes' default is one second, so a slow part fails the probe either way)."""


@runtime_checkable
class Reachable(Protocol):
    """A part a worker needs that can be asked whether it answers (the SQL store, the Redis
    broker)."""

    async def reach(self) -> None:
        """Raise unless the part answers now."""
        ...


_NO_STORE = {"Cache-Control": "no-store"}


def router(context: ServerContext) -> APIRouter:
    api = APIRouter(tags=["health"])
    runner = context.runner
    parts = {"database": runner.store, "redis": runner.broker}

    @api.get(
        HEALTH_PATH,
        summary="Whether the process is alive (200 while it answers, draining or not)",
        responses={200: {"description": "Alive"}},
    )
    async def healthz() -> JSONResponse:
        return JSONResponse({"status": "alive"}, headers=_NO_STORE)

    @api.get(
        READY_PATH,
        summary="Whether the worker takes new work: its database and Redis answer and it is "
        "not draining",
        responses={
            200: {"description": "Ready"},
            503: {"description": "Draining, or a part it needs is unreachable (named)"},
        },
    )
    async def readyz() -> JSONResponse:
        checks: dict[str, str] = {}
        for name, part in parts.items():
            if isinstance(part, Reachable):
                checks[name] = await _check(name, part)
        if runner.draining:
            body = {"status": "draining", "detail": "This worker is stopping", "checks": checks}
            return JSONResponse(body, 503, headers={**_NO_STORE, "Connection": "close"})
        down = [name for name, state in checks.items() if state != "ok"]
        if down:
            detail = f"Unreachable: {', '.join(down)}"
            body = {"status": "unavailable", "detail": detail, "checks": checks}
            return JSONResponse(body, 503, headers=_NO_STORE)
        return JSONResponse({"status": "ready", "checks": checks}, headers=_NO_STORE)

    return api


async def _check(name: str, part: Reachable) -> str:
    try:
        await asyncio.wait_for(part.reach(), READY_TIMEOUT_SECONDS)
    except Exception as exc:
        log.warning("readiness: the %s is unreachable (%s)", name, type(exc).__name__)
        return "unreachable"
    return "ok"
