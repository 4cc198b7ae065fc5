"""Fixtures for the provider tests: one fake upstream server for the session, reset per test,
and the vendor fakes as a parameter."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from types import ModuleType
from typing import Any

import pytest

from agentstream.providers._retry import RetryPolicy

from .fakes import anthropic, google, ollama, openai, openai_responses
from .fakes.server import FakeUpstream

VENDORS: list[ModuleType] = [anthropic, openai, openai_responses, google, ollama]

FAST_RETRY = RetryPolicy(max_attempts=3, initial_delay=0.01, max_delay=0.02)


@pytest.fixture(scope="session")
def _server() -> Iterator[FakeUpstream]:
    server = FakeUpstream().start()
    yield server
    server.stop()


@pytest.fixture
def upstream(_server: FakeUpstream) -> Iterator[FakeUpstream]:
    _server.reset()
    yield _server
    _server.reset()


@pytest.fixture(params=VENDORS, ids=[v.name for v in VENDORS])
def vendor(request: pytest.FixtureRequest) -> ModuleType:
    module: ModuleType = request.param
    return module


@pytest.fixture(autouse=True)
def _no_vendor_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's real keys and endpoints must not leak into tests."""
    for var in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
        "OLLAMA_HOST",
        "OLLAMA_API_KEY",
        "AGENTSTREAM_MODEL",
        "AGENTSTREAM_MODELS",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
async def make(upstream: FakeUpstream, vendor: ModuleType) -> AsyncIterator[Any]:
    """``make(**kw)``: the vendor's provider pointed at the fake; closed after the test."""
    made: list[Any] = []

    def factory(**kw: Any) -> Any:
        provider = vendor.provider(upstream, **kw)
        made.append(provider)
        return provider

    yield factory
    for provider in made:
        await provider.aclose()
