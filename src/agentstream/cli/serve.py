"""``agentstream serve [module:agent]``: every dialect, the conversations API and the web UI.

With no agent it serves the built-in offline demo. The conversation store is opened from the
environment (``AGENTSTREAM_DATABASE_URL``, default a SQLite file under ``./data``) unless
``--no-store``; the chat hooks (prompt sections, payloads, suggestions) come from
``agentstream.chat`` when it provides them. Both are optional so the server still starts in a
tree where either package is missing or broken; what was wired is logged at start-up.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from agentstream.agent import Agent
from agentstream.cli.loading import AgentLoadError, load_agent
from agentstream.runs import RunHooks
from agentstream.runs.store import ConversationStore

__all__ = ["configure", "load_hooks", "open_store", "run"]

log = logging.getLogger("agentstream.serve")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "agent", nargs="?", metavar="MODULE:AGENT", help="your agent (default: the offline demo)"
    )
    parser.add_argument("--host", help="address to bind (default $AGENTSTREAM_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (default $AGENTSTREAM_PORT or 8000)")
    parser.add_argument(
        "--no-store", action="store_true", help="do not persist conversations (no database)"
    )


def run(args: argparse.Namespace) -> int:
    from agentstream.server.settings import Settings, SettingsError

    try:
        agent = load_agent(args.agent)
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
    return asyncio.run(_serve(agent, settings, use_store=not args.no_store))


async def _serve(agent: Agent, settings: Any, *, use_store: bool) -> int:
    import uvicorn

    from agentstream.server.app import create_app

    async with _store(use_store) as store:
        app = create_app(agent, settings=settings, store=store, hooks=load_hooks())
        config = uvicorn.Config(
            app,
            host=settings.host,
            port=settings.port,
            timeout_keep_alive=30,
            log_level="info",
            # Streams end when the run ends; a graceful shutdown waits this long for them.
            timeout_graceful_shutdown=10,
        )
        mode = "anonymous local mode" if settings.anonymous else "JWT authentication"
        log.info("serving agent %r (%s) with %s", agent.name, agent.model_id, mode)
        await uvicorn.Server(config).serve()
    return 0


@asynccontextmanager
async def _store(enabled: bool) -> AsyncIterator[ConversationStore | None]:
    store = await open_store() if enabled else None
    try:
        yield store
    finally:
        close = getattr(store, "close", None)
        if close is not None:
            await close()


async def open_store() -> ConversationStore | None:
    """The SQL store from the environment, or None (logged) when it cannot be opened."""
    try:
        from agentstream.store import SqlConversationStore, resolve_database_url
        from agentstream.store.engine import safe_url
    except ImportError as exc:
        log.warning("conversation store unavailable (%s); runs will not be saved", exc)
        return None
    try:
        store = await SqlConversationStore.open()
    except Exception as exc:
        log.error("could not open the conversation store: %s", exc)
        raise
    log.info("conversations are stored in %s", safe_url(resolve_database_url()))
    return store


def load_hooks() -> RunHooks | None:
    """``agentstream.chat``'s run hooks when that package provides them.

    Looks for a ``ChatHooks`` class (or a ``default_hooks()`` factory); otherwise the runner's
    default hooks apply (no prompt sections, no suggestions).
    """
    try:
        chat = importlib.import_module("agentstream.chat")
    except ImportError as exc:  # pragma: no cover - the package ships with agentstream
        log.warning("chat hooks unavailable (%s)", exc)
        return None
    factory = getattr(chat, "default_hooks", None) or getattr(chat, "ChatHooks", None)
    if factory is None:
        log.info("agentstream.chat provides no run hooks; using the defaults")
        return None
    hooks: RunHooks = factory()
    log.info("chat hooks: %s", type(hooks).__name__)
    return hooks
