"""Golden frames for ``agent`` (the ops agent protocol), its JavaScript client in Node, and the
store's ``conversation`` frame."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentstream import Agent
from agentstream.providers.scripted import ScriptedProvider
from agentstream.tools import ToolSource
from tests.server.agents import agent_agent, slow_agent
from tests.server.conftest import Serve
from tests.server.helpers import (
    ISO_MS,
    PROCESS_START,
    UUID,
    bearer,
    datas,
    parse_sse,
    stream_text,
    token,
    wait_until,
)

PATH = "/agent/stream"
NODE = shutil.which("node") or "/usr/bin/node"
CLIENT_JS = Path(__file__).parent / "js" / "agent_stream_client.mjs"

TOOL_START = {
    "type": "tool_start",
    "tool_call_id": "call_abc123",
    "tool_name": "alert_admin",
    "args": {"message": "User is reporting a system failure", "priority": "high"},
    "ts": ISO_MS,
    "display": "Alerting admin...",
}


def golden(user: str, conversation_id: Any, title: Any) -> list[Any]:
    return [
        {
            "type": "start",
            "user_id": user,
            "conversation_id": conversation_id,
            "conversation_title": title,
            "tools_enabled": True,
            "tool_names": ["alert_admin", "check_disk"],
        },
        {"type": "token", "content": "I "},
        {"type": "token", "content": "will "},
        {"type": "token", "content": "alert "},
        {"type": "token", "content": "the "},
        {"type": "token", "content": "admin."},
        TOOL_START,
        {
            "type": "tool_end",
            "tool_call_id": "call_abc123",
            "tool_name": "alert_admin",
            "status": "success",
            "duration_ms": AnyInt(),
            "result": {"status": "sent", "ticket_id": 42},
            "ts": ISO_MS,
        },
        {
            "type": "tool_start",
            "tool_call_id": "call_def456",
            "tool_name": "check_disk",
            "args": {},
            "ts": ISO_MS,
        },
        {
            "type": "tool_error",
            "tool_call_id": "call_def456",
            "tool_name": "check_disk",
            "status": "error",
            "duration_ms": AnyInt(),
            "error": {"message": "Connection timeout", "kind": "ConnectionError"},
            "ts": ISO_MS,
        },
        {"type": "token", "content": "\n\nDone: "},
        {"type": "token", "content": "ticket 42."},
    ]


class AnyInt:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, int) and not isinstance(other, bool) and other >= 0

    def __repr__(self) -> str:
        return "AnyInt()"


def test_golden_stream_without_store(serve: Serve) -> None:
    server = serve(agent_agent())
    with server.client() as client:
        response, text = stream_text(
            client, PATH, json={"message": "Can you check the system status?"}
        )
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert datas(parse_sse(text)) == [*golden("local", None, None), {"type": "done"}]


@pytest.fixture
def sql_store(tmp_path: Path) -> Any:
    from agentstream.store import SqlConversationStore, create_engine

    return SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'agent.db'}"))


def test_conversation_frame_with_a_store(serve: Serve, sql_store: Any) -> None:
    from agentstream.store import upgrade

    server = serve(agent_agent(), store=sql_store, auth=True)
    server.call(upgrade(sql_store.engine), timeout=60)
    cookie = {"Cookie": f"agentstream_session={token('carol')}"}
    with server.client() as client:
        _, text = stream_text(client, PATH, json={"message": "Check the status"}, headers=cookie)
        frames = datas(parse_sse(text))
        conversation_id = frames[0]["conversation_id"]
        assert frames[:-2] == golden("carol", UUID, "Check the status")
        update = frames[-2]
        assert update["type"] == "conversation"
        conversation = update["conversation"]
        assert conversation["id"] == conversation_id
        assert [m["role"] for m in conversation["conversation"]] == ["user", "assistant"]
        assert frames[-1] == {"type": "done"}
        # Continue it; another user cannot; an unknown id is 404 before streaming; a bad id 400.
        _, again = stream_text(
            client,
            PATH,
            json={"message": "And now?", "conversation_id": conversation_id},
            headers=cookie,
        )
        assert datas(parse_sse(again))[0]["conversation_id"] == conversation_id
        other = client.post(
            PATH,
            json={"message": "x", "conversation_id": conversation_id},
            headers=bearer(token("mallory")),
        )
        missing = client.post(
            PATH,
            json={"message": "x", "conversation_id": "00000000-0000-0000-0000-000000000000"},
            headers=cookie,
        )
        bad = client.post(PATH, json={"message": "x", "conversation_id": "nope"}, headers=cookie)
        listed = client.get("/api/conversations", headers=cookie)
    assert other.status_code == 404
    assert missing.status_code == 404
    assert bad.status_code == 400 and bad.json()["field"] == "conversation_id"
    assert [c["id"] for c in listed.json()["items"]] == [conversation_id]
    server.call(sql_store.close())


def test_warning_when_the_tool_system_fails(serve: Serve) -> None:
    class BrokenSource:
        async def load(self, principal: Any, scopes: Any) -> Any:
            raise RuntimeError("catalogue down")

    assert isinstance(BrokenSource(), ToolSource)
    agent = Agent(
        model=ScriptedProvider({"turns": [{"text": "Plain answer."}]}),
        tool_sources=[BrokenSource()],
    )
    server = serve(agent)
    with server.client() as client:
        _, text = stream_text(client, PATH, json={"message": "hi"})
    frames = datas(parse_sse(text))
    assert frames[0]["type"] == "start"
    assert frames[1] == {
        "type": "warning",
        "code": "tool_fallback",
        "message": "Tool-enabled streaming encountered an issue. Continuing without tools.",
    }
    assert frames[-1] == {"type": "done"}


def test_fatal_error_then_done(serve: Serve) -> None:
    provider = ScriptedProvider(
        {"turns": [{"error": {"kind": "auth", "message": "The model rejected our key."}}]}
    )
    server = serve(Agent(model=provider))
    with server.client() as client:
        _, text = stream_text(client, PATH, json={"message": "hi"})
    assert datas(parse_sse(text))[-2:] == [
        {"type": "error", "message": "The model rejected our key."},
        {"type": "done"},
    ]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "message"),
        ({"message": "hi", "context": {"a": 1}}, "context"),
        ({"message": "hi", "conversation_id": "not-a-uuid"}, "conversation_id"),
    ],
)
def test_bad_requests_are_400(serve: Serve, payload: Any, field: str) -> None:
    server = serve(agent_agent())
    with server.client() as client:
        response = client.post(PATH, json=payload)
    assert response.status_code == 400
    assert response.json()["field"] == field


def test_example_frontend_handling_in_node(serve: Serve) -> None:
    server = serve(agent_agent(), auth=True)
    env = {
        **os.environ,
        "BASE_URL": server.url,
        "SESSION_COOKIE": f"agentstream_session={token('dave')}",
    }
    result = subprocess.run(
        [NODE, str(CLIENT_JS)],
        capture_output=True,
        text=True,
        env=env,
        timeout=PROCESS_START,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    collected = json.loads(result.stdout)
    assert collected["status"] == 200
    assert collected["errors"] == []
    assert collected["done"] is True
    assert collected["text"] == "I will alert the admin.\n\nDone: ticket 42."
    assert [s["tool_name"] for s in collected["toolStarts"]] == ["alert_admin", "check_disk"]
    assert [(e["tool_name"], e["result"]) for e in collected["toolEnds"]] == [
        ("alert_admin", {"status": "sent", "ticket_id": 42})
    ]
    assert [o["type"] for o in collected["other"]] == ["start", "tool_error"]
    assert collected["other"][0]["user_id"] == "dave"


def test_node_client_without_the_cookie_gets_401(serve: Serve) -> None:
    server = serve(agent_agent(), auth=True)
    env = {**os.environ, "BASE_URL": server.url, "SESSION_COOKIE": ""}
    result = subprocess.run(
        [NODE, str(CLIENT_JS)],
        capture_output=True,
        text=True,
        env=env,
        timeout=PROCESS_START,
        check=False,
    )
    assert json.loads(result.stdout)["status"] == 401


def test_disconnect_keeps_the_partial_answer(serve: Serve, sql_store: Any) -> None:
    from agentstream.store import upgrade

    agent, provider = slow_agent(delay=0.05, chunks=400)
    server = serve(agent, store=sql_store)
    server.call(upgrade(sql_store.engine), timeout=60)
    with server.client() as client:
        request = client.build_request("POST", PATH, json={"message": "Count slowly"})
        response = client.send(request, stream=True)
        lines = response.iter_lines()
        start = json.loads(next(line for line in lines if line.startswith("data: "))[6:])
        tokens = 0
        for line in lines:
            if line.startswith("data: ") and '"token"' in line:
                tokens += 1
                if tokens == 3:
                    break
        response.close()  # the client leaves mid-answer

        def saved() -> list[dict[str, Any]]:
            detail = client.get(f"/api/conversations/{start['conversation_id']}").json()
            return list(detail["messages"])

        assert wait_until(lambda: provider.closed_early == 1)
        assert wait_until(lambda: len(saved()) == 2, timeout=5)
        messages = saved()
    assert messages[0]["content"] == "Count slowly"
    assert messages[1]["content"].startswith("tick tick tick")
    server.call(sql_store.close())


def test_json_text_from_a_tool_is_an_object_and_marker_lines_never_show(serve: Serve) -> None:
    from agentstream import tool
    from agentstream.chat import ChatHooks

    @tool
    def fetch_status() -> str:
        """The status API's answer, passed through as it came."""
        return '{"status": "ok", "disks": [1, 2]}'

    script = {
        "turns": [
            {"text": "Checking.", "tool_calls": [{"name": "fetch_status", "arguments": {}}]},
            {"text": ["All good.\nSUGGESTED_", 'VALUES: [{"label": "More", "value": "more"}]']},
        ]
    }
    agent = Agent(model=ScriptedProvider(script), tools=[fetch_status])
    server = serve(agent, hooks=ChatHooks())
    with server.client() as client:
        response, text = stream_text(client, PATH, json={"message": "status?"})
    frames = datas(parse_sse(text))
    (end,) = [f for f in frames if f["type"] == "tool_end"]
    assert end["result"] == {"status": "ok", "disks": [1, 2]}
    streamed = "".join(f["content"] for f in frames if f["type"] == "token")
    assert streamed == "Checking.\n\nAll good.\n"
    assert "SUGGESTED" not in text
