"""Two real MCP servers built with the ``mcp`` package, for the MCP tool-source tests.

``weather`` runs as a stdio subprocess (``python tests/tools/mcp_servers.py``): a plain tool,
one that reports progress, one that fails, and one that kills its own process mid-call.
``notes`` is served over streamable HTTP (:func:`notes_app`), and records the
``Authorization`` header of every request so the tests can see a forwarded token."""

from __future__ import annotations

import os
import sys
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

seen_authorization: list[str | None] = []


def weather() -> MCPServer:
    server = MCPServer("weather", log_level="ERROR")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True, idempotentHint=True))
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"18°C and sunny in {city}"

    @server.tool()
    async def count_stations(region: str, ctx: Context) -> str:
        """Count the weather stations of a region, reporting progress."""
        for done in range(1, 4):
            await ctx.report_progress(done, 3, f"scanning {region} {done}/3")
        return f"{region}: 3 stations"

    @server.tool()
    def forecast(city: str) -> str:
        """A forecast (this one always fails)."""
        raise ToolError(f"no forecast for {city}")

    @server.tool()
    def reboot_station(station: str) -> str:
        """Reboots a station (and takes the server down with it)."""
        sys.stdout.flush()
        os._exit(3)

    return server


def notes() -> MCPServer:
    server = MCPServer("notes", log_level="ERROR")

    @server.tool()
    def lookup_note(topic: str) -> str:
        """The team's note on a topic."""
        return f"note on {topic}: ship on Fridays"

    @server.tool()
    def list_topics() -> list[str]:
        """Every topic with a note."""
        return ["deploys", "oncall"]

    return server


def notes_app() -> Any:
    app = notes().streamable_http_app()

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            value = headers.get(b"authorization")
            seen_authorization.append(value.decode() if value else None)
        await app(scope, receive, send)

    return recording


if __name__ == "__main__":
    weather().run("stdio")
