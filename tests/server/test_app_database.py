"""``create_app(agent, database_url=...)`` owns its store: ``uvicorn myapp:app`` with a database.

A real uvicorn process serves a module-level ``app`` on a SQLite file: the app migrates the
new file when it starts, stores the conversation, and closes the database when it stops, so a
second process on the same file finds the conversation.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from agentstream import Agent
from agentstream.errors import ConfigurationError
from agentstream.providers.scripted import ScriptedProvider
from agentstream.server.app import create_app
from agentstream.server.settings import Settings
from agentstream.store import SqlConversationStore, create_engine

from .helpers import wait_until_serving

APP_MODULE = """
from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider
from agentstream.server import create_app

agent = Agent(model=ScriptedProvider({"turns": [{"text": ["Stored ", "answer."]}]}))
app = create_app(agent, database_url="sqlite:///chat/conversations.db")
"""


@contextmanager
def uvicorn_process(app_dir: Path) -> Iterator[str]:
    """``uvicorn myapp:app`` in ``app_dir`` on a free loopback port; yields its base URL and
    stops it with SIGTERM (a graceful shutdown, so the app's lifespan ends)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSTREAM_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "myapp:app", "--port", str(port)],
        cwd=app_dir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(url, process)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=20)[0].decode()
    # uvicorn re-raises the signal it handled once it has shut down.
    assert process.returncode in (0, -signal.SIGTERM), output
    assert "Application shutdown complete" in output, output


def test_uvicorn_serves_a_module_level_app_with_its_own_database(tmp_path: Path) -> None:
    (tmp_path / "myapp.py").write_text(APP_MODULE)
    database = tmp_path / "chat" / "conversations.db"
    assert not database.exists()

    with uvicorn_process(tmp_path) as url:
        answer = httpx.post(f"{url}/agent/stream", json={"message": "Remember this"}, timeout=10)
        assert answer.status_code == 200
        listed = httpx.get(f"{url}/api/conversations").json()["items"]
        assert [item["title"] for item in listed] == ["Remember this"]

    # Closed on shutdown: SQLite folds its write-ahead log back into the file when the last
    # connection closes, so nothing is left beside it.
    assert database.exists()
    assert not Path(f"{database}-wal").exists()
    with sqlite3.connect(database) as db:
        (stored,) = db.execute("SELECT count(*) FROM agentstream_conversations").fetchone()
    assert stored == 1

    with uvicorn_process(tmp_path) as url:
        conversation = httpx.get(f"{url}/api/conversations").json()["items"][0]
        detail = httpx.get(f"{url}/api/conversations/{conversation['id']}").json()
        assert [m["content"] for m in detail["messages"]] == ["Remember this", "Stored answer."]


def test_a_store_and_a_database_url_are_one_too_many(tmp_path: Path) -> None:
    store = SqlConversationStore(create_engine(f"sqlite:///{tmp_path / 'a.db'}"))
    agent = Agent(model=ScriptedProvider({"turns": [{"text": ["hi"]}]}))
    with pytest.raises(ConfigurationError, match="a store or a database_url, not both"):
        create_app(
            agent,
            settings=Settings(),
            store=store,
            database_url=f"sqlite:///{tmp_path / 'b.db'}",
        )
