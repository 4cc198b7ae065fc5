"""Each example served the way ``agentstream serve examples.<name>.app:agent --chat
examples.<name>.app:chat --server examples.<name>.app:server`` serves it (its mounts and
authenticator included),
on a real uvicorn, with a SQLite conversation store and the example's data in a temporary
directory, on its offline scripted model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentstream import Agent
from agentstream.chat import ChatConfig, ChatHooks
from agentstream.providers.registry import ModelRegistry
from agentstream.server.app import create_app
from agentstream.server.config import ServerConfig
from agentstream.server.settings import Settings
from agentstream.store import SqlConversationStore, create_engine, upgrade
from tests.server.conftest import serve  # noqa: F401  (the workflow tests use it)
from tests.server.helpers import LiveServer

ServeExample = Callable[..., LiveServer]
Example = tuple[Agent, ChatConfig, ServerConfig]
"""What an example's ``build`` gives."""


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The examples' scripted models answer only when no real model is configured."""
    monkeypatch.delenv("AGENTSTREAM_MODEL", raising=False)
    monkeypatch.delenv("AGENTSTREAM_MODELS", raising=False)


@pytest.fixture
def serve_example(tmp_path: Path) -> Iterator[ServeExample]:
    """``serve_example(build, **settings)``: ``build(data_dir)`` gives the example's agent,
    chat configuration and server configuration; the live server is returned."""
    started: list[tuple[LiveServer, SqlConversationStore]] = []

    def start(build: Callable[[Path], Example], **overrides: Any) -> LiveServer:
        agent, chat, server = build(tmp_path / "example")
        store = SqlConversationStore(
            create_engine(f"sqlite+aiosqlite:///{tmp_path / 'conversations.db'}")
        )
        settings = Settings(**{"host": "127.0.0.1", "diagnostics": True, **overrides})
        app = create_app(
            agent,
            settings=settings,
            store=store,
            hooks=ChatHooks(chat),
            server=server,
            models=ModelRegistry([], discover=False),
        )
        server = LiveServer(app).start()
        server.call(upgrade(store.engine), timeout=60)
        started.append((server, store))
        return server

    yield start
    for server, store in started:
        server.call(store.close())
        server.stop()
