"""Tools from MCP servers, through the official ``mcp`` package's client.

``MCPTools.stdio("cmd", ["arg"])`` starts a server as a subprocess; ``MCPTools.http(url)``
talks to one over streamable HTTP. Either is a :class:`~agentstream.tools.ToolSource`: pass
it in ``Agent(tool_sources=[...])`` (or among ``tools=[...]``) and each run gets the server's
tools, listed once and cached for ``cache_ttl`` seconds, narrowed by ``include``/``exclude``.

A call runs under the run's tool timeout and cancellation (cancelling the awaiting task cancels
the MCP request), the server's progress notifications become ``tool_progress`` events, and a
result the server marks ``isError`` (or a protocol error, or a server that dies mid-call) is a
tool error the model reads. A server that fails to start, or cannot be reached when a run
loads its tools, fails the load: the run goes on without tools and the client gets the
``tool_fallback`` warning. A dead connection is dropped and opened again on the next load.

A tool that declares an interactive view (MCP Apps: ``_meta.ui.resourceUri``, a ``ui://``
resource) is drawn by it: the result reaches clients as a view payload
(:mod:`agentstream.tools.views`), and the server reads the resource and runs the view's calls
back through this source (:meth:`MCPTools.read_view`, :meth:`MCPTools.app_tools`). The client
tells servers it hosts such views (the ``io.modelcontextprotocol/ui`` extension), and a tool
whose ``_meta.ui.visibility`` leaves out ``"model"`` is kept for views only.

Each connection lives in a task of its own (the SDK's transports are task-bound context
managers); calls from run tasks go through its session. With ``forward_token``, an HTTP
server receives the caller's bearer token, so connections are kept per token.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from agentstream.principal import Principal
from agentstream.tools.context import ToolContext
from agentstream.tools.definition import Tool
from agentstream.tools.results import ToolResult
from agentstream.tools.views import (
    APP_MIME_TYPE,
    ToolView,
    ViewResource,
    Visibility,
    clean_csp,
    view_payload,
)

__all__ = ["MCPToolError", "MCPTools"]

log = logging.getLogger("agentstream.tools.mcp")

APPS_EXTENSION = "io.modelcontextprotocol/ui"
"""The MCP Apps extension, which this client announces so servers offer their views."""

Transport = Callable[[str | None], AbstractAsyncContextManager[Any]]
"""``open(token)``: the SDK transport context manager yielding ``(read, write)`` streams."""


class MCPToolError(Exception):
    """A tool call an MCP server refused or could not finish; the message goes to the model."""


class _Connection:
    """One initialized MCP session, owned by a background task until :meth:`close`."""

    def __init__(self, label: str, transport: AbstractAsyncContextManager[Any]) -> None:
        self.label = label
        self._transport = transport
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._error: BaseException | None = None
        self.session: Any = None
        self._task: asyncio.Task[None] | None = None

    async def open(self, within: float) -> None:
        self._task = asyncio.create_task(self._own(), name=f"mcp:{self.label}")
        try:
            async with asyncio.timeout(within):
                await self._ready.wait()
        except TimeoutError:
            await self.close()
            raise ConnectionError(f"MCP server {self.label} did not start in {within:g}s") from None
        if self.session is None:
            raise ConnectionError(f"MCP server {self.label} failed to start: {self._error!r}")

    async def _own(self) -> None:
        from mcp import ClientSession

        try:
            extensions = {APPS_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}
            async with (
                self._transport as streams,
                ClientSession(streams[0], streams[1], extensions=extensions) as session,
            ):
                await session.initialize()
                self.session = session
                self._ready.set()
                await self._stop.wait()
        except Exception as exc:  # reported through open() and alive
            self._error = exc
        finally:
            self.session = None
            self._ready.set()

    @property
    def task(self) -> asyncio.Task[None]:
        """The owner task: it ends when the connection closes or the server goes away."""
        assert self._task is not None
        return self._task

    @property
    def alive(self) -> bool:
        return self.session is not None and self._task is not None and not self._task.done()

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(BaseException):
                async with asyncio.timeout(5):
                    await asyncio.shield(self._task)
            if not self._task.done():
                self._task.cancel()


@dataclass(eq=False, kw_only=True)
class MCPTools:
    """A tool source backed by one MCP server. Build it with :meth:`stdio` or :meth:`http`.

    ``include``/``exclude`` are tool-name collections (or a predicate over the name) applied
    to the server's list; ``prefix`` is prepended to every tool name, so two servers with the
    same tool names can serve one agent. ``startup_timeout`` bounds starting/connecting and
    listing; the call timeout is the run's (``Agent.tool_timeout``) unless ``call_timeout``.
    ``requires_approval`` names the tools (by the server's names) whose calls wait for a
    person's yes, whether the model or a view makes them (see :mod:`agentstream.pending`).
    """

    label: str
    transport: Transport
    include: Collection[str] | Callable[[str], bool] | None = None
    exclude: Collection[str] = ()
    prefix: str = ""
    cache_ttl: float = 300.0
    startup_timeout: float = 20.0
    call_timeout: float | None = None
    forward_token: bool = False
    requires_approval: Collection[str] = ()
    _connections: dict[str | None, _Connection] = field(default_factory=dict, repr=False)
    _listed: dict[str | None, tuple[float, list[Any]]] = field(default_factory=dict, repr=False)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        **options: Any,
    ) -> MCPTools:
        """A server started as ``command args...``, speaking MCP over stdin/stdout."""

        def transport(_token: str | None) -> AbstractAsyncContextManager[Any]:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=command, args=list(args), env=dict(env) if env else None, cwd=cwd
            )
            return stdio_client(params)

        return cls(label=options.pop("label", command), transport=transport, **options)

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        forward_token: bool = False,
        **options: Any,
    ) -> MCPTools:
        """A server at ``url`` over streamable HTTP. With ``forward_token`` the run's bearer
        token goes along as ``Authorization: Bearer ...``."""

        def transport(token: str | None) -> AbstractAsyncContextManager[Any]:
            return _http_transport(url, dict(headers or {}), token)

        label = options.pop("label", url)
        return cls(label=label, transport=transport, forward_token=forward_token, **options)

    def __repr__(self) -> str:
        return f"MCPTools({self.label!r})"

    # --- ToolSource ---------------------------------------------------------------------

    async def load(self, principal: Principal, scopes: Sequence[str]) -> Sequence[Tool]:
        """Every tool of the server this source offers, those only views call among them
        (their ``visibility`` leaves out ``"model"``; the loop does not offer them)."""
        key = principal.token if self.forward_token else None
        listed = self._listed.get(key)
        connection = self._connections.get(key)
        if (
            listed is None
            or time.monotonic() - listed[0] > self.cache_ttl
            or not (connection and connection.alive)
        ):
            connection = await self._connect(key)
            async with asyncio.timeout(self.startup_timeout):
                result = await connection.session.list_tools()
            listed = (time.monotonic(), [t for t in result.tools if self._wanted(t.name)])
            self._listed[key] = listed
        return [self._tool(key, spec) for spec in listed[1]]

    # --- ViewSource -----------------------------------------------------------------------

    @property
    def view_source(self) -> str:
        return self.label

    async def read_view(self, principal: Principal, uri: str) -> ViewResource:
        """The ``ui://`` resource ``uri``, read from the server as ``principal``."""
        if not any(
            t.view is not None and t.view.uri == uri for t in await self.load(principal, ())
        ):
            raise LookupError(f"no tool of MCP server {self.label} is drawn by {uri}")
        connection = await self._connect(principal.token if self.forward_token else None)
        async with asyncio.timeout(self.startup_timeout):
            result = await connection.session.read_resource(uri)
        for content in result.contents:
            if str(content.uri) != uri:
                continue
            if (content.mime_type or "").replace(" ", "") != APP_MIME_TYPE:
                raise LookupError(f"{uri} is {content.mime_type!r}, not {APP_MIME_TYPE}")
            html = getattr(content, "text", None)
            if html is None:
                html = base64.b64decode(content.blob).decode("utf-8")
            found = (content.meta or {}).get("ui")
            ui: dict[str, Any] = found if isinstance(found, dict) else {}
            border = ui.get("prefersBorder")
            csp = ui.get("csp") or {}
            if not isinstance(csp, dict):
                raise ValueError(f"csp of {uri} is not an object")
            return ViewResource(
                uri=uri,
                html=html,
                csp=clean_csp(csp),
                prefers_border=border if isinstance(border, bool) else None,
            )
        raise LookupError(f"MCP server {self.label} sent no content for {uri}")

    async def app_tools(self, principal: Principal) -> Sequence[Tool]:
        return [t for t in await self.load(principal, ()) if "app" in t.visibility]

    async def aclose(self) -> None:
        """Stop every connection (and so every stdio subprocess)."""
        connections, self._connections = list(self._connections.values()), {}
        self._listed.clear()
        for connection in connections:
            await connection.close()

    # --- internals ----------------------------------------------------------------------

    def _wanted(self, name: str) -> bool:
        if name in self.exclude:
            return False
        if self.include is None:
            return True
        if callable(self.include):
            return bool(self.include(name))
        return name in self.include

    async def _connect(self, key: str | None) -> _Connection:
        async with self._lock:
            connection = self._connections.get(key)
            if connection is not None and connection.alive:
                return connection
            if connection is not None:
                await connection.close()
            connection = _Connection(self.label, self.transport(key))
            self._connections.pop(key, None)
            await connection.open(self.startup_timeout)
            self._connections[key] = connection
            return connection

    def _tool(self, key: str | None, spec: Any) -> Tool:
        remote_name = spec.name
        name = f"{self.prefix}{remote_name}"
        view, visibility = self._ui(spec)

        async def call(ctx: ToolContext, **arguments: Any) -> str | ToolResult:
            result = await self._call(key, remote_name, arguments, ctx)
            text = _result_text(result)
            structured = result.structured_content
            if view is None:
                # The structured value, when there is one, is the output clients (and a view
                # calling the tool back) see.
                return text if structured is None else ToolResult(text=text, output=structured)
            shown = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            payload = view_payload(view, name, arguments, shown)
            output = structured if structured is not None else text
            return ToolResult(text=text, output=output, payload=payload)

        return Tool.from_schema(
            name=name,
            description=spec.description or spec.title or remote_name,
            parameters=spec.input_schema or {"type": "object", "properties": {}},
            function=call,
            takes_context=True,
            timeout=self.call_timeout,
            requires_approval=remote_name in self.requires_approval,
            view=view,
            visibility=visibility,
            # The server's word that calling it again with the same arguments changes nothing
            # more: a call cut short by a worker that died may then be run again.
            idempotent=bool(spec.annotations and spec.annotations.idempotent_hint),
        )

    def _ui(self, spec: Any) -> tuple[ToolView | None, tuple[Visibility, ...]]:
        """The tool's view and who may call it, from its ``_meta.ui`` (the flat
        ``ui/resourceUri`` key of earlier drafts too); what does not fit is ignored."""
        meta = spec.meta if isinstance(spec.meta, dict) else {}
        found = meta.get("ui")
        ui: dict[str, Any] = found if isinstance(found, dict) else {}
        uri = ui.get("resourceUri") or meta.get("ui/resourceUri")
        view = (
            ToolView(source=self.label, uri=uri)
            if isinstance(uri, str) and uri.startswith("ui://")
            else None
        )
        declared = ui.get("visibility")
        visibility: tuple[Visibility, ...] = ("model", "app")
        if isinstance(declared, list) and declared:
            visibility = tuple(v for v in ("model", "app") if v in declared)
            if not visibility:
                log.warning("MCP tool %s: no visibility understood in %r", spec.name, declared)
        return view, visibility

    async def _call(
        self, key: str | None, name: str, arguments: dict[str, Any], ctx: ToolContext
    ) -> Any:
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED

        connection = self._connections.get(key)
        if connection is None or not connection.alive:
            connection = await self._connect(key)

        async def progress(done: float, total: float | None, message: str | None) -> None:
            fraction = done / total if total else None
            ctx.report(message=message, fraction=fraction)

        call = asyncio.ensure_future(
            connection.session.call_tool(name, arguments, progress_callback=progress)
        )
        owner = connection.task
        try:
            await asyncio.wait({call, owner}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not call.done():
                call.cancel()
                with contextlib.suppress(BaseException):
                    await call
        if not call.done() or call.cancelled():
            self._drop(key, connection)
            raise MCPToolError(f"MCP server {self.label} stopped during the call")
        try:
            result = call.result()
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._drop(key, connection)
                raise MCPToolError(f"MCP server {self.label} stopped during the call") from None
            raise MCPToolError(exc.error.message) from None
        except Exception as exc:  # the transport failed: the server is gone
            self._drop(key, connection)
            raise MCPToolError(f"MCP server {self.label} failed: {type(exc).__name__}") from None
        if result.is_error:
            raise MCPToolError(_result_text(result) or "the tool failed")
        return result

    def _drop(self, key: str | None, connection: _Connection) -> None:
        if self._connections.get(key) is connection:
            del self._connections[key]
            self._listed.pop(key, None)


def _result_text(result: Any) -> str:
    import json

    parts = [getattr(c, "text", None) for c in result.content]
    texts = [p for p in parts if isinstance(p, str)]
    if texts:
        return "\n".join(texts)
    if result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False)
    return ""


@contextlib.asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str], token: str | None) -> Any:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    if token:
        headers = {**headers, "Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams
