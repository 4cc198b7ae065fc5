"""``create_app(agent)``: every dialect, the conversations API and the web UI on one FastAPI app.

Layers, outermost first: CORS (when origins are configured), the body limit (413 on a
``Content-Length`` over the limit, or on a streamed body that grows past it), FastAPI's
exception handling (our JSON error shapes, see :mod:`agentstream.server.errors`), then the
routes: the dialects it is given (default: all six), ``/api/conversations`` when a store is
configured, ``/api/chat/config`` for the web UI, the application's own mounted apps
(``ChatConfig.mounts``), and the web UI last so API routes always win.

Streamed bodies skip those layers: they only look at a response's start (its status and
headers), so once a stream has started, its chunks go straight to the server's ``send``,
which the app keeps in the scope (:data:`~agentstream.server.sse.SERVER_SEND`). A stream's
per-delta cost is then the same however many layers the app has. Middleware an application
wraps *around* the app (compression, say) still sees every chunk.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentstream.agent import Agent
from agentstream.chat import ChatHooks
from agentstream.errors import ConfigurationError
from agentstream.providers.registry import ModelRegistry
from agentstream.runs import (
    LocalBroker,
    RedisBroker,
    RunBroker,
    RunHooks,
    Runner,
    model_titles,
)
from agentstream.runs.store import ConversationStore
from agentstream.server import client_config, runs, web
from agentstream.server.auth import Authenticator, authenticator_from_settings
from agentstream.server.dialects import BUILT_IN, Dialect
from agentstream.server.dialects.declaration import registry
from agentstream.server.direct import DirectRoute, DirectRoutes
from agentstream.server.errors import document_errors, install_error_handlers
from agentstream.server.models import ModelCatalog
from agentstream.server.reference import OPENAPI_TAGS
from agentstream.server.settings import Settings
from agentstream.server.sse import SERVER_SEND
from agentstream.server.state import ServerContext

__all__ = ["create_app"]

LOOPBACK_ORIGIN = r"https?://(localhost|127\.0\.0\.1|\[::1\])(:\d+)?"
"""Origins of pages served from this machine."""


def create_app(
    agent: Agent,
    *,
    settings: Settings | None = None,
    store: ConversationStore | None = None,
    database_url: str | None = None,
    hooks: RunHooks | None = None,
    authenticator: Authenticator | None = None,
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
    ``ChatHooks()``, as ``agentstream serve``: :mod:`agentstream.chat`); ``authenticator``
    replaces the one the settings describe; ``static_dir`` holds the built web UI (default
    ``agentstream/server/static``); ``models`` lists the other models clients may pick
    (default: :class:`ModelRegistry` from the environment); ``broker`` shares runs between
    workers (default: Redis when ``AGENTSTREAM_REDIS_URL`` is set, else this process only);
    ``dialects`` are the wire protocols served (default: all built-in; a deployment may serve
    a subset, or add its own :class:`~agentstream.server.dialects.Dialect`).
    When ``hooks`` are :class:`~agentstream.chat.ChatHooks`, their configuration's ``mounts``
    are served and its ``authenticator`` is used unless one is given here.

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
    config = client_config.chat_config_of(hooks)
    if authenticator is None and config is not None:
        authenticator = config.authenticator
    settings.check()
    agent.profiles = agent.profiles.with_file(settings.config_file)
    served = registry(tuple(dialects))
    if broker is None:
        broker = RedisBroker(settings.redis_url) if settings.redis_url else LocalBroker()
    titles = model_titles(agent) if settings.model_titles and store is not None else None
    runner = Runner(agent, store=store, hooks=hooks, broker=broker, titles=titles)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            if owned is not None:
                await owned.prepare()
            await runner.start()
            try:
                yield
            finally:
                await runner.aclose()
        finally:
            if owned is not None:
                await owned.close()

    server = ServerContext(
        runner=runner,
        settings=settings,
        authenticator=authenticator or authenticator_from_settings(settings),
        models=ModelCatalog(agent, models),
    )
    app = _App(
        title="agentstream",
        summary=(
            "Stream a tool-using agent to chat UIs, in the dialects of the workflow assistant, "
            "data playground, chat tray and ops agent protocols."
        ),
        version="0.1.0",
        openapi_tags=OPENAPI_TAGS,
        lifespan=lifespan,
    )
    app.state.server = server
    install_error_handlers(app, sign_in_url=config.sign_in_url if config is not None else None)
    document_errors(app)
    dialect_routers = [dialect.routes(server) for dialect in served.values()]
    for dialect_router in dialect_routers:
        app.include_router(dialect_router)
    app.serve_directly(
        route
        for router in dialect_routers
        for route in router.routes
        if isinstance(route, DirectRoute)
    )
    app.include_router(runs.router(server, served))
    if store is not None and hasattr(store, "list_conversations"):
        from agentstream.server.conversations import conversations_router

        principal = server.principal(allow_cookie=True)
        app.include_router(conversations_router(store, principal))  # type: ignore[arg-type]
    app.include_router(client_config.router(server))
    for prefix, mounted in (config.mounts if config is not None else {}).items():
        app.mount(prefix, mounted)
    app.include_router(web.router(static_dir or web.STATIC_DIR))
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
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
            expose_headers=["X-Run-Id"],
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
            expose_headers=["X-Run-Id"],
            max_age=600,
        )
    return app


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
    (a chunked body is counted as it is read, so a lying client is stopped too)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
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
