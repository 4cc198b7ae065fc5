"""Shared state over HTTP: the page's state goes in with a message, a tool changes it, the
change streams as a patch (AG-UI's ``STATE_DELTA`` applied by ``@ag-ui/client`` itself; the
chat tray's ``state_delta``), and the state is stored with the conversation, so a reload
starts from the latest. On SQLite and PostgreSQL, real uvicorn, a scripted model."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentstream import Agent, ToolContext, tool
from agentstream.providers.scripted import ScriptedProvider
from agentstream.state import STATE_LIMIT_BYTES, apply_patch
from agentstream.store import SqlConversationStore, create_engine, upgrade
from tests.node_clients import run_client
from tests.server.conftest import Serve
from tests.server.helpers import (
    PROCESS_START,
    LiveServer,
    bearer,
    datas,
    parse_sse,
    token,
    wait_until,
)
from tests.store.conftest import fresh_postgres

SCRIPT: dict[str, Any] = {
    "rules": [
        {
            "match": "since 2020",
            "turns": [
                {"tool_calls": [{"name": "set_year", "id": "y1", "arguments": {"year": 2020}}]},
                {"text": "Filtered."},
            ],
        },
        {
            "match": "broken",
            "turns": [
                {"tool_calls": [{"name": "break_state", "id": "b1", "arguments": {}}]},
                {"text": "Tried."},
            ],
        },
        {"turns": [{"text": "You are welcome."}]},
    ]
}


@tool
def set_year(ctx: ToolContext, year: int) -> str:
    """Show only articles from ``year`` on."""
    ctx.state.setdefault("filters", {})["year_from"] = year
    ctx.state["searches"] = ctx.state.get("searches", 0) + 1
    return f"from {year}"


@tool
def break_state(ctx: ToolContext) -> str:
    """Change the state, then fail: a call that fails changes nothing."""
    ctx.state["filters"] = "gone"
    raise RuntimeError("the index is down")


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'state.db'}"
        return
    with fresh_postgres() as url:
        yield url


@pytest.fixture
def server(serve: Serve, database_url: str) -> Iterator[LiveServer]:
    store = SqlConversationStore(create_engine(database_url))
    agent = Agent(model=ScriptedProvider(SCRIPT), tools=[set_year, break_state])
    live = serve(agent, store=store, auth=True)
    live.call(upgrade(store.engine), timeout=60)
    yield live
    live.call(store.close())


ALICE = bearer(token("alice"))


def settled(server: LiveServer) -> None:
    runner = server.app.state.server.runner
    assert wait_until(lambda: runner.running == 0)
    server.call(runner.settle())


def tray(server: LiveServer, body: dict[str, Any], headers: dict[str, str] = ALICE) -> list[Any]:
    with server.client() as client:
        response = client.post("/api/chat/stream", json=body, headers=headers)
    assert response.status_code == 200, response.text
    settled(server)
    return datas(parse_sse(response.text))


def stored_state(server: LiveServer, conversation: str, headers: dict[str, str] = ALICE) -> Any:
    with server.client() as client:
        response = client.get(f"/api/conversations/{conversation}", headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["state"]


def test_the_tray_streams_the_state_and_its_changes_and_keeps_them(server: LiveServer) -> None:
    page = {"filters": {"year_from": 2010, "journal": "Nature"}, "view": "list"}
    frames = tray(server, {"message": "Search since 2020", "state": page})
    types = [f["type"] for f in frames]
    assert types[:2] == ["status", "state_snapshot"]
    assert frames[1]["state"] == page
    # The change goes out before the tool's card completes.
    assert types.index("state_delta") == types.index("tool_complete") - 1
    [delta] = [f for f in frames if f["type"] == "state_delta"]
    assert delta["patch"] == [
        {"op": "replace", "path": "/filters/year_from", "value": 2020},
        {"op": "add", "path": "/searches", "value": 1},
    ]
    expected = {"filters": {"year_from": 2020, "journal": "Nature"}, "view": "list", "searches": 1}
    assert apply_patch(frames[1]["state"], delta["patch"]) == expected
    conversation = frames[-1]["payload"]["conversation_id"]
    assert stored_state(server, conversation) == expected

    # A reload (no state of its own) starts from the stored state; its tool's change
    # applies on top of it.
    again = tray(server, {"message": "Since 2020 please", "conversation_id": conversation})
    assert again[1] == {"type": "state_snapshot", "state": expected}
    assert stored_state(server, conversation)["searches"] == 2

    # The page's state replaces the stored one; a run without tools changes nothing.
    mine = {"filters": {}, "view": "grid"}
    third = tray(server, {"message": "Thanks", "conversation_id": conversation, "state": mine})
    assert third[1] == {"type": "state_snapshot", "state": mine}
    assert not [f for f in third if f["type"] == "state_delta"]
    assert stored_state(server, conversation) == mine


def test_a_conversation_without_state_has_none(server: LiveServer) -> None:
    frames = tray(server, {"message": "Thanks"})
    assert "state_snapshot" not in [f["type"] for f in frames]
    assert stored_state(server, frames[-1]["payload"]["conversation_id"]) is None


def test_a_failed_call_changes_nothing(server: LiveServer) -> None:
    page = {"filters": {"year_from": 2010}}
    frames = tray(server, {"message": "Try the broken one", "state": page})
    assert "state_delta" not in [f["type"] for f in frames]
    assert stored_state(server, frames[-1]["payload"]["conversation_id"]) == page


@pytest.mark.parametrize(
    ("state", "status", "words"),
    [
        ([1, 2], 400, "state must be a JSON object, not an array"),
        ("filters", 400, "state must be a JSON object, not str"),
        ({"notes": "x" * STATE_LIMIT_BYTES}, 413, "at most 65,536 are kept"),
    ],
)
def test_a_state_the_server_cannot_keep_is_refused_and_nothing_is_stored(
    server: LiveServer, state: Any, status: int, words: str
) -> None:
    first = tray(server, {"message": "Search since 2020", "state": {"view": "list"}})
    conversation = first[-1]["payload"]["conversation_id"]
    with server.client() as client:
        response = client.post(
            "/api/chat/stream",
            json={"message": "Thanks", "conversation_id": conversation, "state": state},
            headers=ALICE,
        )
        assert response.status_code == status, response.text
        assert words in response.json()["detail"]
        messages = client.get(f"/api/conversations/{conversation}", headers=ALICE).json()
    # Nothing of the refused message was stored, and the state stands.
    assert [m["content"] for m in messages["messages"] if m["role"] == "user"] == [
        "Search since 2020"
    ]
    assert messages["state"] == {"view": "list", "filters": {"year_from": 2020}, "searches": 1}


def test_nobody_reads_or_changes_another_users_state(server: LiveServer) -> None:
    frames = tray(server, {"message": "Thanks", "state": {"secret": "alice's"}})
    conversation = frames[-1]["payload"]["conversation_id"]
    bob = bearer(token("bob"))
    with server.client() as client:
        read = client.get(f"/api/conversations/{conversation}", headers=bob)
        written = client.post(
            "/api/chat/stream",
            json={"message": "Hi", "conversation_id": conversation, "state": {"secret": "bob"}},
            headers=bob,
        )
    assert read.status_code == 404
    assert written.status_code == 404
    assert stored_state(server, conversation) == {"secret": "alice's"}


def test_the_agui_client_applies_the_deltas_to_the_servers_state(
    serve: Serve, tmp_path: Path
) -> None:
    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'agui.db'}"))
    server = serve(Agent(model=ScriptedProvider(SCRIPT), tools=[set_year]), store=store)
    server.call(upgrade(store.engine), timeout=60)
    try:
        result = run_client(
            "agui_client.mjs",
            "state",
            env={**os.environ, "BASE_URL": server.url},
            timeout=PROCESS_START,
        )
        assert result.returncode == 0, result.stderr
        out = json.loads(result.stdout)
        settled(server)
        expected = {
            "filters": {"year_from": 2020, "journal": "Nature"},
            "view": "list",
            "searches": 1,
        }
        assert out["types"][:2] == ["RUN_STARTED", "STATE_SNAPSHOT"]
        assert "STATE_DELTA" in out["types"]
        assert out["afterRun"] == expected  # the client's own application of the patches
        with server.client() as client:
            [item] = client.get("/api/conversations").json()["items"]
            kept = client.get(f"/api/conversations/{item['id']}").json()["state"]
        assert kept == out["afterRun"]
        # A second client of the thread, sent with no state, starts from the stored one.
        assert out["reloaded"]["types"][:2] == ["RUN_STARTED", "STATE_SNAPSHOT"]
        assert out["reloaded"]["events"][1]["snapshot"] == expected
        assert out["reloaded"]["state"] == expected
    finally:
        server.call(store.close())


def test_a_resumed_tray_stream_has_the_state_frames(server: LiveServer) -> None:
    frames = tray(server, {"message": "Search since 2020", "state": {"view": "list"}})
    run_id = frames[0]["run_id"]
    with server.client() as client:
        response = client.get(f"/api/runs/{run_id}/stream?after=0", headers=ALICE)
    assert response.status_code == 200, response.text
    resumed = datas(parse_sse(response.text))
    assert resumed == frames[1:]  # a fresh encoder, replaying the run: the same frames
    assert resumed[0] == {"type": "state_snapshot", "state": {"view": "list"}}


def test_an_agui_state_the_server_cannot_keep_is_refused(serve: Serve, tmp_path: Path) -> None:
    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'bad.db'}"))
    server = serve(Agent(model=ScriptedProvider(SCRIPT), tools=[set_year]), store=store)
    server.call(upgrade(store.engine), timeout=60)
    base = {
        "threadId": "t1",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": "Thanks"}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }
    try:
        with server.client() as client:
            for state, status in (([1, 2], 400), ("x", 400), ({"n": "y" * 70_000}, 413)):
                response = client.post("/ag-ui", json={**base, "state": state})
                assert response.status_code == status, response.text
                assert response.json()["detail"].startswith("state: state ")
            assert client.get("/api/conversations").json()["items"] == []
    finally:
        server.call(store.close())


def test_two_tabs_the_latest_write_wins_and_a_tab_that_sends_none_undoes_nothing(
    server: LiveServer,
) -> None:
    first = tray(server, {"message": "Search since 2020", "state": {"view": "list"}})
    conversation = first[-1]["payload"]["conversation_id"]
    after_a = {"view": "list", "filters": {"year_from": 2020}, "searches": 1}
    # Tab B opened the conversation before tab A's run, and only reads: it sends no state,
    # and its run starts from (and its page is brought up to) tab A's.
    b_first = tray(server, {"message": "Thanks", "conversation_id": conversation})
    assert b_first[1] == {"type": "state_snapshot", "state": after_a}
    # Tab B's page changes the state: its whole state is the latest write.
    tray(server, {"message": "Thanks", "conversation_id": conversation, "state": {"view": "grid"}})
    a_next = tray(server, {"message": "Thanks again", "conversation_id": conversation})
    assert a_next[1] == {"type": "state_snapshot", "state": {"view": "grid"}}
    assert stored_state(server, conversation) == {"view": "grid"}
