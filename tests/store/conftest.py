"""Fixtures for the store tests: every store test runs on SQLite and on PostgreSQL.

SQLite: a fresh file per test under pytest's tmp_path, migrated by ``SqlConversationStore.open``.
PostgreSQL (127.0.0.1:5432, user postgres, or ``AGENTSTREAM_TEST_POSTGRES_URL``): one fresh
database ``agentstream_test_<random>`` per session, migrated once with
:func:`agentstream.store.upgrade`, dropped at the end. Tests on PostgreSQL share it and stay
apart by using their own principals (random user and tenant ids).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
import pytest
from sqlalchemy.engine import make_url

from agentstream.principal import Principal
from agentstream.store import SqlConversationStore, upgrade

from .helpers import new_principal

ADMIN_URL = os.environ.get(
    "AGENTSTREAM_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
)


def _asyncpg_dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _create_database(name: str) -> None:
    conn = await asyncpg.connect(_asyncpg_dsn(ADMIN_URL), timeout=5)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()


async def _drop_database(name: str) -> None:
    conn = await asyncpg.connect(_asyncpg_dsn(ADMIN_URL), timeout=5)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


@contextmanager
def fresh_postgres() -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped afterwards (the test is skipped
    when PostgreSQL cannot be reached)."""
    name = f"agentstream_test_{uuid.uuid4().hex[:12]}"
    try:
        asyncio.run(_create_database(name))
    except (OSError, asyncpg.PostgresError) as exc:
        pytest.skip(f"PostgreSQL is not reachable at {make_url(ADMIN_URL).host}: {exc}")
    try:
        yield make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(_drop_database(name))


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A migrated PostgreSQL database for this test session."""
    with fresh_postgres() as url:
        asyncio.run(upgrade(url))
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[SqlConversationStore]:
    opened = await SqlConversationStore.open(database_url)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
def alice() -> Principal:
    return new_principal()
