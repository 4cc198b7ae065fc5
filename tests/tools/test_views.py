"""Interactive views (MCP Apps) at the tool level: a real MCP server built with the ``mcp``
package's Apps support (``mcp_apps_server.py``, a stdio subprocess, and once over streamable
HTTP on a real uvicorn) and Python tools that
declare a view, driven through the agent loop with the scripted model."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentstream import Agent, tool
from agentstream.agent import RunInput
from agentstream.events import RunCompleted, RunStarted, ToolCallFinished
from agentstream.messages import ToolCall
from agentstream.principal import Principal
from agentstream.providers.scripted import ScriptedProvider
from agentstream.tools.mcp import MCPTools
from agentstream.tools.views import VIEW_PAYLOAD, LocalViews, View, clean_csp
from tests.server.helpers import LiveServer

from . import mcp_apps_server

SERVER = str(Path(mcp_apps_server.__file__))
ALICE = Principal(user_id="alice")


@pytest.fixture
async def board() -> AsyncIterator[MCPTools]:
    source = MCPTools.stdio(sys.executable, [SERVER], label="board")
    yield source
    await source.aclose()


def calls(name: str, arguments: dict[str, Any]) -> ScriptedProvider:
    turns = [{"tool_calls": [{"name": name, "arguments": arguments}]}, {"text": "Here it is."}]
    return ScriptedProvider({"turns": turns})


async def run(agent: Agent) -> list[Any]:
    return [e async for e in agent.run(RunInput(message="go", principal=ALICE))]


async def test_the_servers_tools_carry_their_view_and_who_may_call_them(board: MCPTools) -> None:
    tools = {t.name: t for t in await board.load(ALICE, [])}
    assert {n: t.visibility for n, t in tools.items()} == {
        "show_board": ("model", "app"),
        "add_card": ("app",),
        "delete_board": ("model",),
        "show_all_boards": ("model", "app"),
    }
    view = tools["show_board"].view
    assert view is not None and (view.source, view.uri) == ("board", mcp_apps_server.VIEW_URI)
    assert [t.name for t in await board.app_tools(ALICE)] == [
        "show_board",
        "add_card",
        "show_all_boards",
    ]


async def test_a_call_reaches_clients_as_the_views_payload_and_app_tools_stay_hidden(
    board: MCPTools,
) -> None:
    model = calls("show_board", {"team": "core"})
    events = await run(Agent(model=model, tools=[board]))

    assert isinstance(events[-1], RunCompleted), events[-1]
    started = next(e for e in events if isinstance(e, RunStarted))
    model_tools = ["delete_board", "show_all_boards", "show_board"]  # add_card: views only
    assert sorted(started.tool_names) == model_tools
    assert sorted(t.name for t in model.requests[0].tools) == model_tools
    [done] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert done.payload is not None and done.payload.kind == VIEW_PAYLOAD
    data = done.payload.data
    assert (data["source"], data["uri"], data["tool"]) == (
        "board",
        "ui://board/view.html",
        "show_board",
    )
    assert data["input"] == {"team": "core"}
    cards = ["Plan the sprint", "Fix the login bug"]
    assert data["result"]["structuredContent"] == {"team": "core", "cards": cards}
    assert data["result"]["content"][0]["type"] == "text"
    assert done.output == {"team": "core", "cards": cards}
    assert events[-1].payloads[0].kind == VIEW_PAYLOAD  # kept with the run


async def test_the_document_is_read_with_its_declared_policy(board: MCPTools) -> None:
    document = await board.read_view(ALICE, mcp_apps_server.VIEW_URI)
    assert document.html == mcp_apps_server.VIEW_HTML
    assert document.csp == {"connectDomains": [mcp_apps_server.CONNECT]}
    assert document.prefers_border is True
    with pytest.raises(LookupError):  # no tool of the server names it
        await board.read_view(ALICE, "ui://board/secret.html")
    with pytest.raises(ValueError, match="is not an origin"):
        await board.read_view(ALICE, mcp_apps_server.WIDE_URI)


def test_a_python_tool_declares_its_view_and_who_may_call_it(tmp_path: Path) -> None:
    page = tmp_path / "view.html"
    page.write_text("<p>from a file</p>", "utf-8")

    @tool(view=View(path=page, csp={"resourceDomains": ["https://cdn.example.com"]}))
    def chart(points: int) -> dict[str, Any]:
        """Draw a chart."""
        return {"points": points}

    @tool(visibility=("app",))
    def refresh(points: int) -> dict[str, Any]:
        """Refresh the chart (its view's button)."""
        return {"points": points + 1}

    assert chart.view is not None and chart.view.uri == "ui://agentstream/chart"
    assert chart.visibility == ("model",)
    views = LocalViews([chart, refresh])
    import asyncio

    document = asyncio.run(views.read_view(ALICE, "ui://agentstream/chart"))
    assert document.html == "<p>from a file</p>"
    assert document.csp == {"resourceDomains": ["https://cdn.example.com"]}
    assert [t.name for t in asyncio.run(views.app_tools(ALICE))] == ["refresh"]
    with pytest.raises(LookupError):
        asyncio.run(views.read_view(ALICE, "ui://agentstream/refresh"))


async def test_a_python_tools_result_is_drawn_by_its_view_and_views_only_tools_are_hidden() -> None:
    @tool(view=View(html="<p>chart</p>"))
    def chart(points: int) -> dict[str, Any]:
        """Draw a chart."""
        return {"points": points}

    @tool(visibility=("app",))
    def refresh() -> str:
        """Only the chart's page calls this."""
        return "again"

    model = calls("chart", {"points": 3})
    events = await run(Agent(model=model, tools=[chart, refresh]))
    assert [t.name for t in model.requests[0].tools] == ["chart"]
    [done] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert done.payload is not None
    assert done.payload.data == {
        "source": "agentstream",
        "uri": "ui://agentstream/chart",
        "tool": "chart",
        "input": {"points": 3},
        "result": {
            "content": [{"type": "text", "text": '{"points": 3}'}],
            "structuredContent": {"points": 3},
        },
    }


@pytest.mark.parametrize(
    "declared",
    [
        {"connectDomains": ["https://a.example; script-src *"]},
        {"connectDomains": ["'unsafe-eval'"]},
        {"resourceDomains": ["javascript://x"]},
        {"frameDomains": "https://a.example"},
        {"connectDomains": ["https://a.example/path"]},
        {"connectDomains": ["https://user@a.example"]},
    ],
)
def test_a_declared_policy_that_is_not_a_list_of_origins_is_refused(
    declared: dict[str, Any],
) -> None:
    with pytest.raises(ValueError, match="csp"):
        clean_csp(declared)
    with pytest.raises(ValueError, match="csp"):
        View(html="<p>x</p>", csp=declared)


def test_a_declared_policy_keeps_origins_and_wildcard_subdomains_only() -> None:
    declared = {
        "connectDomains": ["https://api.example.com/", "wss://live.example.com:8443"],
        "resourceDomains": ["https://*.cdn.example.com"],
        "somethingElse": ["https://ignored.example"],
    }
    assert clean_csp(declared) == {
        "connectDomains": ["https://api.example.com", "wss://live.example.com:8443"],
        "resourceDomains": ["https://*.cdn.example.com"],
    }


def test_a_view_needs_html_or_a_path_not_both() -> None:
    with pytest.raises(ValueError, match="either html or a path"):
        View()
    with pytest.raises(ValueError, match="either html or a path"):
        View(html="<p/>", path="view.html")
    with pytest.raises(ValueError, match="visibility"):
        tool(visibility=("everyone",))  # type: ignore[arg-type]


async def test_a_view_over_streamable_http_is_read_as_the_user() -> None:
    server = LiveServer(mcp_apps_server.board_app()).start()  # type: ignore[arg-type]
    source = MCPTools.http(f"{server.url}/mcp", label="board", forward_token=True)
    user = Principal(user_id="alice", token="alice-token")
    try:
        document = await source.read_view(user, mcp_apps_server.VIEW_URI)
        assert document.csp == {"connectDomains": [mcp_apps_server.CONNECT]}
        assert list(source._connections) == ["alice-token"]  # the user's own connection
    finally:
        await source.aclose()
        server.stop()


async def test_the_server_s_tools_may_need_approval_from_a_view_too() -> None:
    source = MCPTools.stdio(sys.executable, [SERVER], label="board", requires_approval={"add_card"})
    try:
        [add_card] = [t for t in await source.app_tools(ALICE) if t.name == "add_card"]
        show = next(t for t in await source.load(ALICE, []) if t.name == "show_board")
    finally:
        await source.aclose()
    call = ToolCall(id="c1", name="add_card", arguments={"team": "core", "title": "x"})
    assert add_card.needs_approval(call)
    assert not show.needs_approval(ToolCall(id="c2", name="show_board"))
