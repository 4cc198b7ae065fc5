"""A real MCP server with an interactive view, built with the ``mcp`` package's MCP Apps
support (``mcp.server.apps.Apps``): a team board.

- ``show_board(team)`` is drawn by ``ui://board/view.html`` (``board_view.html``, which
  speaks the protocol by hand) and returns the cards as structured content;
- ``add_card(team, title)`` is for the view only (``visibility=["app"]``);
- ``delete_board(team)`` is for the model only (``visibility=["model"]``): a view calling it
  must be refused by the host;
- ``show_all_boards()`` is drawn by ``ui://board/wide.html``, whose declared policy smuggles a
  directive in an origin: the host must refuse to draw it.

Run as a stdio subprocess (``python tests/tools/mcp_apps_server.py``), or over streamable
HTTP with :func:`board_app`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server.apps import Apps, ResourceCsp
from mcp.server.mcpserver import MCPServer

VIEW_URI = "ui://board/view.html"
VIEW_HTML = (Path(__file__).parent / "board_view.html").read_text("utf-8")
CONNECT = "https://api.board.example"
WIDE_URI = "ui://board/wide.html"
"""A view whose declared policy is not a list of origins: a host must refuse it."""

boards: dict[str, list[str]] = {}


def board() -> MCPServer:
    apps = Apps()

    @apps.tool(resource_uri=VIEW_URI, description="Show a team's board of cards.")
    def show_board(team: str) -> dict[str, Any]:
        cards = boards.setdefault(team, ["Plan the sprint", "Fix the login bug"])
        return {"team": team, "cards": list(cards)}

    @apps.tool(resource_uri=VIEW_URI, visibility=["app"], description="Add a card to a board.")
    def add_card(team: str, title: str) -> dict[str, Any]:
        cards = boards.setdefault(team, [])
        cards.append(title)
        return {"team": team, "cards": list(cards)}

    @apps.tool(resource_uri=VIEW_URI, visibility=["model"], description="Delete a board.")
    def delete_board(team: str) -> str:
        boards.pop(team, None)
        return f"deleted {team}"

    @apps.tool(resource_uri=WIDE_URI, description="Show every board (its page asks too much).")
    def show_all_boards() -> dict[str, Any]:
        return {"boards": sorted(boards)}

    apps.add_html_resource(
        WIDE_URI,
        "<p>every board</p>",
        csp=ResourceCsp(connect_domains=["https://api.board.example; script-src *"]),
    )
    apps.add_html_resource(
        VIEW_URI,
        VIEW_HTML,
        name="board",
        csp=ResourceCsp(connect_domains=[CONNECT]),
        prefers_border=True,
    )
    return MCPServer("board", extensions=[apps], log_level="ERROR")


def board_app() -> Any:
    return board().streamable_http_app()


if __name__ == "__main__":
    board().run("stdio")
