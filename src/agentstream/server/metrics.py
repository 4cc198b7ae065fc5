"""``GET /metrics``: the server's Prometheus metrics, for the machine and its administrators.

Served only when metrics are on (``AGENTSTREAM_METRICS=on``, and no
``AGENTSTREAM_METRICS_PORT``, which serves them on a port of their own instead: see
:mod:`agentstream.cli.serve`). A client on a loopback address (a Prometheus or an agent on the
same machine) reads them as they are; anyone else needs an administrator's bearer token
(:func:`~agentstream.server.auth.is_admin`): 401 without credentials, 403 with another's. A
request that a proxy forwarded is not a loopback client, whatever address it comes from.

With several workers the figures are every worker's, summed (see
:mod:`agentstream.telemetry.metrics`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from agentstream.errors import Forbidden
from agentstream.server.auth import forwarded
from agentstream.server.settings import is_loopback
from agentstream.server.state import ServerContext

if TYPE_CHECKING:
    from agentstream.telemetry.metrics import Metrics

__all__ = ["METRICS_PATH", "metrics_router"]

METRICS_PATH = "/metrics"
_TEXT_FORMAT = "text/plain; version=0.0.4; charset=utf-8"


def metrics_router(server: ServerContext, metrics: Metrics) -> APIRouter:
    router = APIRouter()

    # Not in the OpenAPI document: it is Prometheus's, not a client's (docs/guides/operations.md).
    @router.get(METRICS_PATH, response_class=Response, include_in_schema=False)
    async def read_metrics(request: Request) -> Response:
        if not _local(request):
            principal = await server.authenticator.authenticate(request, allow_cookie=False)
            if not server.is_admin(principal):
                raise Forbidden("Metrics are for administrators.")
        # Several workers' files are read from disk: off the event loop.
        body = await run_in_threadpool(metrics.exposition)
        return Response(body, media_type=_TEXT_FORMAT)

    return router


def _local(request: Request) -> bool:
    """A client on this machine, not forwarded by a proxy."""
    client = request.client
    return client is not None and is_loopback(client.host) and not forwarded(request)
