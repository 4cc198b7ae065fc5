"""Interactive views: a tool whose result is drawn by an HTML page of its own (MCP Apps).

The MCP Apps extension (``io.modelcontextprotocol/ui``) lets a tool name a ``ui://`` resource,
an HTML document (``text/html;profile=mcp-app``) that a host draws in a sandboxed frame, feeds
the call's input and result over ``postMessage``, and lets call back the tools its server marks
callable from the app. agentstream is such a host: an MCP server's tools declare their view in
``_meta.ui`` (:class:`~agentstream.tools.MCPTools` reads it), and a Python tool declares one
with ``@tool(view=View(html=...))``.

Three things live here, shared by both kinds of source:

- :class:`View`, what a Python tool declares (its HTML, or a file beside it, and the origins
  its page may reach); :class:`ToolView`, the link a :class:`~agentstream.tools.Tool` carries
  to its view (which source, which ``ui://`` resource).
- :func:`view_payload`: a call's result reaches clients as a ``mcp_app`` payload, the view's
  address with the call's input and its result in MCP's ``CallToolResult`` shape. A payload is
  kept with the run, so a view shown once is drawn again after a reload from what was stored.
- :class:`ViewSource`: what the server asks of a source when a view is drawn or calls back
  (its resource, and the tools it may call). ``LocalViews`` answers for an agent's own tools.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from agentstream.events import Payload
from agentstream.principal import Principal

if TYPE_CHECKING:  # a tool names its view: the definition imports this module
    from agentstream.tools.definition import Tool

__all__ = [
    "APP_MIME_TYPE",
    "LOCAL_SOURCE",
    "VIEW_PAYLOAD",
    "LocalViews",
    "ToolView",
    "View",
    "ViewResource",
    "ViewSource",
    "Visibility",
    "call_result",
    "view_payload",
]

APP_MIME_TYPE = "text/html;profile=mcp-app"
"""The MIME type of an MCP App's ``ui://`` resource."""

VIEW_PAYLOAD = "mcp_app"
"""The payload kind a call drawn by a view reaches clients as."""

LOCAL_SOURCE = "agentstream"
"""The source name of an agent's own Python tools (an MCP server's is its ``label``)."""

Visibility = Literal["model", "app"]
"""Who may call a tool: the model, a view of its source (``_meta.ui.visibility``)."""

CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
"""The origins a view may declare (``_meta.ui.csp``); anything else in it is dropped."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ViewResource:
    """A view's document as the host draws it: the HTML, and what its page may reach.

    ``csp`` holds only the declared origin lists (:data:`CSP_KEYS`), each origin checked by
    :func:`clean_csp`: the browser builds the page's Content-Security-Policy from them, so
    nothing else a server wrote there may reach that header."""

    uri: str
    html: str
    csp: dict[str, list[str]] = field(default_factory=dict)
    prefers_border: bool | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "html": self.html,
            "csp": self.csp,
            "prefers_border": self.prefers_border,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class View:
    """The view a Python tool's result is drawn with: ``html``, or a ``path`` to an HTML file
    (relative paths are read from the current directory; pass ``Path(__file__).parent /
    "view.html"`` for one beside the tool). ``csp`` names the origins the page may reach
    (``{"connectDomains": [...], "resourceDomains": [...]}``); by default none: the page runs
    its own inline scripts and styles and reaches nothing."""

    html: str | None = None
    path: str | Path | None = None
    csp: Mapping[str, Sequence[str]] | None = None
    prefers_border: bool | None = None

    def __post_init__(self) -> None:
        if (self.html is None) == (self.path is None):
            raise ValueError("a View needs either html or a path to an HTML file, not both")
        clean_csp(self.csp or {})  # a bad origin is told where the view is declared

    def resource(self, uri: str) -> ViewResource:
        html = self.html if self.html is not None else Path(str(self.path)).read_text("utf-8")
        return ViewResource(
            uri=uri, html=html, csp=clean_csp(self.csp or {}), prefers_border=self.prefers_border
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolView:
    """The view a tool's result is drawn with: which source serves it and its ``ui://``
    address there; ``content`` is a Python tool's own :class:`View`."""

    source: str
    uri: str
    content: View | None = None


def clean_csp(declared: Mapping[str, Any]) -> dict[str, list[str]]:
    """The declared origin lists, each origin a plain ``scheme://host[:port]`` (a ``*.``
    subdomain wildcard allowed). Raises ``ValueError`` for anything else: an origin list is
    copied into a Content-Security-Policy, where a ``;`` or a keyword would widen it."""
    cleaned: dict[str, list[str]] = {}
    for key in CSP_KEYS:
        origins = declared.get(key)
        if not origins:
            continue
        if isinstance(origins, str) or not isinstance(origins, Iterable):
            raise ValueError(f"csp.{key} must be a list of origins")
        cleaned[key] = [_origin(key, o) for o in origins]
    return cleaned


def _origin(key: str, origin: Any) -> str:
    from urllib.parse import urlsplit

    if not isinstance(origin, str):
        raise ValueError(f"csp.{key}: {origin!r} is not an origin")
    parts = urlsplit(origin)
    host = parts.hostname or ""
    plain = host.removeprefix("*.")
    if (
        parts.scheme not in ("https", "http", "wss", "ws")
        or not plain
        or any(c not in "abcdefghijklmnopqrstuvwxyz0123456789.-" for c in plain)
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or parts.username
        or any(c in origin for c in " ;,'\"\n\r\t")
    ):
        raise ValueError(f"csp.{key}: {origin!r} is not an origin such as https://api.example.com")
    return origin.rstrip("/")


def call_result(text: str, output: Any = None, *, is_error: bool = False) -> dict[str, Any]:
    """A result in MCP's ``CallToolResult`` shape, as a view receives it: the text, and the
    structured value when the tool returned an object."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if isinstance(output, Mapping):
        result["structuredContent"] = json.loads(json.dumps(output, default=str))
    if is_error:
        result["isError"] = True
    return result


def view_payload(view: ToolView, tool: str, arguments: Any, result: Mapping[str, Any]) -> Payload:
    """The payload a call drawn by a view reaches clients as, and is stored with the run."""
    return Payload(
        kind=VIEW_PAYLOAD,
        data={
            "source": view.source,
            "uri": view.uri,
            "tool": tool,
            "input": arguments,
            "result": dict(result),
        },
        summary=f"{tool} (interactive view)",
    )


@runtime_checkable
class ViewSource(Protocol):
    """A source whose tools may be drawn by views: the server reads a view's document from
    it and runs the calls a view makes through it, as the user who sees the view."""

    @property
    def view_source(self) -> str:
        """The name payloads carry to find this source again (:attr:`ToolView.source`)."""
        ...

    async def read_view(self, principal: Principal, uri: str) -> ViewResource:
        """The ``ui://`` resource ``uri``; ``LookupError`` when the source has none."""
        ...

    async def app_tools(self, principal: Principal) -> Sequence[Tool]:
        """The tools a view of this source may call."""
        ...


class LocalViews:
    """The views of an agent's own Python tools (``@tool(view=View(...))``)."""

    view_source = LOCAL_SOURCE

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools = list(tools)

    async def read_view(self, principal: Principal, uri: str) -> ViewResource:
        for t in self._tools:
            if t.view is not None and t.view.uri == uri and t.view.content is not None:
                return t.view.content.resource(uri)
        raise LookupError(f"no view {uri}")

    async def app_tools(self, principal: Principal) -> Sequence[Tool]:
        return [t for t in self._tools if "app" in t.visibility]
