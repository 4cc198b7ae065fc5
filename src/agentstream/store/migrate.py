"""Apply the store's Alembic migrations from code, with no ``alembic.ini``.

The configuration points at the ``migrations`` directory inside this package and passes an
open connection to ``env.py`` (Alembic's connection-sharing recipe), so the same async engine
the server uses runs the migrations. On SQLite the migration holds the write lock
(``BEGIN IMMEDIATE``), so two processes starting at once apply it once, one after the other.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from agentstream.store.engine import create_engine, use_wal, writer

__all__ = ["alembic_config", "current_revision", "head_revision", "upgrade"]

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
VERSION_TABLE = "agentstream_alembic_version"


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str | None:
    """The newest migration this version ships; a database at it needs no ``db upgrade``."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


async def upgrade(target: AsyncEngine | str | None = None, revision: str = "head") -> None:
    """Bring the database at ``target`` (an engine, a URL, or the configured default) to
    ``revision``."""
    engine = target if isinstance(target, AsyncEngine) else create_engine(target)
    try:
        await use_wal(engine)
        async with writer(engine).begin() as conn:
            await conn.run_sync(_upgrade, revision)
    finally:
        if engine is not target:
            await engine.dispose()


def _upgrade(connection: Connection, revision: str) -> None:
    command.upgrade(alembic_config(connection), revision)


async def current_revision(target: AsyncEngine | str | None = None) -> str | None:
    """The revision the database is at, or None before the first upgrade."""
    engine = target if isinstance(target, AsyncEngine) else create_engine(target)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(_current)
    finally:
        if engine is not target:
            await engine.dispose()


def _current(connection: Connection) -> str | None:
    context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
    return context.get_current_revision()


def _main() -> None:
    """Development helper: ``python -m agentstream.store.migrate revision -m "message"``."""
    parser = argparse.ArgumentParser(prog="python -m agentstream.store.migrate")
    sub = parser.add_subparsers(dest="command", required=True)
    revision = sub.add_parser("revision", help="write an empty migration to fill in")
    revision.add_argument("-m", "--message", required=True)
    args = parser.parse_args()
    if args.command == "revision":
        command.revision(alembic_config(), message=args.message)


if __name__ == "__main__":
    _main()
