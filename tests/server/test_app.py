"""The app around the dialects: body limit, OpenAPI, the web UI, the serve command."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agentstream.server.app import create_app
from agentstream.server.settings import Settings
from tests.server.agents import tray_agent
from tests.server.conftest import Serve
from tests.server.helpers import LiveServer, datas, parse_sse, serve_process, stream_text

TRAY = "/api/chat/stream"


def test_body_over_the_limit_is_413(serve: Serve) -> None:
    server = serve(tray_agent(), max_body_bytes=200)
    big = {"message": "x" * 500}

    def chunks() -> Iterator[bytes]:
        yield b'{"message": "'
        for _ in range(10):
            yield b"y" * 50
        yield b'"}'

    with server.client() as client:
        declared = client.post(TRAY, json=big)
        chunked = client.post(TRAY, content=chunks(), headers={"Content-Type": "application/json"})
        small, text = stream_text(client, TRAY, json={"message": "hi"})
    assert declared.status_code == 413
    assert "limit 200 bytes" in declared.json()["detail"]
    assert chunked.status_code == 413
    assert small.status_code == 200
    assert datas(parse_sse(text))[-1]["type"] == "complete"


def test_openapi_describes_every_endpoint_and_body(serve: Serve) -> None:
    server = serve(tray_agent())
    with server.client() as client:
        schema = client.get("/openapi.json").json()
    paths = schema["paths"]
    for path in (
        "/v1/agent/chat",
        "/api/chat/agent-chat/stream",
        "/api/chat/stream",
        "/agent/stream",
    ):
        operation = paths[path]["post"]
        body_ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert body_ref.split("/")[-1] in schema["components"]["schemas"]
        assert "text/event-stream" in operation["responses"]["200"]["content"]
        assert "422" not in operation["responses"]
        assert operation["responses"]["400"]["content"]["application/json"]
    assert "get" in paths["/api/chat/models"]
    assert "post" in paths["/api/chat/runs/{run_id}/cancel"]
    required = schema["components"]["schemas"]["ChatRequest"]["required"]
    assert set(required) == {"message", "context_type"}


def test_web_ui_fallback_and_api_precedence(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<!doctype html><title>UI</title>")
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "app.js").write_text("console.log('ui')")
    app = create_app(tray_agent(), settings=Settings(), static_dir=tmp_path)
    server = LiveServer(app).start()
    try:
        with server.client() as client:
            root = client.get("/")
            client_route = client.get("/c/1234")
            asset = client.get("/assets/app.js")
            escape = client.get("/..%2F..%2Fetc%2Fpasswd")
            unknown_api = client.get("/api/nothing-here")
            models = client.get("/api/chat/models")
    finally:
        server.stop()
    assert root.status_code == 200 and "<title>UI</title>" in root.text
    assert client_route.text == root.text
    assert asset.text == "console.log('ui')"
    assert escape.text == root.text
    assert unknown_api.status_code == 404 and unknown_api.json() == {"detail": "Not Found"}
    assert models.json()["models"]


def test_without_a_build_the_root_says_how_to_build(tmp_path: Path) -> None:
    app = create_app(tray_agent(), settings=Settings(), static_dir=tmp_path / "missing")
    server = LiveServer(app).start()
    try:
        with server.client() as client:
            page = client.get("/")
    finally:
        server.stop()
    assert page.status_code == 200
    assert "npm run build" in page.text


@pytest.mark.timeout(120)
def test_serve_command_serves_the_demo_with_a_store(tmp_path: Path) -> None:
    env = {**os.environ, "AGENTSTREAM_DATA_DIR": str(tmp_path), "AGENTSTREAM_MODEL": ""}
    env.pop("AGENTSTREAM_DATABASE_URL", None)
    with serve_process(env=env) as url, httpx.Client(base_url=url, timeout=30) as client:
        _, text = stream_text(client, TRAY, json={"message": "hello"})
        conversations = client.get("/api/conversations").json()["items"]
    frames = datas(parse_sse(text))
    assert frames[-1]["type"] == "complete"
    assert "offline demo" in frames[-1]["payload"]["message"]
    assert [c["id"] for c in conversations] == [frames[-1]["payload"]["conversation_id"]]
    assert (tmp_path / "agentstream.db").exists()


CHAT_MODULE = """
from agentstream import Agent
from agentstream.chat import ActionCall, ChatConfig, ServerActions
from agentstream.providers.scripted import ScriptedProvider

actions = ServerActions()

@actions.register("ping", description="Check the service")
async def ping(call: ActionCall) -> str:
    return "pong " + str(call.data["n"])

def echo(request):
    return {"text": "The model saw: " + request.messages[-1].content}

agent = Agent(model=ScriptedProvider(echo))
chat = ChatConfig(server_actions=actions)
"""


@pytest.mark.timeout(120)
def test_serve_command_takes_a_chat_config_with_server_actions(tmp_path: Path) -> None:
    (tmp_path / "myapp.py").write_text(CHAT_MODULE)
    action = {
        "message": "Ping",
        "interaction_type": "action_executed",
        "action": {"action": "ping", "data": {"n": 7}},
    }
    serving = serve_process("myapp:agent", "--chat", "myapp:chat", "--no-store", cwd=tmp_path)
    with serving as url, httpx.Client(base_url=url, timeout=30) as client:
        _, text = stream_text(client, TRAY, json=action)
        unknown = client.post(TRAY, json={**action, "action": {"action": "drop_tables"}})
    complete = datas(parse_sse(text))[-1]
    assert complete["type"] == "complete"
    assert "Outcome: pong 7" in complete["payload"]["message"]
    assert unknown.status_code == 400


def test_serve_command_rejects_a_chat_option_that_is_not_a_config(tmp_path: Path) -> None:
    (tmp_path / "myapp2.py").write_text(CHAT_MODULE)
    result = subprocess.run(
        [sys.executable, "-m", "agentstream.cli", "serve", "myapp2:agent", "--chat", "myapp2:agent"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert "not a ChatConfig or RunHooks" in result.stderr
