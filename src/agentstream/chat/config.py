"""What an application configures about its chat: one :class:`ChatConfig`.

Everything has a default, so ``ChatConfig()`` suits any agent: its instructions are the
identity, the request context is injected, suggestions and payload markers are parsed, tool
history and diagnostics are attached when the request asks. An application adds its pages
(003), its ``context_type`` variants (000), payload types and actions::

    ChatConfig(
        pages=[Page(name="reports", identity="You help analysts read reports.",
                    tools=[summarize_report], payload_types=["schema_proposal"])],
        payload_types=[PayloadType.llm("schema_proposal", instructions="...", is_global=False)],
        context_types={"tables": ContextType(identity=TABLES_ROLE, tool_guidance="")},
    )
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from agentstream.chat.actions import ClientAction, ServerActions
from agentstream.chat.context import DEFAULT_PREAMBLE, IdKeys
from agentstream.chat.pages import Location, LocationKeys, Page, Tab, locate
from agentstream.chat.payloads import PayloadType, PayloadTypes
from agentstream.chat.prompt import CONTEXT_LAST_LAYOUT, DEFAULT_LAYOUT, check_layout
from agentstream.chat.redaction import SECRET_KEYS
from agentstream.runs.request import RunRequest

if TYPE_CHECKING:
    from agentstream.server.auth import Authenticator

__all__ = ["ChatConfig", "ContextType", "Instructions"]

Instructions = str | Callable[[RunRequest], str | None] | None
"""Custom instructions: fixed text, or text chosen per request (003's stream-specific
instructions)."""


@dataclass(frozen=True, kw_only=True)
class ContextType:
    """A 000 ``context_type``: which tools and prompt a kind of request gets.

    ``None`` keeps the default for a section, ``""`` removes it: 000's ``tables`` replaces the
    role block and drops the tool guidance with ``ContextType(identity=TABLES_ROLE,
    tool_guidance="")``. ``scopes`` defaults to the context type's own name.
    """

    identity: str | None = None
    tool_guidance: str | None = None
    guidelines: str | None = None
    instructions: str | None = None
    scopes: Sequence[str] | None = None


@dataclass(frozen=True, kw_only=True)
class ChatConfig:
    identity: str | None = None
    """The default identity; ``None`` uses the agent's instructions."""
    tool_guidance: str | None = None
    """000's tool guidance block (concepts, which tool for what)."""
    guidelines: str | None = None
    """Response guidance: formatting rules."""
    instructions: Instructions = None
    layout: Sequence[str] = DEFAULT_LAYOUT
    context_type_layout: Sequence[str] = CONTEXT_LAST_LAYOUT
    """The layout for requests with a 000 ``context_type``: role block, tool guidance,
    response guidance, then the context."""
    context_preamble: str = DEFAULT_PREAMBLE
    context_ids: IdKeys = None
    """Context keys shown on their own line (``None``: every top-level ``*_id``)."""
    secret_keys: AbstractSet[str] = SECRET_KEYS
    """Context keys whose values never reach the model or diagnostics, by exact name
    (normalised: ``X-Api-Key`` is ``x_api_key``)."""
    context_types: Mapping[str, ContextType] = field(default_factory=dict)
    pages: Sequence[Page] = ()
    location_keys: LocationKeys = field(default_factory=LocationKeys)
    payload_types: Sequence[PayloadType] = ()
    client_actions: Sequence[ClientAction] = ()
    """Client actions available on every page."""
    server_actions: ServerActions = field(default_factory=ServerActions)
    list_tools: bool = True
    """List the run's tools in the capabilities section (003)."""
    suggestions: bool = True
    """Tell the model how to write suggested values and actions (they are parsed regardless)."""
    tool_history_payload: bool = True
    """Without another payload, ``custom_payload`` is the run's tool history (002)."""
    option_scopes: Mapping[str, str] = field(default_factory=dict)
    """Request options that offer a tool scope while they are true: ``{"rag_enabled": "rag"}``
    offers the tools registered under ``"rag"`` only to requests whose ``rag_enabled``
    option is on (001's ``ragEnabled``), so the model never sees a tool it may not use."""
    mounts: Mapping[str, Any] = field(default_factory=dict)
    """ASGI applications the server serves beside the chat endpoints, by path prefix
    (``{"/example-api": api}``): the application's own REST API, a sign-in page. A prefix
    must start with ``/`` and must not shadow the chat endpoints (``/api``, ``/v1``,
    ``/agent``)."""
    authenticator: Authenticator | None = None
    """Who is calling, when the application keeps its own sessions (a sign-in page that sets a
    cookie); ``None`` uses the authentication the server settings describe."""

    def __post_init__(self) -> None:
        check_layout(self.layout)
        check_layout(self.context_type_layout)
        names = [p.name for p in self.pages]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"pages declared twice: {duplicates}")
        for prefix in self.mounts:
            check_mount(prefix)
        registry = self.registry
        for page in self.pages:
            areas: list[Page | Tab] = [page, *page.tabs, *(s for t in page.tabs for s in t.subtabs)]
            for area in areas:
                unknown = [n for n in area.payload_types if n not in registry]
                if unknown:
                    raise ValueError(
                        f"{type(area).__name__.lower()} {area.name!r} declares unknown payload "
                        f"type(s) {unknown}; register them in ChatConfig.payload_types"
                    )

    @cached_property
    def registry(self) -> PayloadTypes:
        return PayloadTypes(self.payload_types)

    @cached_property
    def page_map(self) -> Mapping[str, Page]:
        return {p.name: p for p in self.pages}

    def locate(self, context: object) -> Location:
        return locate(self.page_map, context, self.location_keys)

    def context_type(self, name: str | None) -> ContextType | None:
        return self.context_types.get(name) if name else None

    def scopes(
        self,
        context_type: str | None,
        location: Location,
        options: Mapping[str, Any] | None = None,
    ) -> list[str]:
        """000's context-type scopes, then 003's page, tab and subtab scopes, then the scopes
        the request's ``options`` turn on (:attr:`option_scopes`)."""
        kind = self.context_type(context_type)
        if kind is not None and kind.scopes is not None:
            first = list(kind.scopes)
        else:
            first = [context_type] if context_type else []
        chosen = options or {}
        by_option = [scope for key, scope in self.option_scopes.items() if chosen.get(key) is True]
        return list(dict.fromkeys([*first, *location.scopes(), *by_option]))


RESERVED_PREFIXES = ("/api", "/v1", "/agent", "/openapi.json", "/docs", "/assets")
"""Paths of the server's own routes; a mount may not take them."""


def check_mount(prefix: str) -> None:
    """Raise ``ValueError`` for a mount prefix the server cannot serve beside its routes."""
    if not prefix.startswith("/") or prefix == "/" or prefix.endswith("/"):
        raise ValueError(f"mount prefix {prefix!r} must start with '/' and not end with one")
    for reserved in RESERVED_PREFIXES:
        if prefix == reserved or prefix.startswith(reserved + "/"):
            raise ValueError(f"mount prefix {prefix!r} would shadow the server's {reserved}")
