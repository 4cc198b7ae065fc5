"""Conversations held across the processes that share one database, without Redis.

Several ``agentstream serve`` processes may share a database and nothing else (no Redis: a
single host with SQLite, or hosts on one PostgreSQL). A conversation answering in one must
refuse, or make wait, a message that reaches another (:mod:`agentstream.runs.turns`), and a
process that dies must not leave its conversations held. So the hold is one the database's
own machinery drops with the process, and no column, table or migration is needed:

* **PostgreSQL**: a session-level advisory lock per conversation
  (``pg_try_advisory_lock``, keyed by a 64-bit hash of owner and conversation), all taken on
  one connection of the process's own. PostgreSQL drops them when that connection ends,
  however the process ended; if the connection is lost, the process's holds go with it (a
  message meanwhile may start a second answer) and the next hold opens a new one.
* **SQLite file**: a POSIX record lock on one byte per conversation (at the hash's offset) of
  a file beside the database (``<database>-turns``), which the kernel drops with the process.
  SQLite is shared only by processes of one host, as such locks are. In-memory SQLite is one
  process's: nothing to share.

A lock says only *that* a conversation is held; *which* run holds it (named in a 409) is the
conversation's latest run still ``running`` in the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import logging
import os
from pathlib import Path
from typing import Protocol

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

__all__ = ["DatabaseLocks", "database_locks"]

log = logging.getLogger("agentstream.store")


class DatabaseLocks(Protocol):
    async def take(self, key: str) -> bool:
        """Hold ``key`` (a conversation key) for this process unless another process does."""
        ...

    async def give_back(self, key: str) -> None: ...

    async def close(self) -> None: ...


def _hash(key: str) -> int:
    """A signed 64-bit number for ``key`` (PostgreSQL's advisory lock key)."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)


class AdvisoryLocks:
    """PostgreSQL's session-level advisory locks, on one connection of their own."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._connection: AsyncConnection | None = None
        self._lock = asyncio.Lock()  # one statement at a time on the connection

    async def _call(self, function: str, key: str) -> bool:
        async with self._lock:
            for attempt in range(2):
                try:
                    if self._connection is None:
                        self._connection = await self._engine.connect()
                    result = await self._connection.execute(
                        text(f"SELECT {function}(:k)"), {"k": _hash(key)}
                    )
                    await self._connection.commit()  # no transaction held open
                    return bool(result.scalar())
                except Exception:
                    # The connection (and with it this process's holds) is gone: a new one.
                    connection, self._connection = self._connection, None
                    if connection is not None:
                        with contextlib.suppress(Exception):
                            await connection.invalidate()
                    if attempt:
                        raise
                    log.warning("the connection holding conversations was lost; reconnecting")
        raise AssertionError("unreachable")

    async def take(self, key: str) -> bool:
        return await self._call("pg_try_advisory_lock", key)

    async def give_back(self, key: str) -> None:
        await self._call("pg_advisory_unlock", key)

    async def close(self) -> None:
        if self._connection is not None:
            await self._connection.close()
            self._connection = None


class FileLocks:
    """POSIX record locks on one file beside a SQLite database. Within a process they never
    conflict (the broker's own hold keeps its runs apart); the file stays open while the
    process lives, since closing any descriptor of it would drop every lock."""

    _SPAN = 2**62

    def __init__(self, path: Path) -> None:
        self._path = path
        self._handle: int | None = None

    def _lockf(self, operation: int, key: str) -> bool:
        if self._handle is None:
            self._handle = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.lockf(self._handle, operation, 1, _hash(key) % self._SPAN)
        except (BlockingIOError, PermissionError):
            return False
        return True

    async def take(self, key: str) -> bool:
        return self._lockf(fcntl.LOCK_EX | fcntl.LOCK_NB, key)

    async def give_back(self, key: str) -> None:
        self._lockf(fcntl.LOCK_UN, key)

    async def close(self) -> None:
        if self._handle is not None:
            os.close(self._handle)
            self._handle = None


def database_locks(engine: AsyncEngine) -> DatabaseLocks | None:
    """The locks for ``engine``'s database (``None``: in-memory SQLite, one process's)."""
    if engine.dialect.name == "postgresql":
        return AdvisoryLocks(engine)
    database = engine.url.database
    if engine.dialect.name == "sqlite" and database and database != ":memory:":
        return FileLocks(Path(f"{database}-turns"))
    return None
