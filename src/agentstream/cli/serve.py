"""``agentstream serve [module:agent] [--chat module:config] [--server module:config]``: every
dialect, the conversations API and the web UI.

With no agent it serves the built-in offline demo. Conversations are stored in the database
``AGENTSTREAM_DATABASE_URL`` names unless ``--no-store``; by default a SQLite file of the
application's own under ``./data`` (``data/myapp.agent.db`` for ``myapp:agent``,
``data/agentstream.db`` for the demo), so two applications served from one directory never
list each other's conversations. The chat semantics (prompt sections, payloads, suggestions,
server actions) come from ``--chat``: a :class:`~agentstream.chat.ChatConfig`, or any
:class:`~agentstream.runs.RunHooks`; without it the defaults of ``ChatHooks()`` apply. What the
application adds to the server (its own mounted apps, sessions and sign-in page) comes from
``--server``: a :class:`~agentstream.server.config.ServerConfig`.

Metrics (``AGENTSTREAM_METRICS=on``) are every worker's with ``--workers N``: the command
makes a private directory for the Prometheus client's multiprocess mode, names it to the
workers, marks the workers that die and removes it when it stops
(:mod:`agentstream.telemetry.multiprocess`). With ``AGENTSTREAM_METRICS_PORT`` they are served
on that port of the server's host by the command itself (the supervisor, with workers)
rather than at ``/metrics``.

``SIGTERM`` drains a worker before it stops: it refuses new runs and lets its runs end
(:mod:`agentstream.server.drain`). With ``--workers N`` the command passes it on to every
worker, restarts a worker that was sent it on its own once it has exited, and on ``SIGHUP``
replaces its workers one at a time (uvicorn's supervisor does all three).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import socket
from collections.abc import Callable, Iterator
from typing import Any

from agentstream.agent import Agent
from agentstream.cli.loading import AgentLoadError, app_name, load_agent, load_hooks, load_server
from agentstream.providers.registry import missing_key
from agentstream.runs import RunHooks
from agentstream.server.config import ServerConfig
from agentstream.server.process import tune_gc
from agentstream.server.settings import Settings, SettingsError
from agentstream.store import SqlConversationStore, resolve_database_url
from agentstream.store.engine import safe_url

__all__ = ["configure", "run"]

log = logging.getLogger("agentstream.serve")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "agent", nargs="?", metavar="MODULE:AGENT", help="your agent (default: the offline demo)"
    )
    parser.add_argument(
        "--chat",
        metavar="MODULE:CONFIG",
        help="a ChatConfig (pages, payload types, server actions...) or RunHooks",
    )
    parser.add_argument(
        "--server",
        metavar="MODULE:CONFIG",
        help="a ServerConfig (mounted apps, the application's sessions, its sign-in page)",
    )
    parser.add_argument("--host", help="address to bind (default $AGENTSTREAM_HOST or 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, help="port (default $AGENTSTREAM_PORT or 8000; 0 for any free one)"
    )
    parser.add_argument(
        "--no-store", action="store_true", help="do not persist conversations (no database)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="processes serving the same port (needs AGENTSTREAM_REDIS_URL to share runs)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        agent = load_agent(args.agent)
        hooks = load_hooks(args.chat, demo=args.agent is None)
        server = load_server(getattr(args, "server", None))
    except AgentLoadError as exc:
        log.error("%s", exc)
        return 2
    overrides: dict[str, Any] = {}
    if args.host:
        overrides["host"] = args.host
    if args.port is not None:
        overrides["port"] = args.port
    try:
        settings = Settings.from_env(**overrides)
        settings.check()
    except SettingsError as exc:
        log.error("%s", exc)
        return 2
    _warn_of_a_missing_key(agent)
    workers = getattr(args, "workers", 1)
    if workers > 1:
        return _serve_workers(args, settings, workers)
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        url = None if args.no_store else resolve_database_url(app=app_name(args.agent))
        return runner.run(_serve(agent, hooks, server, settings, database_url=url))


WORKER_START_SECONDS = 60
"""How long a worker of ``--workers N`` may take to start (and, once started, to answer its
supervisor's health check)."""

_WORKER_ENV = "AGENTSTREAM_SERVE_WORKER"
"""What each worker process serves (agent, chat config, store), set by the parent."""


def _serve_workers(args: argparse.Namespace, settings: Settings, workers: int) -> int:
    """``workers`` processes on one listening socket, each with its own runner; runs are
    shared through Redis, so any worker can follow or stop a run another one started."""
    import json
    import os

    import uvicorn

    if not settings.redis_url:
        log.error(
            "--workers %d needs AGENTSTREAM_REDIS_URL: a run lives in the process that started "
            "it, and its followers and stop requests may reach any other",
            workers,
        )
        return 2
    use_store = not args.no_store
    if use_store:
        url = resolve_database_url(app=app_name(args.agent))
        if url.startswith("sqlite"):
            log.warning("SQLite has one writer for all %d workers; use PostgreSQL", workers)

        async def migrate() -> None:
            # Once, here: each worker then opens the database without migrating it.
            store = await SqlConversationStore.open(url)
            await store.close()

        try:
            asyncio.run(migrate())
        except Exception as exc:
            log.error("the database is not ready: %s", exc)
            return 2
    try:
        listener = _listen(settings.host, settings.port)
    except OSError as exc:
        log.error("%s", exc)
        return 2
    os.environ[_WORKER_ENV] = json.dumps(
        {
            "agent": args.agent,
            "chat": args.chat,
            "server": getattr(args, "server", None),
            "store": use_store,
        }
    )
    port = listener.getsockname()[1]
    log.info("serving %d workers; open http://%s:%d", workers, _shown(settings.host), port)
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(_workers_metrics(settings))
        except OSError as exc:
            log.error("%s", exc)
            return 2
        uvicorn.run(
            "agentstream.cli.serve:worker_app",
            factory=True,
            fd=listener.fileno(),
            workers=workers,
            loop="auto",
            timeout_keep_alive=30,
            timeout_graceful_shutdown=10,
            # How long a new worker may take to start before a restart (SIGHUP) gives up on
            # it and keeps the old one: importing the app takes seconds, more on a loaded
            # host, and uvicorn's 5 s default would abort a rolling restart half-way.
            timeout_worker_healthcheck=WORKER_START_SECONDS,
            log_level="info",
        )
    return 0


@contextlib.contextmanager
def _workers_metrics(settings: Settings) -> Iterator[None]:
    """With metrics on, the workers started inside share a multiprocess directory, and the
    metrics port (if any) is served here, from every worker's files."""
    if not settings.metrics_on:
        yield
        return
    from agentstream.telemetry.multiprocess import shared_metrics

    with shared_metrics():
        if settings.metrics_port is not None:
            from agentstream.telemetry.metrics import shared_registry

            _serve_metrics(settings, shared_registry())
        yield


def _serve_metrics(settings: Settings, registry: Any) -> None:
    """Metrics on ``AGENTSTREAM_METRICS_PORT`` of the server's host, from a thread."""
    from prometheus_client import start_http_server

    port = settings.metrics_port
    assert port is not None
    try:
        start_http_server(port, addr=settings.host, registry=registry)
    except OSError as exc:
        raise OSError(
            f"cannot serve metrics on {settings.host}:{port} (AGENTSTREAM_METRICS_PORT): "
            f"{exc.strerror or exc}"
        ) from None
    log.info("metrics on http://%s:%d/metrics", _shown(settings.host), port)


def worker_app() -> Any:
    """The app of one worker process of ``agentstream serve --workers N``."""
    import json
    import os

    from agentstream.server.app import create_app

    spec = json.loads(os.environ[_WORKER_ENV])
    agent = load_agent(spec["agent"])
    hooks = load_hooks(spec["chat"], demo=spec["agent"] is None)
    server = load_server(spec["server"])
    url = resolve_database_url(app=app_name(spec["agent"])) if spec["store"] else None
    app = create_app(
        agent, settings=Settings.from_env(), database_url=url, hooks=hooks, server=server
    )
    tune_gc()
    return app


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop when installed (``uvicorn[standard]`` brings it), as ``uvicorn`` would choose;
    the server is started inside our own loop, so the choice is made here."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def _warn_of_a_missing_key(agent: Agent) -> None:
    """Warn (the server still starts: the demo and other models may be used) when the
    model's provider needs a key the environment lacks. The model id itself was checked when
    the agent was loaded."""
    if agent.model is not None and not isinstance(agent.model, str):
        return  # a ready provider: configured in code
    problem = missing_key(agent.model_id)
    if problem is not None:
        log.warning("%s (requests to %s will fail until it is set)", problem, agent.model_id)


async def _serve(
    agent: Agent,
    hooks: RunHooks,
    server: ServerConfig | None,
    settings: Settings,
    *,
    database_url: str | None,
) -> int:
    import uvicorn

    from agentstream.server.app import create_app

    try:
        listener = _listen(settings.host, settings.port)
    except OSError as exc:
        log.error("%s", exc)
        return 2
    # The app opens the database when it starts (migrating SQLite) and closes it when it
    # stops, as it does for `uvicorn myapp:app`.
    app = create_app(
        agent, settings=settings, database_url=database_url, hooks=hooks, server=server
    )
    metrics = app.state.server.metrics
    if metrics is not None and settings.metrics_port is not None:
        try:
            _serve_metrics(settings, metrics.served())
        except OSError as exc:
            listener.close()
            log.error("%s", exc)
            return 2
    tune_gc()
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        timeout_keep_alive=30,
        log_level="info",
        # On SIGTERM the app drains first (agentstream.server.drain), and its streams have
        # ended when uvicorn's graceful shutdown starts; on Ctrl+C it waits this long.
        timeout_graceful_shutdown=10,
    )
    mode = "anonymous local mode" if settings.anonymous else "JWT authentication"
    loop = type(asyncio.get_running_loop()).__module__.split(".")[0]
    log.info("serving agent %r (%s) with %s on %s", agent.name, agent.model_id, mode, loop)
    if database_url is not None:
        log.info("conversations are stored in %s", safe_url(database_url))
    # The port bound, which `--port 0` leaves to the system (a free one, told here).
    port = listener.getsockname()[1]
    log.info("open http://%s:%d in a browser (Ctrl+C to stop)", _shown(settings.host), port)
    serving = uvicorn.Server(config)
    await serving.serve(sockets=[listener])
    return 0 if serving.started else 2  # uvicorn has logged why the app could not start


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before anything starts, so a busy port is one clear line
    (not a traceback after "Application startup complete")."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise OSError(
                f"port {port} on {host} is already in use; "
                f"choose another with --port {port + 1} (or AGENTSTREAM_PORT)"
            ) from None
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock
