"""What the web UI learns from the server's ChatConfig: the app's name, starter prompts, payload
cards (title, view, actions), the default context type, mounted apps and tools' display text,
checked in the config and through a live server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from agentstream import Agent
from agentstream.attachments import AttachmentLimits
from agentstream.chat import (
    ActionCall,
    ChatConfig,
    ChatHooks,
    ContextType,
    GraphView,
    PayloadAction,
    PayloadType,
    ServerActions,
    TableView,
)
from agentstream.events import Payload
from agentstream.principal import Principal
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import RunRequest
from agentstream.server.config import ServerConfig
from agentstream.store import SqlConversationStore, create_engine, upgrade
from agentstream.tools import ToolResult, Toolset, tool
from tests.server.conftest import Serve
from tests.server.helpers import datas, parse_sse

ACTIONS = ServerActions()
DECIDED: list[ActionCall] = []


@ACTIONS.register("approve_plan", description="Approve the plan")
async def _approve(call: ActionCall) -> str:
    DECIDED.append(call)
    return f"Plan {call.data['payload']['name']} approved."


PLAN = PayloadType.tool(
    "plan",
    title="Plan",
    view=GraphView(nodes="steps", edges="links", node_id="name", edge_label="port"),
    actions=[
        PayloadAction(label="Approve", action="approve_plan", style="primary"),
        PayloadAction(label="Copy", action="copy_text", handler="client"),
    ],
)


def test_payload_type_client_view_names_title_view_and_actions() -> None:
    view = PLAN.client_view()
    assert view["title"] == "Plan"
    assert view["view"] == {
        "kind": "graph",
        "nodes": "steps",
        "edges": "links",
        "node_id": "name",
        "node_label": "name",
        "node_detail": None,
        "edge_source": "source",
        "edge_target": "target",
        "edge_label": "port",
    }
    assert view["actions"] == [
        {"label": "Approve", "action": "approve_plan", "handler": "server", "style": "primary"},
        {"label": "Copy", "action": "copy_text", "handler": "client"},
    ]
    plain = PayloadType.llm("schema_proposal", instructions="Propose.").client_view()
    assert plain == {
        "name": "schema_proposal",
        "title": "Schema proposal",
        "description": "",
        "view": None,
        "actions": [],
    }
    table = TableView(rows="results", columns=[("title", "Title")]).client_view()
    assert table == {
        "kind": "table",
        "rows": "results",
        "columns": [{"key": "title", "label": "Title"}],
    }


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: PayloadAction(label=" ", action="x"), "needs a label"),
        (lambda: PayloadType.tool(" "), "needs a name"),
        (
            lambda: PayloadType.tool(
                "p",
                actions=[
                    PayloadAction(label="A", action="a"),
                    PayloadAction(label="B", action="a"),
                ],
            ),
            "declares action(s) twice: ['a']",
        ),
        (
            lambda: ChatConfig(payload_types=[PLAN]),
            "offers the server action 'approve_plan', which is not registered",
        ),
        (lambda: ChatConfig(starter_prompts="Hello"), "not one string"),
        (lambda: ChatConfig(starter_prompts=["Hi", "  "]), "empty or non-text prompts"),
        (
            lambda: ChatConfig(
                default_context_type="charts", context_types={"tables": ContextType()}
            ),
            "'charts' is not one of the context types ['tables']",
        ),
        (lambda: ChatConfig(max_turns=0), "max_turns must be between 1 and 100, got 0"),
        (lambda: ServerConfig(mounts={"example": FastAPI()}), "must start with '/'"),
        (lambda: ServerConfig(mounts={"/example/": FastAPI()}), "not end with '/'"),
        (lambda: ServerConfig(mounts={"/mine": "not an app"}), "not an ASGI application"),
        (
            lambda: ChatConfig(trusted_origins=["https://docs.example.com/"]),
            "trusted_origins: 'https://docs.example.com/' is not an origin",
        ),
        (lambda: ChatConfig(trusted_origins=["docs.example.com"]), "is not an origin"),
    ],
)
def test_bad_client_configuration_is_refused_with_a_clear_error(build: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        build()


@tool(display=lambda args: f"Drafting the plan “{args['name']}”…")
def propose_plan(name: str) -> ToolResult:
    """Propose a plan.

    Args:
        name: The plan's name.
    """
    data = {
        "name": name,
        "steps": [{"name": "a"}, {"name": "b"}],
        "links": [{"source": "a", "target": "b"}],
    }
    return ToolResult(text='{"status": "sent"}', payload=Payload(kind="plan", data=data))


@tool
def list_tables() -> str:
    """List the tables."""
    return "orders, customers"


def _agent() -> Agent:
    model = ScriptedProvider(
        {
            "rules": [
                {"match": "ran the action", "turns": [{"text": "Approved, thank you."}]},
                {
                    "turns": [
                        {
                            "text": "Here.",
                            "tool_calls": [{"name": "propose_plan", "arguments": {"name": "Q3"}}],
                        },
                        {"text": "Approve it when ready."},
                    ]
                },
            ]
        }
    )
    toolset = Toolset()
    toolset.add(propose_plan, scope="planning")
    toolset.add(list_tables, scope="tables")
    return Agent(model=model, tools=toolset, instructions="You plan.")


def _backend() -> ServerConfig:
    backend = FastAPI()

    @backend.get("/ping")
    async def ping() -> dict[str, str]:
        return {"pong": "yes"}

    return ServerConfig(mounts={"/example-api": backend})


def _config(**extra: Any) -> ChatConfig:
    return ChatConfig(
        app_name="Planner",
        starter_prompts=["Plan my quarter"],
        payload_types=[PLAN],
        server_actions=ACTIONS,
        context_types={"planning": ContextType(identity="You plan."), "tables": ContextType()},
        default_context_type="planning",
        **extra,
    )


def test_the_server_serves_the_client_config_and_the_mounted_app(serve: Serve) -> None:
    config = _config(trusted_origins=["https://docs.example.com"], confirm_links=True)
    server = serve(_agent(), hooks=ChatHooks(config), server=_backend())
    with server.client() as client:
        config = client.get("/api/chat/config")
        assert config.status_code == 200
        body = config.json()
        assert body["app_name"] == "Planner"
        assert body["starter_prompts"] == ["Plan my quarter"]
        assert body["payload_types"]["plan"]["actions"][0]["action"] == "approve_plan"
        assert (body["trusted_origins"], body["confirm_links"]) == (
            ["https://docs.example.com"],
            True,
        )
        assert client.get("/example-api/ping").json() == {"pong": "yes"}
        assert client.get("/example-api/nothing").status_code == 404


def test_without_a_chat_config_the_client_config_is_empty(serve: Serve) -> None:
    server = serve(_agent())
    with server.client() as client:
        empty = client.get("/api/chat/config").json()
    # The same shape as a ChatConfig with nothing set: a client needs no special case.
    # Without a store the server keeps no files: a message carries none.
    assert empty == {**ChatConfig().client_view(), "attachments": None}
    assert empty["app_name"] is None and empty["pages"] == [] and empty["context_fields"] == []


def test_the_client_config_says_what_files_a_message_may_carry(
    serve: Serve, tmp_path: Path
) -> None:
    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'c.db'}"))
    server = serve(
        _agent(),
        store=store,
        data_dir=tmp_path,
        attachments=AttachmentLimits(max_file_bytes=1000, max_files_per_message=3),
    )
    server.call(upgrade(store.engine), timeout=60)
    with server.client() as client:
        policy = client.get("/api/chat/config").json()["attachments"]
    assert policy == {"kinds": ["image", "pdf", "text"], "max_bytes": 1000, "max_files": 3}


def test_the_client_config_needs_the_same_authentication_as_the_chat(serve: Serve) -> None:
    server = serve(_agent(), hooks=ChatHooks(_config()), auth=True)
    with server.client() as client:
        assert client.get("/api/chat/config").status_code == 401


def test_the_default_context_type_gives_tray_requests_its_tools_and_display_text(
    serve: Serve,
) -> None:
    server = serve(_agent(), hooks=ChatHooks(_config()))
    with server.client() as client:
        reply = client.post("/api/chat/stream", json={"message": "plan it"})
    frames = datas(parse_sse(reply.text))
    start = next(f for f in frames if f["type"] == "tool_start")
    assert start["tool"] == "propose_plan"
    assert start["display"] == "Drafting the plan “Q3”…"
    complete = frames[-1]["payload"]
    assert complete["tool_history"][0]["display"] == "Drafting the plan “Q3”…"
    assert complete["payloads"][0]["type"] == "plan"


def test_a_payload_card_action_runs_its_server_action_with_the_payload(serve: Serve) -> None:
    DECIDED.clear()
    server = serve(_agent(), hooks=ChatHooks(_config()))
    data = {"payload_id": "abc12345", "payload": {"name": "Q3"}}
    with server.client() as client:
        reply = client.post(
            "/api/chat/stream",
            json={
                "message": "Approve",
                "interaction_type": "action_executed",
                "action": {"action": "approve_plan", "data": data},
            },
        )
    assert datas(parse_sse(reply.text))[-1]["payload"]["message"] == "Approved, thank you."
    assert [call.data for call in DECIDED] == [data]


async def test_a_request_with_its_own_context_type_keeps_it() -> None:
    hooks = ChatHooks(_config())
    agent = _agent()

    request = RunRequest(message="x", principal=Principal(user_id="u"), context_type="tables")
    prepared = await hooks.prepare(agent, request, [], [])
    assert [t.name for t in agent.toolset.resolve(prepared.scopes)] == ["list_tables"]
    default = RunRequest(message="x", principal=Principal(user_id="u"))
    prepared = await hooks.prepare(agent, default, [], [])
    assert [t.name for t in agent.toolset.resolve(prepared.scopes)] == ["propose_plan"]


def test_the_configured_turn_limit_replaces_the_protocols(serve: Serve) -> None:
    call = {"name": "list_tables", "arguments": {}}
    model = ScriptedProvider({"turns": [{"tool_calls": [call]}] * 6 + [{"text": "Seven."}]})
    toolset = Toolset()
    toolset.add(list_tables)
    agent = Agent(model=model, tools=toolset)
    limited = serve(agent, hooks=ChatHooks(ChatConfig()))
    with limited.client() as client:
        frames = datas(parse_sse(client.post("/api/chat/stream", json={"message": "go"}).text))
    assert frames[-1] == {"type": "error", "message": "Maximum tool-call rounds exceeded"}
    longer = serve(agent, hooks=ChatHooks(ChatConfig(max_turns=7)))
    with longer.client() as client:
        frames = datas(parse_sse(client.post("/api/chat/stream", json={"message": "go"}).text))
    assert frames[-1]["payload"]["message"].endswith("Seven.")
