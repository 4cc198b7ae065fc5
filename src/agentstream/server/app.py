"""``create_app(agent)``: every dialect, the conversations API and the web UI on one FastAPI app.

Layers, outermost first: CORS (when origins are configured), the body limit (413 on a
``Content-Length`` over the limit, or on a streamed body that grows past it), FastAPI's
exception handling (our JSON error shapes, see :mod:`agentstream.server.errors`), then the
routes: the dialects it is given (default: all six), ``/api/conversations`` when a store is
configured, ``/api/chat/config`` for the web UI, ``/healthz`` and ``/readyz`` for probes
(:mod:`agentstream.server.health`), the application's own mounted apps
(:class:`~agentstream.server.config.ServerConfig`), and the web UI last so API routes always
win. What the dialects declare decides the rest: the OpenAPI tags and the app's description,
the paths under which an unknown path is the API's 404 rather than the web UI, and the paths
no mount may take.

Streamed bodies skip those layers: they only look at a response's start (its status and
headers), so once a stream has started, its chunks go straight to the server's ``send``,
which the app keeps in the scope (:data:`~agentstream.server.sse.SERVER_SEND`). A stream's
per-delta cost is then the same however many layers the app has. Middleware an application
wraps *around* the app (compression, say) still sees every chunk.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, FastAPI
from fastapi.telemetry import TelemetryConfig
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentstream.agent import Agent
from agentstream.chat import ChatHooks
from agentstream.errors import ConfigurationError
from agentstream.origins import LOOPBACK_ORIGIN
from agentstream.providers.registry import ModelRegistry
from agentstream.runs import (
    HistoryReading,
    LocalBroker,
    RedisBroker,
    RunBroker,
    RunHooks,
    Runner,
    model_titles,
)
from agentstream.runs.limits import Limiter, Limits, LocalLimiter
from agentstream.runs.store import (
    ConversationReader,
    ConversationStore,
    ObservedCommits,
    SharedTurns,
    UsageReader,
)
from agentstream.server import client_config, health, runs, web
from agentstream.server.attachments import (
    ATTACHMENTS_PATH,
    SWEEP_TASK,
    attachments_router,
    sweep_forever,
)
from agentstream.server.auth import authenticator_from_settings
from agentstream.server.config import ServerConfig
from agentstream.server.dialects import BUILT_IN, Dialect
from agentstream.server.dialects.declaration import registry, under
from agentstream.server.direct import DirectRoute, DirectRoutes
from agentstream.server.drain import draining_on_sigterm
from agentstream.server.errors import document_errors, install_error_handlers
from agentstream.server.intake import Intake
from agentstream.server.metrics import METRICS_PATH
from agentstream.server.models import ModelCatalog
from agentstream.server.reference import description, openapi_tags
from agentstream.server.settings import Settings
from agentstream.server.sse import SERVER_SEND
from agentstream.server.state import ServerContext
from agentstream.server.usage import usage_router
from agentstream.store.attachments import SqlAttachments
from agentstream.telemetry import telemetry

if TYPE_CHECKING:
    from agentstream.telemetry.metrics import Metrics

__all__ = ["API_PREFIX", "create_app", "reserved_prefixes"]


API_PREFIX = "/api"
"""Where the server's own REST API lives (conversations, runs, the chat UI's configuration),
beside the dialects' paths."""


def create_app(
    agent: Agent,
    *,
    settings: Settings | None = None,
    store: ConversationStore | None = None,
    database_url: str | None = None,
    hooks: RunHooks | None = None,
    server: ServerConfig | None = None,
    static_dir: Path | None = None,
    models: ModelRegistry | None = None,
    broker: RunBroker | None = None,
    dialects: Sequence[Dialect] = BUILT_IN,
) -> FastAPI:
    """The HTTP app serving ``agent``. ``settings`` default to the environment
    (:meth:`Settings.from_env`); ``store`` persists conversations (none: each run stands
    alone); ``database_url`` instead stores them in that database
    (:class:`~agentstream.store.SqlConversationStore`), which the app opens when it starts
    (SQLite is migrated; PostgreSQL must be at the current revision, ``agentstream db
    upgrade``) and closes when it stops; ``hooks`` shape prompts and answers (default
    ``ChatHooks()``, as ``agentstream serve``: :mod:`agentstream.chat`); ``server`` is what the
    application adds to the server (:class:`~agentstream.server.config.ServerConfig`: its
    mounted apps, its own authenticator instead of the one the settings describe, its
    sign-in page); ``static_dir`` holds the built web UI (default
    ``agentstream/server/static``); ``models`` lists the other models clients may pick
    (default: :class:`ModelRegistry` from the environment); ``broker`` shares runs between
    workers (default: Redis when ``AGENTSTREAM_REDIS_URL`` is set, else this process only);
    ``dialects`` are the wire protocols served (default: all built-in; a deployment may serve
    a subset, or add its own :class:`~agentstream.server.dialects.Dialect`). Raises
    :class:`~agentstream.errors.ConfigurationError` for a dialect whose routes leave its
    declared prefixes and for a mount that would take a path of the server's.

    ``agentstream serve`` builds this app; build it yourself to mount it in a larger
    application or to run it under another ASGI server (``uvicorn myapp:app``)::

        app = create_app(agent, database_url="sqlite:///data/chat.db", hooks=ChatHooks(chat))
    """
    settings = settings or Settings.from_env()
    owned = None
    if database_url is not None:
        if store is not None:
            raise ConfigurationError("create_app takes a store or a database_url, not both")
        from agentstream.store import SqlConversationStore, create_engine

        owned = SqlConversationStore(create_engine(database_url))
        store = owned
    hooks = hooks if hooks is not None else ChatHooks()
    server = server or ServerConfig()
    settings.check()
    agent.profiles = agent.profiles.with_file(settings.config_file)
    served = registry(tuple(dialects))
    if broker is None:
        broker = (
            RedisBroker(
                settings.redis_url,
                prefix=settings.redis_prefix,
                lease=settings.run_lease_seconds,
                takeover=settings.run_takeover,
            )
            if settings.redis_url
            # Without Redis, processes sharing the database take turns through it.
            else LocalBroker(turns=store if isinstance(store, SharedTurns) else None)
        )
    titles = model_titles(agent) if settings.model_titles and store is not None else None
    observed = telemetry(
        metrics=settings.metrics_on,
        tracing=settings.tracing,
        tracer_provider=server.tracer_provider,
    )
    if observed is not None and observed.metrics is not None:
        _observe_parts(observed.metrics, store, broker)
    attachments = _attachments(store, settings)
    intake = (
        Intake(attachments, settings.data_dir / "attachments" / "staging", settings.attachments)
        if attachments is not None
        else None
    )
    runner = Runner(
        agent,
        store=store,
        hooks=hooks,
        broker=broker,
        titles=titles,
        observers=observed.observers if observed is not None else (),
        limiter=_limiter(settings, server.limits),
        attachments=intake,
        attachment_limits=settings.attachments,
        double_texting=settings.double_texting,
        reading=HistoryReading(default_window=settings.default_context_window),
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            if owned is not None:
                await owned.prepare()
            await runner.start()
            sweep = (
                asyncio.create_task(
                    sweep_forever(attachments, settings.attachments), name=SWEEP_TASK
                )
                if attachments is not None
                else None
            )
            try:
                async with draining_on_sigterm(context, settings.drain_seconds):
                    yield
            finally:
                if sweep is not None:
                    sweep.cancel()
                    await asyncio.gather(sweep, return_exceptions=True)
                await runner.aclose()
        finally:
            if owned is not None:
                await owned.close()
            if observed is not None:
                observed.close()  # the spans still batched are sent

    context = ServerContext(
        runner=runner,
        settings=settings,
        authenticator=server.authenticator or authenticator_from_settings(settings),
        models=ModelCatalog(agent, models),
        tracing=observed.tracing if observed is not None else None,
        metrics=observed.metrics if observed is not None else None,
        intake=intake,
    )
    app = _App(
        telemetry=FASTAPI_TELEMETRY_OFF,
        title="agentstream",
        summary=description(served.values()),
        version="0.1.0",
        openapi_tags=openapi_tags(served.values()),
        lifespan=lifespan,
    )
    app.state.server = context
    install_error_handlers(app, sign_in_url=server.sign_in_url)
    document_errors(app)
    dialect_routers = [_routes(dialect, context) for dialect in served.values()]
    for dialect_router in dialect_routers:
        app.include_router(dialect_router)
    app.serve_directly(
        route
        for router in dialect_routers
        for route in router.routes
        if isinstance(route, DirectRoute)
    )
    app.include_router(runs.router(context, served))
    if isinstance(store, ConversationReader):
        from agentstream.server.conversations import conversations_router

        principal = context.principal(allow_cookie=True)
        app.include_router(conversations_router(store, principal, context.runner.begin))
        views = _views_router(agent, store, principal)
        if views is not None:
            app.include_router(views)
    if isinstance(store, UsageReader):
        app.include_router(usage_router(store, context))
    if context.intake is not None:
        app.include_router(attachments_router(context.intake, context))
    app.include_router(client_config.router(context))
    app.include_router(health.router(context))
    metrics = context.metrics
    if metrics is not None and settings.metrics_port is None:
        from agentstream.server.metrics import metrics_router

        app.include_router(metrics_router(context, metrics))
    _check_paths(app, reserved_prefixes(served.values(), app), server.mounts)
    for prefix, mounted in server.mounts.items():
        app.mount(prefix, mounted)
    # /metrics is the API's even when it is not served: a scraper gets a 404, not the web UI.
    api_prefixes = (
        API_PREFIX,
        METRICS_PATH,
        *health.PATHS,
        *(p for d in served.values() for p in d.prefixes),
    )
    app.include_router(web.router(static_dir or web.STATIC_DIR, api_prefixes))
    app.add_middleware(
        BodyLimit,
        limit=settings.max_body_bytes,
        own_limits=(ATTACHMENTS_PATH,) if attachments is not None else (),
    )
    if observed is not None:
        from agentstream.telemetry.http import ObservedRequests

        app.add_middleware(ObservedRequests, tracing=context.tracing, metrics=metrics)
    if not settings.cors_origins and settings.anonymous:
        # Local development: a dev server on another loopback port (Vite on :5173, Next on
        # :3000) may call the API; no other origin can, and authenticated deployments name
        # their origins.
        app.add_middleware(
            CORSMiddleware,
            allow_origin_regex=LOOPBACK_ORIGIN,
            allow_methods=["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
            allow_headers=["Authorization", "Content-Type", "Accept", "Last-Event-ID"],
            allow_credentials=True,
            expose_headers=["X-Run-Id", "Retry-After"],
            max_age=600,
        )
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
            allow_headers=["Authorization", "Content-Type", "Accept", "Last-Event-ID"],
            # Credentials (the session cookie) only for origins named one by one: with "*"
            # Starlette would echo *any* origin with credentials allowed, letting every web
            # page read the conversations of a visitor who is signed in. Bearer tokens, which
            # the workflow assistant's cross-origin callers send, need no credentials mode.
            allow_credentials="*" not in settings.cors_origins,
            expose_headers=["X-Run-Id", "Retry-After"],
            max_age=600,
        )
    return app


FASTAPI_TELEMETRY_OFF: TelemetryConfig = {
    "tracing": False,
    "metrics": False,
    "logs": False,
    "operation_spans": False,
}
"""FastAPI's own OpenTelemetry support stays off: the request's span is ours when traces are
on (see :mod:`agentstream.telemetry.http`), and nothing is paid when they are off."""


def _limiter(settings: Settings, given: Limits | None) -> Limiter | None:
    """The limits of users and tenants: ``given`` in code, else the configuration file's,
    with each user's from the environment over them; counted in Redis when the workers
    share one (``None``: no limit is set)."""
    limits = given if given is not None else Limits().with_file(settings.config_file)
    limits = replace(limits, user=limits.user.over(settings.limits.user))
    if not limits.active:
        return None
    if settings.redis_url:
        from agentstream.runs.redis_limits import RedisLimiter

        return RedisLimiter(limits, settings.redis_url, prefix=settings.redis_prefix)
    return LocalLimiter(limits)


def _attachments(store: ConversationStore | None, settings: Settings) -> SqlAttachments | None:
    """Attachments beside a SQL store (metadata in its database; content as files under the
    data directory, in the database as well, or in an S3-compatible bucket): none without
    one."""
    from agentstream.store import SqlConversationStore

    if not isinstance(store, SqlConversationStore):
        return None
    from agentstream.attachments.blobs import BlobStore, FileBlobs
    from agentstream.store.blobs import SqlBlobs

    storage = settings.attachment_storage
    blobs: BlobStore
    if storage == "database":
        blobs = SqlBlobs(store.engine)
    elif storage.lower().startswith("s3://"):
        from agentstream.attachments.object_store import ObjectBlobs

        blobs = ObjectBlobs.from_url(storage)
    else:
        blobs = FileBlobs(settings.data_dir / "attachments")
    return SqlAttachments(store.engine, blobs)


def _views_router(
    agent: Agent, store: ConversationStore | None, principal: Callable[..., Any]
) -> APIRouter | None:
    """What interactive views ask of the server (:mod:`agentstream.server.views`); their
    documents are kept in the store's database, so none without a SQL store."""
    from agentstream.store import SqlConversationStore

    if not isinstance(store, SqlConversationStore):
        return None
    from agentstream.server.views import views_router
    from agentstream.store.view_resources import SqlViewResources

    return views_router(agent, SqlViewResources(store.engine), principal)


def _observe_parts(metrics: Metrics, store: ConversationStore | None, broker: RunBroker) -> None:
    """The figures that are not a run's events: the store's commits, Redis answering."""
    if isinstance(store, ObservedCommits):
        store.observe_commits(metrics.committed)
    if isinstance(broker, RedisBroker):
        broker.on_availability = metrics.redis


def _routes(dialect: Dialect, context: ServerContext) -> APIRouter:
    """The dialect's router, once its routes are checked against the prefixes it declares."""
    router = dialect.routes(context)
    for route in router.routes:
        path = getattr(route, "path", "")
        if not dialect.owns(path):
            raise ConfigurationError(
                f"the {dialect.name!r} dialect serves {path}, outside its declared prefixes "
                f"{list(dialect.prefixes)}"
            )
    return router


def reserved_prefixes(dialects: Iterable[Dialect], app: FastAPI) -> tuple[str, ...]:
    """The paths the server keeps for itself, which no mount may take: its own API, its
    metrics, its health probes, each dialect's prefixes, the OpenAPI document and its
    viewers, and the web UI's files."""
    documents = (app.openapi_url, app.docs_url, app.redoc_url)
    return (
        API_PREFIX,
        METRICS_PATH,
        *health.PATHS,
        *(prefix for dialect in dialects for prefix in dialect.prefixes),
        *(path for path in documents if path),
        *web.FILE_PREFIXES,
    )


def _check_paths(app: FastAPI, reserved: Sequence[str], mounts: Mapping[str, object]) -> None:
    """Every route of the server lies under a reserved prefix, so a mount that takes none of
    them collides with no route (a mount there would answer the methods a route does not,
    and hide it); and no mount takes another's paths."""
    for path in (getattr(route, "path", "") for route in app.routes):
        if path and not any(under(path, prefix) for prefix in reserved):
            raise ConfigurationError(f"the route {path} lies outside the server's prefixes")
    for prefix in mounts:
        taken = [r for r in reserved if under(prefix, r) or under(r, prefix)]
        if taken:
            raise ConfigurationError(
                f"mount prefix {prefix!r} would shadow the server's own routes "
                f"(under {', '.join(taken)})"
            )
        overlapping = [m for m in mounts if m != prefix and (under(prefix, m) or under(m, prefix))]
        if overlapping:
            raise ConfigurationError(
                f"mount prefix {prefix!r} overlaps another mount ({', '.join(overlapping)})"
            )


class _App(FastAPI):
    """FastAPI, keeping the server's own ``send`` in each HTTP scope for streamed bodies, and
    serving the dialects' stream endpoints directly (see :mod:`agentstream.server.direct`)."""

    def serve_directly(self, routes: Iterable[DirectRoute]) -> None:
        """Put ``routes`` in front of the router (inside every middleware and exception
        handler, as a route is)."""
        stack = DirectRoutes(self.router.middleware_stack, routes, self.dependency_overrides)
        self.router.middleware_stack = stack

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope[SERVER_SEND] = send
        await super().__call__(scope, receive, send)


class BodyLimit:
    """413 for request bodies over ``limit`` bytes: declared (``Content-Length``) or actual
    (a chunked body is counted as it is read, so a lying client is stopped too). The paths
    in ``own_limits`` enforce limits of their own (uploads, streamed to disk as they
    arrive)."""

    def __init__(self, app: ASGIApp, limit: int, own_limits: Collection[str] = ()) -> None:
        self.app = app
        self.limit = limit
        self.own_limits = frozenset(own_limits)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.own_limits:
            await self.app(scope, receive, send)
            return
        limit = self.limit
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > limit:
                    await _too_large(send, limit)
                    return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise HTTPException(413, f"Request body too large (limit {limit} bytes)")
            return message

        await self.app(scope, limited, send)


async def _too_large(send: Send, limit: int) -> None:
    body = f'{{"detail":"Request body too large (limit {limit} bytes)"}}'.encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
