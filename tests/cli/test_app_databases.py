"""Applications served from one directory keep their conversations apart: each gets its own
SQLite file in the data directory, named after it, so one never lists (or opens) another's,
even for the same anonymous local user."""

from __future__ import annotations

import os
from pathlib import Path

import httpx

from agentstream.cli.loading import app_name
from agentstream.store import resolve_database_url

from ..server.helpers import serve_process

MYAPP = """
from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider

agent = Agent(model=ScriptedProvider({"turns": [{"text": "On call."}]}), name="oncall")
"""


def test_each_app_lists_only_its_own_conversations(tmp_path: Path) -> None:
    (tmp_path / "myapp.py").write_text(MYAPP)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTSTREAM_")}
    env["AGENTSTREAM_DATA_DIR"] = str(tmp_path / "data")

    with serve_process("myapp:agent", cwd=tmp_path, env=env) as mine:
        answer = httpx.post(f"{mine}/api/chat/stream", json={"message": "Billing is down"})
        assert answer.status_code == 200 and "On call." in answer.text
        [ours] = httpx.get(f"{mine}/api/conversations").json()["items"]
    with serve_process(cwd=tmp_path, env=env) as demo:  # `make run`: the demo, same user
        assert httpx.get(f"{demo}/api/conversations").json()["items"] == []
        assert httpx.get(f"{demo}/api/conversations/{ours['id']}").status_code == 404
        httpx.post(f"{demo}/api/chat/stream", json={"message": "hello"}, timeout=30)
        [theirs] = httpx.get(f"{demo}/api/conversations").json()["items"]
    with serve_process("myapp:agent", cwd=tmp_path, env=env) as mine_again:
        listed = httpx.get(f"{mine_again}/api/conversations").json()["items"]
    assert [c["id"] for c in listed] == [ours["id"]] != [theirs["id"]]
    assert sorted(p.name for p in (tmp_path / "data").glob("*.db")) == [
        "agentstream.db",
        "myapp.agent.db",
    ]


def test_the_database_is_named_after_the_app() -> None:
    env = {"AGENTSTREAM_DATA_DIR": "/srv/data"}
    assert resolve_database_url(env=env, app=app_name("examples.ops.app:agent")) == (
        "sqlite+aiosqlite:////srv/data/examples.ops.app.agent.db"
    )
    assert resolve_database_url(env=env, app=app_name(None)).endswith("/srv/data/agentstream.db")
    chosen = env | {"AGENTSTREAM_DATABASE_URL": "postgresql://db/chat"}
    assert resolve_database_url(env=chosen, app="myapp.agent") == "postgresql+asyncpg://db/chat"
