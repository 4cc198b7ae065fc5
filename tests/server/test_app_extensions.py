"""What an application adds to the server through its ``ServerConfig``, ``ChatConfig`` and
``Agent``: mounted sub-applications, its own authentication, offered models, and the friendly
text of a tool's end."""

from __future__ import annotations

import asyncio

import pytest
from fastapi import FastAPI
from starlette.requests import HTTPConnection

from agentstream import Agent, ToolResult, tool
from agentstream.errors import ConfigurationError
from agentstream.principal import Principal
from agentstream.providers.scripted import ScriptedProvider
from agentstream.server.app import create_app
from agentstream.server.auth import AuthError
from agentstream.server.config import ServerConfig
from agentstream.server.dialects import Dialect
from agentstream.server.settings import Settings
from tests.server.conftest import Serve
from tests.server.helpers import datas, parse_sse, stream_text


def sub_app() -> FastAPI:
    api = FastAPI()

    @api.get("/tickets")
    async def tickets() -> dict[str, list[int]]:
        return {"tickets": [1, 2]}

    return api


def test_mounts_are_served_beside_the_chat_and_before_the_web_ui(serve: Serve) -> None:
    agent = Agent(model=ScriptedProvider({"turns": [{"text": "hi"}]}))
    server = serve(agent, server=ServerConfig(mounts={"/example-api": sub_app()}))
    with server.client() as client:
        assert client.get("/example-api/tickets").json() == {"tickets": [1, 2]}
        assert client.get("/example-api/nothing").status_code == 404
        assert client.get("/api/chat/models").status_code == 200


@pytest.mark.parametrize("prefix", ["example-api", "/", "/x/"])
def test_a_mount_names_a_path(prefix: str) -> None:
    with pytest.raises(ConfigurationError, match="mount prefix"):
        ServerConfig(mounts={prefix: sub_app()})


TAKEN = [
    "/api",  # the server's own API
    "/api/mine",
    "/v1/x",  # the workflow assistant's
    "/ag-ui",  # the open protocols', which a hand-kept list once missed
    "/ai-sdk",
    "/ai-sdk/chat/x",  # under a route with a path parameter
    "/agent",
    "/docs",
    "/openapi.json",
    "/assets",  # the web UI's files
    "/embed",
]


@pytest.mark.parametrize("prefix", TAKEN)
def test_a_mount_may_not_take_a_path_of_the_server(prefix: str) -> None:
    agent = Agent(model=ScriptedProvider({"turns": [{"text": "hi"}]}))
    with pytest.raises(ConfigurationError, match=f"mount prefix {prefix!r} would shadow"):
        create_app(agent, settings=Settings(), server=ServerConfig(mounts={prefix: sub_app()}))


def test_a_mount_may_not_take_a_routes_path_nor_another_mounts() -> None:
    agent = Agent(model=ScriptedProvider({"turns": [{"text": "hi"}]}))

    def mount(*prefixes: str, dialects: tuple[Dialect, ...] = ()) -> None:
        mounts = {prefix: sub_app() for prefix in prefixes}
        create_app(
            agent, settings=Settings(), server=ServerConfig(mounts=mounts), dialects=dialects
        )

    # Served without the AI SDK, its paths are free; the runs API's routes never are.
    mount("/ai-sdk")
    with pytest.raises(
        ConfigurationError, match=r"would shadow the server's own routes \(under /api\)"
    ):
        mount("/api/runs")
    with pytest.raises(ConfigurationError, match="overlaps another mount"):
        mount("/example-api", "/example-api/v2")
    mount("/example-api", "/example-apis")


def test_a_dialect_may_only_serve_under_the_prefixes_it_declares() -> None:
    from dataclasses import replace

    from agentstream.server.dialects import tray

    confined = replace(tray.DIALECT, prefixes=("/api/chat/stream",))
    agent = Agent(model=ScriptedProvider({"turns": [{"text": "hi"}]}))
    with pytest.raises(ConfigurationError, match="/api/chat/runs/{run_id}/cancel"):
        create_app(agent, settings=Settings(), dialects=(confined,))


class HeaderSessions:
    """Signed in when the ``x-user`` header names someone."""

    async def authenticate(self, request: HTTPConnection, *, allow_cookie: bool) -> Principal:
        user = request.headers.get("x-user")
        if not user:
            raise AuthError("Sign in first.")
        return Principal(user_id=user)


def test_the_applications_authenticator_decides_who_calls(serve: Serve) -> None:
    agent = Agent(model=ScriptedProvider({"turns": [{"text": "hi"}]}))
    server = serve(agent, server=ServerConfig(authenticator=HeaderSessions()))
    with server.client() as client:
        refused = client.post("/agent/stream", json={"message": "hello"})
        assert refused.status_code == 401
        assert "Sign in first." in refused.text
        _, text = stream_text(
            client, "/agent/stream", json={"message": "hello"}, headers={"x-user": "maria"}
        )
    assert datas(parse_sse(text))[0]["user_id"] == "maria"


def test_offered_models_are_listed_and_can_be_picked(serve: Serve) -> None:
    own = ScriptedProvider({"turns": [{"text": "own answer"}]}, model="own")
    other = ScriptedProvider({"turns": [{"text": "other answer"}]}, model="other")
    agent = Agent(
        model=own,
        offered_models={"scripted:own=Own model": own, "scripted:other=Other model": other},
    )
    server = serve(agent)
    body = {"brandRef": "b", "model": "scripted:other", "content": "hi", "stream": False}
    with server.client() as client:
        models = client.get("/api/chat/models").json()["models"]
        answer = client.post("/api/chat/agent-chat/stream?brandRef=b", json=body).json()
        unknown = client.post(
            "/api/chat/agent-chat/stream?brandRef=b", json={**body, "model": "scripted:x"}
        )
    assert [(m["id"], m["name"], m["default"]) for m in models][:2] == [
        ("scripted:own", "Own model", True),
        ("scripted:other", "Other model", False),
    ]
    assert answer["content"]["message"] == "other answer"
    assert unknown.status_code == 400


def test_an_offered_model_needs_an_id() -> None:
    with pytest.raises(ValueError, match="has no id"):
        Agent(offered_models={"=Nameless": ScriptedProvider({"turns": []})})


@tool(display=lambda args: f"Alerting {args['who']}…")
async def alert(who: str) -> ToolResult:
    """Alert someone.

    Args:
        who: Whom to alert.
    """
    await asyncio.sleep(0)
    return ToolResult(text="sent", output={"ticket_id": 7}, display=f"{who} alerted, ticket #7")


def test_a_tool_result_gives_the_friendly_text_of_the_calls_end(serve: Serve) -> None:
    provider = ScriptedProvider(
        {
            "turns": [
                {"tool_calls": [{"name": "alert", "arguments": {"who": "the admin"}}]},
                {"text": "Done."},
            ]
        }
    )
    server = serve(Agent(model=provider, tools=[alert]))
    with server.client() as client:
        _, text = stream_text(client, "/agent/stream", json={"message": "alert"})
    frames = {f["type"]: f for f in datas(parse_sse(text))}
    assert frames["tool_start"]["display"] == "Alerting the admin…"
    assert frames["tool_end"]["display"] == "the admin alerted, ticket #7"
    assert frames["tool_end"]["result"] == {"ticket_id": 7}
