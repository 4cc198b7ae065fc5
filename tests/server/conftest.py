"""A real uvicorn on a loopback port for every server test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agentstream import Agent
from agentstream.providers.registry import ModelRegistry
from agentstream.server.app import create_app
from agentstream.server.settings import Settings
from tests.server.helpers import SECRET, LiveServer

Serve = Callable[..., LiveServer]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """``serve(agent, **settings)`` starts the app for ``agent`` and returns the live server.
    ``store=``/``hooks=``/``broker=``/``dialects=``/``server=`` go to ``create_app``; other keywords are :class:`Settings` fields.
    ``auth=True`` configures HS256 with the test secret."""
    started: list[LiveServer] = []

    def start(
        agent: Agent,
        *,
        store: Any = None,
        hooks: Any = None,
        auth: bool = False,
        models: Any = None,
        broker: Any = None,
        dialects: Any = None,
        server: Any = None,
        **overrides: Any,
    ) -> LiveServer:
        values: dict[str, Any] = {"host": "127.0.0.1", "heartbeat_seconds": 15.0}
        if auth:
            values["jwt_secret"] = SECRET
        values.update(overrides)
        registry = models if models is not None else ModelRegistry([], discover=False)
        app = create_app(
            agent,
            settings=Settings(**values),
            store=store,
            hooks=hooks,
            models=registry,
            broker=broker,
            server=server,
            **({"dialects": dialects} if dialects is not None else {}),
        )
        live = LiveServer(app).start()
        started.append(live)
        return live

    yield start
    for server in started:
        server.stop()
