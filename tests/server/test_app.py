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
from tests.server.helpers import (
    PROCESS_START,
    LiveServer,
    datas,
    parse_sse,
    serve_process,
    stream_text,
)

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
    required = schema["components"]["schemas"]["WorkflowChatRequest"]["required"]
    # ``message`` may be left out by a request that only answers approvals (a 400 otherwise).
    assert set(required) == {"context_type"}
    assert "approvals" in schema["components"]["schemas"]["WorkflowChatRequest"]["properties"]


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
from agentstream.server.config import ServerConfig
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

from starlette.responses import PlainTextResponse

async def backend(scope, receive, send):
    await PlainTextResponse("the application's own API")(scope, receive, send)

server = ServerConfig(mounts={"/backend": backend}, sign_in_url="/backend/sign-in")
"""


@pytest.mark.timeout(120)
def test_serve_command_takes_a_server_config(tmp_path: Path) -> None:
    (tmp_path / "myapp3.py").write_text(CHAT_MODULE)
    serving = serve_process("myapp3:agent", "--server", "myapp3:server", "--no-store", cwd=tmp_path)
    with serving as url, httpx.Client(base_url=url, timeout=30) as client:
        assert client.get("/backend/anything").text == "the application's own API"
    refused = refused_to_serve(tmp_path, "myapp3:agent", "--server", "myapp3:chat")
    assert "is a ChatConfig, not a ServerConfig" in refused


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
    refused = refused_to_serve(tmp_path, "myapp2:agent", "--chat", "myapp2:agent")
    assert "not a ChatConfig or RunHooks" in refused


def refused_to_serve(directory: Path, *args: str) -> str:
    """What ``agentstream serve ARGS`` says when it refuses to start (exit status 2)."""
    result = subprocess.run(
        [sys.executable, "-m", "agentstream.cli", "serve", *args],
        cwd=directory, capture_output=True, text=True, timeout=PROCESS_START, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    return result.stderr


def test_client_chosen_conversation_ids_are_scoped_to_the_caller(
    serve: Serve, tmp_path: Path
) -> None:
    """The workflow assistant and the data playground let the client name its conversation. The same
    name from another user or another tenant is another conversation: it neither reads nor adds to
    the first, nobody can claim it first, and its existence is not revealed. The stored conversation
    cannot be reached by anyone else through any dialect or the conversations API (404)."""
    from agentstream.store import SqlConversationStore, create_engine, upgrade
    from tests.server.agents import ichor_agent
    from tests.server.helpers import bearer, token

    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'iso.db'}"))
    server = serve(ichor_agent(), store=store, auth=True, tenant_claim="tenant")
    server.call(upgrade(store.engine), timeout=60)
    alice = bearer(token("alice", tenant="acme"))
    bob = bearer(token("bob", tenant="acme"))
    alice_elsewhere = bearer(token("alice", tenant="globex"))
    ask = {
        "message": "What does it do?",
        "context_type": "workflow",
        "conversation_id": "support-42",
    }
    playground = {
        "brandRef": "acme",
        "model": "scripted:script",
        "content": "Show 10 customers",
        "stream": False,
        "metadata": {"conversationId": "support-42"},
    }
    with server.client() as client:
        created, _ = stream_text(client, "/v1/agent/chat", json=ask, headers=alice)
        assert created.status_code == 200
        (mine,) = client.get("/api/conversations", headers=alice).json()["items"]
        before = client.get(f"/api/conversations/{mine['id']}", headers=alice).json()
        assert before["metadata"]["client_conversation_id"] == "support-42"
        same_name = {
            "ichor": stream_text(client, "/v1/agent/chat", json=ask, headers=bob)[0],
            "ichor-other-tenant": stream_text(
                client, "/v1/agent/chat", json=ask, headers=alice_elsewhere
            )[0],
            "playground": client.post(
                "/api/chat/agent-chat/stream?brandRef=acme", json=playground, headers=bob
            ),
        }
        reach = {
            "tray": client.post(
                TRAY, json={"message": "hi", "conversation_id": mine["id"]}, headers=bob
            ),
            "get": client.get(f"/api/conversations/{mine['id']}", headers=bob),
            "rename": client.patch(
                f"/api/conversations/{mine['id']}", json={"title": "x"}, headers=bob
            ),
            "delete": client.delete(f"/api/conversations/{mine['id']}", headers=bob),
            "get-other-tenant": client.get(
                f"/api/conversations/{mine['id']}", headers=alice_elsewhere
            ),
        }
        bad_ids = [
            client.post("/v1/agent/chat", json={**ask, "conversation_id": "x" * 513}, headers=bob),
            client.post(
                "/api/chat/agent-chat/stream?brandRef=acme",
                json={**playground, "metadata": {"conversationId": "x" * 513}},
                headers=bob,
            ),
        ]
        again, _ = stream_text(client, "/v1/agent/chat", json=ask, headers=alice)
        after = client.get(f"/api/conversations/{mine['id']}", headers=alice).json()
        bobs = client.get("/api/conversations", headers=bob).json()["items"]
        elsewhere = client.get("/api/conversations", headers=alice_elsewhere).json()["items"]
    assert {name: r.status_code for name, r in same_name.items()} == dict.fromkeys(same_name, 200)
    assert {name: r.status_code for name, r in reach.items()} == dict.fromkeys(reach, 404)
    assert all("What does" not in r.text for r in reach.values())
    assert [(r.status_code, r.json()["field"]) for r in bad_ids] == [
        (400, "conversation_id"),
        (400, "metadata.conversationId"),
    ]
    # Alice continues her own conversation by its name; nothing of the others' is in it.
    assert again.status_code == 200
    assert [m["content"] for m in after["messages"] if m["role"] == "user"] == [
        "What does it do?"
    ] * 2
    assert after["title"] == before["title"]
    # Bob and Alice-in-another-tenant each got their own conversation under the same name.
    assert len(bobs) == 1 and len(elsewhere) == 1
    assert len({mine["id"], bobs[0]["id"], elsewhere[0]["id"]}) == 3
    server.call(store.close())


def test_cors_wildcard_never_lets_another_site_use_the_session_cookie(serve: Serve) -> None:
    """``AGENTSTREAM_CORS_ORIGINS=*`` opens the API to bearer-token callers anywhere, but a
    page on any site must not be able to read a signed-in visitor's conversations with the
    session cookie: no origin is echoed with ``Access-Control-Allow-Credentials``."""
    from tests.server.helpers import bearer, token

    server = serve(tray_agent(), auth=True, cors_origins=("*",))
    evil = {"Origin": "https://evil.example"}
    cookie = {"Cookie": f"agentstream_session={token('alice')}"}
    with server.client() as client:
        preflight = client.options(
            "/api/chat/models",
            headers={**evil, "Access-Control-Request-Method": "GET"},
        )
        read = client.get("/api/chat/models", headers={**evil, **cookie})
        with_bearer = client.get("/api/chat/models", headers={**evil, **bearer(token("bob"))})
    for response in (preflight, read):
        assert response.headers.get("access-control-allow-origin") in (None, "*")
        assert "access-control-allow-credentials" not in response.headers
    # Bearer callers from other origins still work (the workflow assistant's cross-origin clients).
    assert with_bearer.status_code == 200
    assert with_bearer.headers["access-control-allow-origin"] == "*"


def test_absurdly_nested_json_is_400_not_a_recursion_error(serve: Serve) -> None:
    """A few kilobytes can nest hundreds of levels deep: that is a 400 naming the body, not
    a RecursionError while the context is redacted and rendered into the prompt."""
    from agentstream.chat import ChatHooks
    from tests.server.agents import ichor_agent

    server = serve(ichor_agent(), hooks=ChatHooks())
    deep: dict[str, object] = {"leaf": 1}
    for _ in range(500):
        deep = {"a": deep}
    fine: dict[str, object] = {"leaf": 1}
    for _ in range(20):
        fine = {"a": fine}
    ask = {"message": "What does it do?", "context_type": "workflow"}
    with server.client() as client:
        too_deep = {
            "ichor": client.post("/v1/agent/chat", json={**ask, "context": deep}),
            "tray": client.post(TRAY, json={"message": "hi", "context": deep}),
            "tray-action": client.post(
                TRAY, json={"message": "hi", "action": {"action": "x", "data": [deep]}}
            ),
        }
        unparsable = client.post(
            "/v1/agent/chat",
            content=b'{"message": "hi", "context_type": "workflow", "context": '
            + b"[" * 100_000
            + b"]" * 100_000
            + b"}",
            headers={"Content-Type": "application/json"},
        )
        ok, text = stream_text(client, "/v1/agent/chat", json={**ask, "context": fine})
    for response in too_deep.values():
        assert response.status_code == 400, response.text
        assert response.json()["field"] == "body"
        assert "levels deep" in response.json()["detail"]
    assert unparsable.status_code == 400
    assert ok.status_code == 200 and "message_complete" in text


def test_a_body_that_does_not_say_it_is_json_is_refused(serve: Serve) -> None:
    """Cross-site request forgery: a page on any site can POST a body with no Content-Type
    (a Blob without a type), text/plain or a form, without a CORS preflight, with the
    visitor's cookie or to a local anonymous server. None of them may start a run (FastAPI
    parses only JSON media types as JSON; older versions also parsed an untyped body)."""
    from tests.server.helpers import token

    server = serve(tray_agent(), auth=True)
    cookie = {"Cookie": f"agentstream_session={token('alice')}"}
    payload = b'{"message": "Find CRISPR articles"}'
    with server.client() as client:
        untyped = client.post(TRAY, content=payload, headers=cookie)
        plain = client.post(TRAY, content=payload, headers={**cookie, "Content-Type": "text/plain"})
        form = client.post(TRAY, data={"message": "hi"}, headers=cookie)
        typed, text = stream_text(
            client,
            TRAY,
            content=payload,
            headers={**cookie, "Content-Type": "application/json; charset=utf-8"},
        )
    for response, sent in (
        (untyped, "none"),
        (plain, "text/plain"),
        (form, "application/x-www-form-urlencoded"),
    ):
        assert response.status_code == 400
        assert response.json() == {
            "detail": f"body: expected Content-Type: application/json, got {sent}",
            "field": "body",
        }
    assert typed.status_code == 200
    assert datas(parse_sse(text))[-1]["type"] == "complete"


def test_the_demos_preview_buttons_are_server_actions(serve: Serve) -> None:
    from agentstream.cli.loading import load_hooks
    from agentstream.demo import demo_agent

    server = serve(demo_agent(), hooks=load_hooks(None, demo=True))
    approve = {
        "message": "Approve",
        "interaction_type": "action_executed",
        "action": {"action": "approve_preview", "data": {"payload_id": "abc12345"}},
    }
    with server.client() as client:
        _, text = stream_text(client, TRAY, json=approve)
    complete = datas(parse_sse(text))[-1]
    assert complete["type"] == "complete"
    assert (
        complete["payload"]["message"]
        == "Done. The preview was approved. (The demo saves nothing.)"
    )


def test_local_mode_answers_the_preflight_of_a_dev_server_on_loopback(serve: Serve) -> None:
    server = serve(tray_agent())
    with server.client() as client:
        answers = {
            origin: client.options(
                "/v1/agent/chat",
                headers={
                    "Origin": origin,
                    "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "authorization,content-type",
                },
            )
            for origin in ("http://localhost:5173", "http://127.0.0.1:3000", "https://evil.example")
        }
    for origin in ("http://localhost:5173", "http://127.0.0.1:3000"):
        assert answers[origin].status_code == 200
        assert answers[origin].headers["access-control-allow-origin"] == origin
    assert "access-control-allow-origin" not in answers["https://evil.example"].headers


def test_an_authenticated_server_allows_no_origin_it_was_not_given(serve: Serve) -> None:
    server = serve(tray_agent(), auth=True)
    with server.client() as client:
        preflight = client.options(
            "/v1/agent/chat",
            headers={"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"},
        )
    assert "access-control-allow-origin" not in preflight.headers


@pytest.mark.parametrize(("auth", "shown"), [(False, True), (True, False)])
def test_tray_diagnostics_by_default_only_in_local_mode(
    serve: Serve, auth: bool, shown: bool
) -> None:
    from agentstream.chat import ChatHooks
    from tests.server.helpers import bearer, token

    server = serve(tray_agent(), hooks=ChatHooks(), auth=auth)
    headers = bearer(token("alice")) if auth else {}
    with server.client() as client:
        response, text = stream_text(
            client, "/api/chat/stream", json={"message": "hi"}, headers=headers
        )
    assert response.status_code == 200
    complete = [d for d in datas(parse_sse(text)) if d.get("type") == "complete"][-1]
    assert ("diagnostics" in complete["payload"]) is shown


def test_create_app_and_agentstream_serve_default_to_the_same_hooks() -> None:
    """Without hooks of its own an app gets the chat hooks, as the command line serves them,
    so every answer is shaped the same way however the server was started."""
    from agentstream.chat import ChatHooks
    from agentstream.cli.loading import load_hooks

    app = create_app(tray_agent(), settings=Settings())
    hooks, served = app.state.server.runner.hooks, load_hooks(None)
    assert isinstance(hooks, ChatHooks) and isinstance(served, ChatHooks)
    assert hooks.answer_markers == served.answer_markers
