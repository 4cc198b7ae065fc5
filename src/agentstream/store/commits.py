"""Group commit: the write transactions of many concurrent callers, several per transaction.

When a thousand conversations start at once, each wanting its user message committed before
its model is called, committing them one by one queues them all behind one lock (SQLite's
single writer; on PostgreSQL, one flush to disk per commit), and every transaction pays its
``BEGIN``/``COMMIT`` and its trip through the connection pool. :class:`GroupCommit` instead
queues each caller's *work* (a function of an open connection that runs its statements) and
a committer task runs everything queued so far in one transaction, then resolves every
caller's future once that transaction has committed. A caller is never told "done" before its
rows are durable, exactly as with a transaction of its own.

Works are synchronous functions of a SQLAlchemy ``Connection`` and a whole transaction runs
in one go, never returning to the event loop between statements: on a SQLite file, in a
writer thread of its own with the stdlib driver (one hand-over per transaction instead of
several per statement through ``aiosqlite``'s thread), elsewhere through ``run_sync`` on the
async driver (PostgreSQL's ``asyncpg``).

There is no timer: a caller that finds a committer slot free is committed at once (one loop
iteration later, which is when the other requests of the same burst arrive), and callers that
arrive while a transaction runs make up the next one. So a lone write waits for nothing, and
under load a transaction carries whatever arrived during the previous one (at most
``max_batch`` works, so that one transaction never holds the lock for long).

One caller's failure never becomes another's:

* a work that refuses before writing anything (the conversation is not the caller's) raises
  :class:`Refused`; the transaction goes on without it and the caller gets the error;
* any other exception rolls the whole transaction back, and its works are then run again,
  each in a transaction of its own, so each caller gets exactly the outcome it would have had
  alone (works are re-runnable: they compute everything from the connection they are given).

Works are ordered by a key (the conversation id) within a transaction, so concurrent
transactions on PostgreSQL take row locks in the same order and cannot deadlock on each other.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from agentstream.store.checkpoints import Checkpointer

__all__ = [
    "AsyncTransactions",
    "GroupCommit",
    "Refused",
    "ThreadTransactions",
    "Transactions",
    "Work",
]

log = logging.getLogger("agentstream.store")

T = TypeVar("T")

Work = Callable[[Connection], T]
"""Statements to run inside a write transaction, returning the caller's result."""

MAX_BATCH = 64
"""Works per transaction at most."""


class Refused(Exception):
    """Raised by a work that wrote nothing and will not: its transaction goes on without it,
    and its caller gets ``error``."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(slots=True)
class _Queued(Generic[T]):
    work: Work[T]
    key: str
    future: asyncio.Future[T]


class Transactions(Protocol):
    """Runs ``fn`` inside one write transaction, committed when it returns and rolled back
    when it raises."""

    async def __call__(self, fn: Callable[[Connection], T]) -> T: ...

    async def close(self) -> None: ...


class AsyncTransactions:
    """Transactions on an async engine (which begins write transactions: see
    :func:`agentstream.store.engine.writer`), each run with ``run_sync``."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def __call__(self, fn: Callable[[Connection], T]) -> T:
        async with self._engine.begin() as conn:
            return await conn.run_sync(fn)

    async def close(self) -> None:
        """Nothing of its own: the engine belongs to the store."""


class ThreadTransactions:
    """Transactions on a synchronous engine, in one thread of their own, on one connection
    that thread keeps (a checkout from the pool per transaction costs more than a small
    transaction's statements). A transaction that fails for the connection's sake (the
    driver's error, not a work's refusal) gives it back, and the next one opens another.
    ``checkpoints`` (on a SQLite file) is told of every commit, and closed with the rest."""

    def __init__(self, engine: Engine, checkpoints: Checkpointer | None = None) -> None:
        self._engine = engine
        self._checkpoints = checkpoints
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="agentstream-store-writer")
        self._conn: Connection | None = None

    async def __call__(self, fn: Callable[[Connection], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, self._run, fn)

    def _run(self, fn: Callable[[Connection], T]) -> T:
        conn = self._conn
        if conn is None or conn.closed or conn.invalidated:
            conn = self._conn = self._engine.connect()
        try:
            with conn.begin():
                result = fn(conn)
        except DBAPIError:
            self._release()
            raise
        if self._checkpoints is not None:
            self._checkpoints.committed()
        return result

    def _release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def _dispose(self) -> None:
        self._release()
        if self._checkpoints is not None:
            self._checkpoints.close()
        self._engine.dispose()

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._thread, self._dispose)
        self._thread.shutdown(wait=False)


class GroupCommit:
    """Runs works in shared write transactions, with at most ``committers`` transactions at
    a time: 1 on SQLite, which has one writer anyway; a few on PostgreSQL."""

    def __init__(
        self, transactions: Transactions, *, committers: int = 1, max_batch: int = MAX_BATCH
    ) -> None:
        if committers < 1 or max_batch < 1:
            raise ValueError("committers and max_batch must be at least 1")
        self._transactions = transactions
        self._committers = committers
        self._max_batch = max_batch
        self._queue: deque[_Queued[Any]] = deque()
        self._running: set[asyncio.Task[None]] = set()
        self.committed = 0
        """Transactions committed so far (each carrying one or more works)."""
        self.on_commit: Callable[[float], None] | None = None
        """Told how long each committed transaction took, in seconds (the server's metrics)."""
        self._active = 0
        """Committers that will still look at the queue (a task whose loop has ended is done
        with it even before its done-callbacks ran)."""

    async def run(self, work: Work[T], *, key: str = "") -> T:
        """``work``'s result once the transaction that ran it has committed. A caller
        cancelled before its work started leaves nothing behind; once started, the work
        commits with its transaction."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.append(_Queued(work, key, future))
        if self._active < self._committers:
            self._active += 1
            task = asyncio.create_task(self._commit_queued())
            self._running.add(task)
            task.add_done_callback(self._running.discard)
        return await future

    async def drain(self) -> None:
        """Wait until everything queued so far has been committed (or has failed)."""
        while self._running:
            await asyncio.gather(*self._running, return_exceptions=True)

    async def _commit_queued(self) -> None:
        try:
            # One loop iteration first: the rest of a burst of requests arrives in it.
            await asyncio.sleep(0)
            queue = self._queue
            while queue:
                batch: list[_Queued[Any]] = []
                while queue and len(batch) < self._max_batch:
                    queued = queue.popleft()
                    if not queued.future.done():  # its caller was cancelled while it waited
                        batch.append(queued)
                if batch:
                    batch.sort(key=lambda queued: queued.key)
                    await self._commit(batch)
        except BaseException:
            # Cancelled (shutdown): nobody will commit what is still queued.
            while self._queue:
                self._queue.popleft().future.cancel()
            raise
        finally:
            # No await between finding the queue empty and this: a work queued from now on
            # starts a committer of its own.
            self._active -= 1

    async def _commit(self, batch: list[_Queued[Any]]) -> None:
        def run_all(conn: Connection) -> list[tuple[Any, Exception | None]]:
            outcomes: list[tuple[Any, Exception | None]] = []
            for queued in batch:
                try:
                    outcomes.append((queued.work(conn), None))
                except Refused as refused:
                    outcomes.append((None, refused.error))
            return outcomes

        began = time.perf_counter()
        try:
            outcomes = await self._transactions(run_all)
            self.committed += 1
            if self.on_commit is not None:
                self.on_commit(time.perf_counter() - began)
        except Exception as exc:
            if len(batch) == 1:
                _settle(batch[0].future, None, exc)
                return
            log.debug("a shared transaction failed (%r): committing its works one by one", exc)
            for queued in batch:
                if not queued.future.done():  # a caller cancelled meanwhile: nothing of it stays
                    await self._commit([queued])
            return
        except BaseException:
            # Cancelled (shutdown): its callers are told (the transaction may still finish in
            # the writer thread; then what it wrote is there, like any commit whose caller
            # was cancelled while waiting).
            for queued in batch:
                queued.future.cancel()
            raise
        for queued, (result, error) in zip(batch, outcomes, strict=True):
            _settle(queued.future, result, error)

    async def close(self) -> None:
        """Commit what is queued, then release the transactions' resources."""
        await self.drain()
        await self._transactions.close()


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)
