"""Where the user is and what they picked in the chat UI: the page tree, context fields and
sign-in page a chat UI reads from ``GET /api/chat/config``, and what the server does with the
values that come back (checked, turned into tool options and scopes, never trusted as a grant).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentstream import Agent, ToolContext, Toolset, tool
from agentstream.chat import ChatConfig, ChatHooks, ContextField, LocationKeys, Page, Tab
from agentstream.providers.scripted import ScriptedProvider
from agentstream.server.config import ServerConfig
from agentstream.store import SqlConversationStore
from tests.server.conftest import Serve
from tests.server.helpers import datas, parse_sse

SEEN: list[dict[str, Any]] = []


@tool
def search_documents(ctx: ToolContext, query: str) -> str:
    """Search the brand's documents.

    Args:
        query: What to look for.
    """
    SEEN.append({"options": dict(ctx.options), "context": ctx.context})
    return "2 passages"


@tool
def add_note(text: str) -> str:
    """Add a note.

    Args:
        text: The note.
    """
    return "added"


BRAND = ContextField(key="brandRef", label="Brand", choices=("acme", "globex"))
DOCUMENTS = ContextField(key="ragEnabled", label="Search documents", default=False, option="rag")
CONFIG = ChatConfig(
    pages=[
        Page(
            name="reports",
            title="Evidence reports",
            tabs=[Tab(name="notes", tools=[add_note], subtabs=[Tab(name="drafts")])],
        ),
        Page(name="search"),
    ],
    context_fields=[BRAND, DOCUMENTS],
    option_scopes={"rag": "documents"},
)


def agent(turns: list[dict[str, Any]]) -> Agent:
    tools = Toolset()
    tools.add(search_documents, scope="documents")
    return Agent(model=ScriptedProvider({"turns": turns}), tools=tools)


def test_the_client_config_lists_pages_and_fields(serve: Serve) -> None:
    server = serve(agent([{"text": "ok"}]), hooks=ChatHooks(CONFIG))
    with server.client() as client:
        view = client.get("/api/chat/config").json()
    assert view["pages"] == [
        {
            "name": "reports",
            "title": "Evidence reports",
            "tabs": [
                {
                    "name": "notes",
                    "title": "Notes",
                    "subtabs": [{"name": "drafts", "title": "Drafts"}],
                }
            ],
        },
        {"name": "search", "title": "Search"},
    ]
    assert view["location_keys"] == {
        "page": "current_page",
        "tab": "active_tab",
        "subtab": "active_subtab",
    }
    assert view["context_fields"] == [
        {
            "key": "brandRef",
            "label": "Brand",
            "kind": "choice",
            "default": "acme",
            "choices": ["acme", "globex"],
        },
        {"key": "ragEnabled", "label": "Search documents", "kind": "switch", "default": False},
    ]
    assert "sign_in_url" not in view  # a 401 says it: a signed-out UI cannot read this


def tools_offered(server: Any, context: dict[str, Any]) -> list[str]:
    with server.client() as client:
        response = client.post("/api/chat/stream", json={"message": "hi", "context": context})
    assert response.status_code == 200, response.text
    complete = [d for d in datas(parse_sse(response.text)) if d["type"] == "complete"][0]
    return complete["payload"]["diagnostics"]["tools"]


def test_a_switch_with_an_option_offers_its_scope_and_reaches_tools(serve: Serve) -> None:
    SEEN.clear()
    turns = [
        {"tool_calls": [{"name": "search_documents", "arguments": {"query": "returns"}}]},
        {"text": "Found it."},
    ]
    server = serve(agent(turns), hooks=ChatHooks(CONFIG))
    on = {
        "brandRef": "globex",
        "ragEnabled": True,
        "current_page": "reports",
        "active_tab": "notes",
    }
    assert tools_offered(server, on) == ["add_note", "search_documents"]
    assert SEEN[-1]["options"] == {"rag": True}
    assert SEEN[-1]["context"]["brandRef"] == "globex"  # a preference the tool may read
    assert tools_offered(server, {**on, "ragEnabled": False}) == ["add_note"]


@pytest.mark.parametrize(
    ("context", "detail"),
    [
        ({"brandRef": "initech"}, "context.brandRef: expected one of acme, globex"),
        ({"ragEnabled": "yes"}, "context.ragEnabled: expected true or false"),
    ],
)
def test_a_value_the_declaration_does_not_allow_is_a_400_before_anything_is_stored(
    serve: Serve, tmp_path: Path, context: dict[str, Any], detail: str
) -> None:
    model = ScriptedProvider({"turns": [{"text": "never"}]})
    store = asyncio.run(SqlConversationStore.open(f"sqlite+aiosqlite:///{tmp_path / 'chat.db'}"))
    server = serve(Agent(model=model), hooks=ChatHooks(CONFIG), store=store)
    with server.client() as client:
        response = client.post("/api/chat/stream", json={"message": "hi", "context": context})
        assert response.status_code == 400
        assert detail in response.json()["detail"]
        assert client.get("/api/conversations").json()["items"] == []
    assert model.requests == []


def test_fields_may_not_be_declared_twice_or_take_the_location_keys() -> None:
    with pytest.raises(ValueError, match="brandRef"):
        ChatConfig(context_fields=[BRAND, BRAND])
    with pytest.raises(ValueError, match="page"):
        ChatConfig(
            context_fields=[ContextField(key="page", label="Page", choices=("a",))],
            location_keys=LocationKeys(page="page"),
        )
    with pytest.raises(ValueError, match="needs choices, or a boolean default"):
        ContextField(key="region", label="Region")
    with pytest.raises(ValueError, match="not a choice"):
        ContextField(key="region", label="Region", choices=("eu",), default="us")


def test_every_401_names_the_sign_in_page(serve: Serve) -> None:
    signing_in = ServerConfig(sign_in_url="/example-api/sign-in")
    server = serve(agent([{"text": "ok"}]), hooks=ChatHooks(CONFIG), server=signing_in, auth=True)
    with server.client() as client:
        for answer in (
            client.get("/api/chat/config"),
            client.get("/api/runs/nope/events"),
            client.post("/api/chat/stream", json={"message": "hi"}),
        ):
            assert answer.status_code == 401
            assert answer.json()["sign_in_url"] == "/example-api/sign-in"
    bare = serve(agent([{"text": "ok"}]), hooks=ChatHooks(ChatConfig()), auth=True)
    with bare.client() as client:
        assert "sign_in_url" not in client.get("/api/chat/config").json()
