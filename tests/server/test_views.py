"""What interactive views ask of the server (``/api/conversations/{id}/views``), on a live
server with a SQLite file, JWT auth and a real MCP server with an MCP App (the ``mcp``
package's Apps support, a stdio subprocess): the view's document read once and kept per
conversation, calls back allowed only for the view's own server's app tools, approval asked
for, another user refused, every call logged."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from agentstream import Agent, tool
from agentstream.providers.scripted import ScriptedProvider
from agentstream.store import SqlConversationStore, create_engine, upgrade
from agentstream.tools.mcp import MCPTools
from agentstream.tools.views import View
from tests.server.conftest import Serve
from tests.server.helpers import LiveServer, bearer, datas, parse_sse, stream_text, token
from tests.tools import mcp_apps_server

BOARD = mcp_apps_server.VIEW_URI
ALICE, BOB = bearer(token("alice")), bearer(token("bob"))
archived: list[str] = []


@tool(view=View(html="<p>notes</p>"))
def show_notes(topic: str) -> dict[str, Any]:
    """Show the notes on a topic."""
    return {"topic": topic, "notes": ["one"]}


@tool(visibility=("app",), requires_approval=True)
def archive_notes(topic: str) -> str:
    """Archive the notes (their view's button; the user agrees first)."""
    archived.append(topic)
    return f"archived {topic}"


RULES = {
    "rules": [
        {
            "match": "notes",
            "turns": [
                {"tool_calls": [{"name": "show_notes", "arguments": {"topic": "deploys"}}]},
                {"text": "Your notes."},
            ],
        },
        {
            "turns": [
                {"tool_calls": [{"name": "show_board", "arguments": {"team": "core"}}]},
                {"text": "Your board."},
            ],
        },
    ]
}


class Live:
    def __init__(self, server: LiveServer, board: MCPTools) -> None:
        self.server, self.board = server, board

    def ask(self, message: str, who: dict[str, str] = ALICE) -> str:
        """Send ``message`` in a new conversation; its id."""
        with self.server.client(headers=who) as client:
            response, text = stream_text(client, "/api/chat/stream", json={"message": message})
        assert response.status_code == 200, text
        complete = datas(parse_sse(text))[-1]["payload"]
        conversation_id: str = complete["conversation_id"]
        return conversation_id

    def document(
        self,
        conversation: str,
        uri: str = BOARD,
        source: str = "board",
        who: dict[str, str] = ALICE,
    ) -> Any:
        with self.server.client(headers=who) as client:
            return client.get(
                f"/api/conversations/{conversation}/views/document",
                params={"source": source, "uri": uri},
            )

    def call(self, conversation: str, body: dict[str, Any], who: dict[str, str] = ALICE) -> Any:
        with self.server.client(headers=who) as client:
            return client.post(f"/api/conversations/{conversation}/views/calls", json=body)


@pytest.fixture
def live(serve: Serve, tmp_path: Path) -> Iterator[Live]:
    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}"))
    board = MCPTools.stdio(sys.executable, [str(Path(mcp_apps_server.__file__))], label="board")
    agent = Agent(model=ScriptedProvider(RULES), tools=[board, show_notes, archive_notes])
    server = serve(agent, store=store, auth=True)
    server.call(upgrade(store.engine), timeout=60)
    archived.clear()
    yield Live(server, board)
    server.call(board.aclose())
    server.call(store.close())


def test_the_view_is_shown_from_the_stored_run_and_its_document_kept_per_conversation(
    live: Live,
) -> None:
    conversation = live.ask("show the board")
    with live.server.client(headers=ALICE) as client:
        shown = client.get(f"/api/conversations/{conversation}").json()
    [payload] = shown["messages"][-1]["payloads"]
    assert payload["kind"] == "mcp_app"
    assert payload["data"]["input"] == {"team": "core"}
    assert payload["data"]["result"]["structuredContent"]["team"] == "core"

    first = live.document(conversation)
    assert first.status_code == 200, first.text
    document = first.json()
    assert document["html"] == mcp_apps_server.VIEW_HTML
    assert document["csp"] == {"connectDomains": [mcp_apps_server.CONNECT]}
    assert document["prefers_border"] is True

    # The server goes away: the conversation keeps drawing the page it drew...
    def gone(_token: str | None) -> AbstractAsyncContextManager[Any]:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        return stdio_client(StdioServerParameters(command="/nonexistent/board-server"))

    live.server.call(live.board.aclose())
    live.board.transport = gone
    assert live.document(conversation).json() == document
    # ... and another conversation, which never drew it, cannot read it now.
    other = live.ask("hello again")
    refused = live.document(other)
    assert refused.status_code == 503, refused.text
    assert refused.json() == {"detail": "The view's server could not be reached"}


def test_a_document_whose_policy_is_not_origins_is_refused(live: Live) -> None:
    conversation = live.ask("show the board")
    refused = live.document(conversation, mcp_apps_server.WIDE_URI)
    assert refused.status_code == 502, refused.text
    assert refused.json()["detail"].startswith("The view's document was refused: csp.")
    # Not kept either: a call from it finds no view.
    call = {"source": "board", "uri": mcp_apps_server.WIDE_URI, "name": "add_card"}
    assert live.call(conversation, call).status_code == 404


def test_the_tray_shows_the_view_as_the_call_ends(live: Live) -> None:
    with live.server.client(headers=ALICE) as client:
        response, text = stream_text(client, "/api/chat/stream", json={"message": "board"})
    frames = datas(parse_sse(text))
    [finished] = [f for f in frames if f["type"] == "tool_complete"]
    view = finished["view"]
    assert (view["type"], view["data"]["tool"]) == ("mcp_app", "show_board")
    assert view["data"]["result"]["structuredContent"]["team"] == "core"
    [kept] = frames[-1]["payload"]["payloads"]
    assert kept == view  # the same payload, id and all, at the answer's end
    # A Python tool's view too (tools without one keep the frame as it was: test_tray.py).
    with live.server.client(headers=ALICE) as client:
        _, text = stream_text(client, "/api/chat/stream", json={"message": "notes"})
    [notes] = [f for f in datas(parse_sse(text)) if f["type"] == "tool_complete"]
    assert notes["view"]["data"]["source"] == "agentstream"


def test_another_users_conversation_is_not_found(live: Live) -> None:
    conversation = live.ask("show the board")
    assert live.document(conversation).status_code == 200
    for response in (
        live.document(conversation, who=BOB),
        live.call(conversation, {"source": "board", "uri": BOARD, "name": "add_card"}, who=BOB),
    ):
        assert response.status_code == 404, response.text
        assert response.json() == {"detail": "Conversation not found"}


def test_unknown_views_are_not_found(live: Live) -> None:
    conversation = live.ask("show the board")
    for source, uri in [
        ("board", "ui://board/secret.html"),  # no tool of the server names it
        ("elsewhere", BOARD),  # no such source
        ("agentstream", "ui://agentstream/archive_notes"),  # a tool without a view
    ]:
        response = live.document(conversation, uri, source)
        assert response.status_code == 404, (source, uri, response.text)
        assert response.json() == {"detail": "View not found"}


def test_calls_back_run_only_the_views_own_app_tools_and_are_logged(
    live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    conversation = live.ask("show the board")
    call = {"source": "board", "uri": BOARD, "name": "add_card"}
    arguments = {"team": "core", "title": "Ship it"}

    before = live.call(conversation, {**call, "arguments": arguments})
    assert before.status_code == 404, before.text  # the conversation has not drawn it yet
    assert live.document(conversation).status_code == 200

    caplog.set_level(logging.INFO, logger="agentstream.views")
    added = live.call(conversation, {**call, "arguments": arguments})
    assert added.status_code == 200, added.text
    assert added.json()["structuredContent"]["cards"][-1] == "Ship it"

    model_only = live.call(
        conversation, {**call, "name": "delete_board", "arguments": {"team": "core"}}
    )
    assert model_only.status_code == 403, model_only.text
    assert model_only.json() == {"detail": "delete_board is not a tool this view may call"}
    # Another source's tool, named from this view: refused the same way.
    local = live.call(conversation, {**call, "name": "archive_notes", "arguments": {"topic": "x"}})
    assert local.status_code == 403, local.text
    assert archived == []

    bad = live.call(conversation, {**call, "arguments": {"team": "core"}})
    assert bad.status_code == 200, bad.text
    assert bad.json()["isError"] is True  # the tool's schema refused it: an error result

    logged = [r.getMessage() for r in caplog.records if r.name == "agentstream.views"]
    assert any("view call: user=alice" in m and "tool=add_card outcome=ok" in m for m in logged)
    assert any("view call refused: user=alice" in m and "tool=delete_board" in m for m in logged)
    assert not any(token("alice") in m for m in logged)


def test_a_python_tools_view_calls_back_after_the_user_agreed(live: Live) -> None:
    conversation = live.ask("show my notes")
    document = live.document(conversation, "ui://agentstream/show_notes", "agentstream")
    assert document.json()["html"] == "<p>notes</p>"
    call = {
        "source": "agentstream",
        "uri": "ui://agentstream/show_notes",
        "name": "archive_notes",
        "arguments": {"topic": "deploys"},
    }
    asked = live.call(conversation, call)
    assert asked.status_code == 409, asked.text
    assert asked.json()["approval_required"] is True
    assert archived == []
    agreed = live.call(conversation, {**call, "approved": True})
    assert agreed.status_code == 200, agreed.text
    assert agreed.json() == {"content": [{"type": "text", "text": "archived deploys"}]}
    assert archived == ["deploys"]
    # The view's own tool is for the model only (Python tools are, unless they say so).
    own = live.call(conversation, {**call, "name": "show_notes"})
    assert own.status_code == 403


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"source": "board", "uri": "https://evil.example/", "name": "add_card"}, "uri"),
        ({"source": "board", "uri": BOARD, "name": "add_card", "arguments": [1]}, "arguments"),
        ({"source": "board", "uri": BOARD, "name": ""}, "name"),
        ({"source": "board", "uri": BOARD, "name": "add_card", "extra": 1}, "extra"),
        ({"uri": BOARD, "name": "add_card"}, "source"),
    ],
)
def test_a_bad_call_is_400_naming_the_field(live: Live, body: dict[str, Any], field: str) -> None:
    conversation = live.ask("show the board")
    response = live.call(conversation, body)
    assert response.status_code == 400, response.text
    assert response.json()["field"] == field


def test_what_a_view_does_in_the_browser_is_logged_for_a_view_the_conversation_drew(
    live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    conversation = live.ask("show the board")
    action = {"source": "board", "uri": BOARD, "action": "open_link", "url": "https://x.example/"}

    def report(body: dict[str, Any], who: dict[str, str] = ALICE) -> Any:
        with live.server.client(headers=who) as client:
            return client.post(f"/api/conversations/{conversation}/views/actions", json=body)

    assert report(action).status_code == 404  # not drawn yet
    assert live.document(conversation).status_code == 200
    caplog.set_level(logging.INFO, logger="agentstream.views")
    assert report(action).status_code == 204
    assert report({**action, "action": "message", "url": None}).status_code == 204
    assert report(action, who=BOB).status_code == 404
    bad = report({**action, "action": "eval"})
    assert bad.status_code == 400 and bad.json()["field"] == "action"
    logged = [r.getMessage() for r in caplog.records if r.name == "agentstream.views"]
    assert any(
        "view action: user=alice" in m and "action=open_link url=https://x.example/" in m
        for m in logged
    )
    assert any("view action: user=alice" in m and m.endswith("action=message") for m in logged)
