"""SQLite's WAL checkpoints, moved off the write path.

In WAL mode a commit appends pages to the write-ahead log, and every so often those pages are
copied back into the database file: a checkpoint. By default SQLite runs it inside the commit
that takes the log past 1,000 pages, so one commit in every few hundred run starts also copies
and syncs a few megabytes. Measured in a burst of run starts on SQLite, that commit took about
20 ms where the others took under 2, and the whole batch of users it carried waited for it
before their first event; checkpoints were about two thirds of the time spent committing.

:class:`Checkpointer` runs them instead in a thread of its own, on its own connection, a short
while after commits happened. A ``PASSIVE`` checkpoint copies what no reader still needs and
neither waits for nor blocks the writer, and SQLite releases the GIL while it works, so the
event loop and the writer thread go on meanwhile. Commits keep SQLite's own checkpoint only as
a safety net, at :data:`~agentstream.store.engine.WAL_AUTOCHECKPOINT_PAGES`, should this
thread fall behind.
"""

from __future__ import annotations

import contextlib
import logging
import threading

from sqlalchemy.engine import Engine
from sqlalchemy.pool import PoolProxiedConnection

__all__ = ["CHECKPOINT_INTERVAL_S", "Checkpointer"]

log = logging.getLogger("agentstream.store")

CHECKPOINT_INTERVAL_S = 0.2
"""At most one checkpoint this often, while commits go on."""


class Checkpointer:
    """Checkpoints the WAL of ``engine``'s SQLite file after :meth:`committed` was called,
    at most once every ``interval`` seconds. Its thread starts with the first commit, so a
    store that never writes has none; :meth:`committed` and :meth:`close` are called from one
    thread (the store's writer)."""

    def __init__(self, engine: Engine, interval: float = CHECKPOINT_INTERVAL_S) -> None:
        self._engine = engine
        self._interval = interval
        self._wanted = threading.Event()
        self._closing = threading.Event()
        self._connection: PoolProxiedConnection | None = None
        self.checkpoints = 0
        """Checkpoints run so far (for tests and diagnostics)."""
        self._thread: threading.Thread | None = None

    def committed(self) -> None:
        """A commit added to the log (cheap: the writer calls it after every commit)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="agentstream-store-checkpoints", daemon=True
            )
            self._thread.start()
        self._wanted.set()

    def close(self) -> None:
        """Stop, after a last checkpoint of what was committed before."""
        self._closing.set()
        self._wanted.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        try:
            while True:
                self._wanted.wait()
                self._wanted.clear()
                self._checkpoint()
                if self._closing.wait(self._interval):
                    if self._wanted.is_set():
                        self._checkpoint()
                    return
        finally:
            self._release()

    def _checkpoint(self) -> None:
        try:
            if self._connection is None:
                self._connection = self._engine.raw_connection()
            cursor = self._connection.cursor()
            try:
                cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
                cursor.fetchall()
            finally:
                cursor.close()
        except Exception as exc:
            # The next commit asks again, on a new connection; SQLite's own checkpoint in
            # the commits keeps the log bounded meanwhile.
            log.warning("WAL checkpoint failed: %s", exc)
            self._release()
            return
        self.checkpoints += 1

    def _release(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.close()
