"""Where the database is and how we connect to it.

``AGENTSTREAM_DATABASE_URL`` takes any SQLAlchemy async URL. Without it the store is a SQLite
file in ``AGENTSTREAM_DATA_DIR`` (default ``./data``), one per application, which is what one
process needs;
``postgresql+asyncpg://...`` is for many workers.

SQLite needs care to survive concurrent requests without "database is locked":

* WAL journal, so readers never block the writer and the writer never blocks readers;
* a generous busy timeout, so a writer waits for the lock instead of failing;
* write transactions start with ``BEGIN IMMEDIATE``. A deferred transaction that reads and then
  writes cannot wait for the lock in WAL mode (SQLite answers ``SQLITE_BUSY_SNAPSHOT`` at once
  because its snapshot is stale), so every transaction that will write takes the write lock
  up front. Read-only transactions stay deferred and run concurrently.

:func:`create_engine` returns the engine for reads; :func:`writer` derives the engine that
begins write transactions. On PostgreSQL both are the same and row locks do the ordering.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from pathlib import Path
from typing import Any

import aiosqlite
import sqlalchemy
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

__all__ = [
    "DATABASE_URL_ENV",
    "DATA_DIR_ENV",
    "create_engine",
    "is_sqlite",
    "resolve_database_url",
    "safe_url",
    "sqlite_file_writer",
    "use_wal",
    "writer",
]

DATABASE_URL_ENV = "AGENTSTREAM_DATABASE_URL"
DATA_DIR_ENV = "AGENTSTREAM_DATA_DIR"
SQLITE_FILE = "agentstream.db"
BUSY_TIMEOUT_S = 30.0
WAL_AUTOCHECKPOINT_PAGES = 10_000
"""Log pages after which a commit checkpoints the WAL itself (SQLite's default is 1,000): a
safety net, since the store's writer has a thread that checkpoints off the write path (see
:mod:`agentstream.store.checkpoints`)."""
_BEGIN_OPTION = "agentstream_sqlite_begin"


def resolve_database_url(
    url: str | None = None, env: dict[str, str] | None = None, *, app: str | None = None
) -> str:
    """The database URL to use: ``url`` if given, else the environment, else a SQLite file in
    the data directory: ``<app>.db`` for a named application (each application served by
    ``agentstream serve module:agent`` keeps its conversations apart from the others'),
    ``agentstream.db`` without one. A plain ``sqlite://`` or ``postgresql://`` URL gets the
    async driver."""
    environ = os.environ if env is None else env
    raw = url or environ.get(DATABASE_URL_ENV) or ""
    if not raw:
        data_dir = Path(environ.get(DATA_DIR_ENV) or "data")
        name = f"{app}.db" if app else SQLITE_FILE
        return f"sqlite+aiosqlite:///{(data_dir / name).as_posix()}"
    parsed = make_url(raw)
    if parsed.drivername == "sqlite":
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    elif parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+asyncpg")
    return parsed.render_as_string(hide_password=False)


def safe_url(url: str | URL) -> str:
    """The URL with its password masked, for logs and messages."""
    return make_url(url).render_as_string(hide_password=True)


def is_sqlite(url: str | URL) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def create_engine(url: str | None = None, **kwargs: Any) -> AsyncEngine:
    """An async engine for ``url`` (resolved with :func:`resolve_database_url`), with SQLite
    tuned for concurrency and its data directory created. Statement parameters are kept
    out of error messages and logs."""
    resolved = make_url(resolve_database_url(url))
    # A failed statement's message (logged, and raised to whoever handles it) would otherwise
    # quote its parameters: users' messages, tool results and whatever secrets they hold.
    kwargs.setdefault("hide_parameters", True)
    if resolved.get_backend_name() != "sqlite":
        kwargs.setdefault("pool_pre_ping", True)
        return create_async_engine(resolved, **kwargs)
    if resolved.database and resolved.database != ":memory:":
        Path(resolved.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    connect_args = dict(kwargs.pop("connect_args", {}))
    connect_args.setdefault("timeout", BUSY_TIMEOUT_S)
    engine = create_async_engine(resolved, connect_args=connect_args, **kwargs)
    _tune_sqlite(engine)
    return engine


def writer(engine: AsyncEngine) -> AsyncEngine:
    """The engine to use for transactions that write. Shares ``engine``'s pool."""
    if engine.dialect.name != "sqlite":
        return engine
    return engine.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})


async def use_wal(engine: AsyncEngine, attempts: int = 100) -> None:
    """Put a SQLite database file in WAL mode (it stays so: the mode is stored in the file).
    Retries while other connections hold the file, e.g. several workers opening a new
    database at once; SQLite does not wait for a journal-mode change by itself."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return
    for attempt in range(attempts):
        try:
            async with (
                aiosqlite.connect(database, timeout=BUSY_TIMEOUT_S) as conn,
                conn.execute("PRAGMA journal_mode=WAL") as cursor,
            ):
                row = await cursor.fetchone()
            if row is not None and str(row[0]).lower() == "wal":
                return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
        await asyncio.sleep(0.01 * min(attempt + 1, 10))
    raise sqlite3.OperationalError(f"could not switch {database} to WAL mode: it stays busy")


def sqlite_file_writer(engine: AsyncEngine) -> Engine | None:
    """For a SQLite file, a synchronous engine on the same file (stdlib driver, same tuning)
    that begins write transactions: the store's writer thread runs whole transactions on it.
    None for other databases and for in-memory SQLite (which another engine cannot share)."""
    url = engine.url
    if engine.dialect.name != "sqlite" or not url.database or url.database == ":memory:":
        return None
    sync_engine = sqlalchemy.create_engine(
        url.set(drivername="sqlite+pysqlite"),
        hide_parameters=True,
        connect_args={"timeout": BUSY_TIMEOUT_S},
    )
    _tune_sqlite(sync_engine)
    return sync_engine.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})


def _tune_sqlite(engine: AsyncEngine | Engine) -> None:
    sync_engine = engine.sync_engine if isinstance(engine, AsyncEngine) else engine

    @event.listens_for(sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take over BEGIN from the driver so we can choose DEFERRED or IMMEDIATE.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            cursor.execute("PRAGMA journal_mode")
            if str(cursor.fetchone()[0]).lower() != "wal":
                # Switching needs the file to itself and SQLite does not wait for that; if
                # another connection is busy, :func:`use_wal` (run on open) switches it.
                with contextlib.suppress(Exception):
                    cursor.execute("PRAGMA journal_mode=WAL")
            # NORMAL is durable against a killed process in WAL mode; only power loss can
            # drop the last transactions.
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT_PAGES}")
            cursor.execute("PRAGMA foreign_keys=ON")
        finally:
            cursor.close()

    @event.listens_for(sync_engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get(_BEGIN_OPTION, "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")
