"""A PostgreSQL database of a benchmark's own: created, migrated, dropped afterwards, on the
server ``AGENTSTREAM_BENCH_POSTGRES_URL`` names (a role that may create databases)."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg  # type: ignore[import-untyped]
from sqlalchemy.engine import make_url

from agentstream.store import upgrade

PG_ADMIN = os.environ.get(
    "AGENTSTREAM_BENCH_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
)


class Unreachable(Exception):
    """PostgreSQL cannot be reached: the benchmark reports it as skipped."""


@asynccontextmanager
async def bench_database(admin: str = PG_ADMIN) -> AsyncIterator[str]:
    """The URL of a new, migrated database, dropped when the block ends."""
    name = f"agentstream_bench_{uuid.uuid4().hex[:12]}"
    dsn = make_url(admin).set(drivername="postgresql").render_as_string(hide_password=False)
    try:
        conn = await asyncpg.connect(dsn, timeout=5)
    except (OSError, asyncpg.PostgresError) as exc:
        raise Unreachable(str(exc)) from None
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
        try:
            url = make_url(admin).set(database=name).render_as_string(hide_password=False)
            await upgrade(url)
            yield url
        finally:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()
