"""``GET /api/usage``: what runs used and cost, by user, tenant, model and day.

::

    GET /api/usage?from=2026-11-01&to=2026-11-30&group_by=day,model[&user=...][&tenant=...]
    -> {"from", "to", "group_by", "scope": "all" | "own", "currency": "USD",
        "lines": [{"day", "model", "runs", "input_tokens", "output_tokens",
                   "reasoning_tokens", "cache_read_tokens", "cache_write_tokens",
                   "cost_usd", "estimated_runs", "unpriced_runs"}...],
        "total": {...the same, summed}}

Days are UTC days, both ends included (default: the last 30 days); a period is at most
:data:`MAX_DAYS` long. ``group_by`` is any of ``user``, ``tenant``, ``model``, ``day`` (default
``day,model``). Administrators (:func:`~agentstream.server.auth.is_admin`) see every user and
tenant and may narrow to one with ``user`` and ``tenant`` (``tenant=`` with nothing after it
is the callers without a tenant); anyone else sees their own runs only (``scope: "own"``), and
asking for someone else's is a 403.

Every run that ended is in it, whatever its end: completed, failed, stopped, or cut off by a
client that left (:class:`~agentstream.events.RunUsage`). Served when the store keeps a usage
ledger (:class:`~agentstream.runs.store.UsageReader`).
"""

# No ``from __future__ import annotations``: FastAPI reads these annotations at runtime.

from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from agentstream.accounting import USAGE_GROUPS, UsageGroup, total
from agentstream.errors import Forbidden, RefusedRequest
from agentstream.principal import Principal
from agentstream.runs.store import UsageReader
from agentstream.server.state import ServerContext

__all__ = ["MAX_DAYS", "usage_router"]

MAX_DAYS = 366
DEFAULT_DAYS = 30


def usage_router(store: UsageReader, server: ServerContext) -> APIRouter:
    """The usage report over ``store``'s ledger (see :mod:`agentstream.server.usage`)."""
    router = APIRouter(prefix="/api/usage", tags=["usage"])
    CurrentPrincipal = Annotated[Principal, Depends(server.principal(allow_cookie=True))]

    @router.get("")
    async def usage(
        principal: CurrentPrincipal,
        first: Annotated[date | None, Query(alias="from")] = None,
        last: Annotated[date | None, Query(alias="to")] = None,
        group_by: Annotated[str, Query(max_length=100)] = "day,model",
        user: Annotated[str | None, Query(max_length=255)] = None,
        tenant: Annotated[str | None, Query(max_length=255)] = None,
    ) -> dict[str, Any]:
        last = last or datetime.now(UTC).date()
        first = first or last - timedelta(days=DEFAULT_DAYS - 1)
        if first > last:
            raise RefusedRequest("from", "the period starts after it ends")
        if (last - first).days >= MAX_DAYS:
            raise RefusedRequest("from", f"a period is at most {MAX_DAYS} days")
        groups = _groups(group_by)
        admin = server.is_admin(principal)
        if not admin:
            if (user is not None and user != principal.user_id) or (
                tenant is not None and tenant != principal.tenant
            ):
                raise Forbidden("Only administrators see the usage of others.")
            user, tenant = principal.user_id, principal.tenant
        lines = await store.usage_report(
            first_day=first, last_day=last, group_by=groups, tenant_id=tenant, user_id=user
        )
        return {
            "from": first.isoformat(),
            "to": last.isoformat(),
            "group_by": list(groups),
            "scope": "all" if admin else "own",
            "currency": "USD",
            "lines": [line.to_json() for line in lines],
            "total": total(lines).to_json(),
        }

    return router


def _groups(value: str) -> tuple[UsageGroup, ...]:
    groups: list[UsageGroup] = []
    for name in (part.strip() for part in value.split(",") if part.strip()):
        known = next((g for g in USAGE_GROUPS if g == name), None)
        if known is None:
            raise RefusedRequest("group_by", f"{name!r} is not one of {', '.join(USAGE_GROUPS)}")
        if known not in groups:
            groups.append(known)
    return tuple(groups)
