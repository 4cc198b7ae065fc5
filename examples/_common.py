"""What every example shares: where its data lives, and which model answers.

Each example keeps its data (SQLite files, documents) under
``$AGENTSTREAM_DATA_DIR/examples/<name>`` (``./data/examples/<name>`` by default, next to the
conversation store), created on first use. With ``AGENTSTREAM_MODEL`` set the example talks
to that model; without it, an offline scripted model walks through the example's main story,
and every answer it gives says so.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentstream.messages import Message, ToolResultsMessage, UserMessage
from agentstream.providers.base import Provider

__all__ = [
    "DEMO_LABEL",
    "SqliteFile",
    "data_dir",
    "files_seen",
    "model_or",
    "tool_results_since_user",
]

DEMO_LABEL = (
    "*Offline demo: these answers are scripted. Set `AGENTSTREAM_MODEL` "
    "(e.g. `anthropic:claude-sonnet-4-5`) to talk to a real model.*"
)


def data_dir(name: str) -> Path:
    """The example's data directory (not created here)."""
    return Path(os.environ.get("AGENTSTREAM_DATA_DIR") or "data") / "examples" / name


def model_or(demo: Provider) -> str | Provider:
    """``$AGENTSTREAM_MODEL`` when set, else the example's offline scripted model."""
    return os.environ.get("AGENTSTREAM_MODEL") or demo


_KIND_NAMES = {"image": "an image", "pdf": "a PDF", "text": "a text file"}


def files_seen(messages: Sequence[Message]) -> str:
    """The files the latest user message carried, said back (empty when it carried none):
    a scripted model cannot look inside them, a real model reads them with the message."""
    latest = next((m for m in reversed(messages) if isinstance(m, UserMessage)), None)
    files = latest.attachments if latest is not None else ()
    if not files:
        return ""
    named = ", ".join(f"{f.name} ({_KIND_NAMES[f.kind]})" for f in files)
    count = f"{len(files)} attachment{'s' if len(files) > 1 else ''}"
    return (
        f"I got {count}: {named}. As the offline demo I cannot look inside them; a real "
        "model reads them with your message."
    )


def tool_results_since_user(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The JSON results of the tools called since the latest user message, oldest first
    (a scripted model reads them to answer with real figures). Non-JSON results are
    ``{"text": ...}``."""
    found: list[dict[str, Any]] = []
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            break
        if isinstance(message, ToolResultsMessage):
            for part in reversed(message.results):
                try:
                    value = json.loads(part.content)
                except ValueError:
                    value = {"text": part.content}
                found.append({"tool": part.name, "is_error": part.is_error, "value": value})
    return list(reversed(found))


class SqliteFile:
    """An example's SQLite file, created with its first data on first use.

    It is built in a temporary file moved into place when complete, so an interrupted first
    run never leaves half a database behind; tools run in worker threads, so creation is
    guarded by a lock and each operation opens its own connection (:meth:`_connect`).
    Subclasses write :meth:`_create`.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._ready = False
        self._lock = threading.Lock()

    def _create(self, db: sqlite3.Connection) -> None:
        """Make the schema and the first data (one transaction, on the new file)."""
        raise NotImplementedError

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in a transaction: committed when the block ends, rolled back if it
        raises; rows read as :class:`sqlite3.Row`."""
        self._ensure()
        connection = sqlite3.connect(self.path, timeout=10)
        connection.row_factory = sqlite3.Row
        try:
            with connection:
                yield connection
        finally:
            connection.close()

    def _ensure(self) -> None:
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            if not self.path.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
                partial = self.path.with_suffix(".tmp")
                partial.unlink(missing_ok=True)
                db = sqlite3.connect(partial)
                try:
                    with db:
                        self._create(db)
                finally:
                    db.close()
                partial.replace(self.path)
            self._ready = True
