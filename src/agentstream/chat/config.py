"""What an application configures about its chat: one :class:`ChatConfig`.

Everything has a default, so ``ChatConfig()`` suits any agent: its instructions are the
identity, the request context is injected, suggestions and payload markers are parsed, tool
history and diagnostics are attached when the request asks. An application adds its pages
(as the chat tray has them), its ``context_type`` variants (as the workflow assistant has
them), payload types and actions::

    ChatConfig(
        pages=[Page(name="reports", identity="You help analysts read reports.",
                    tools=[summarize_report], payload_types=["schema_proposal"])],
        payload_types=[PayloadType.llm("schema_proposal", instructions="...", is_global=False)],
        context_types={"tables": ContextType(identity=TABLES_ROLE, tool_guidance="")},
    )

It also carries what a browser UI shows before the first answer (``app_name``,
``starter_prompts``, how each payload type is drawn and which actions its card offers), served
as :meth:`ChatConfig.client_view` on ``GET /api/chat/config``. What an application adds to
the server itself (its mounted apps, its sessions, its sign-in page) is the server's
configuration, not the chat's: :class:`agentstream.server.config.ServerConfig`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from agentstream.chat.actions import ClientAction, ServerActions
from agentstream.chat.context import DEFAULT_PREAMBLE, IdKeys
from agentstream.chat.fields import ContextField
from agentstream.chat.pages import Location, LocationKeys, Page, Tab, locate
from agentstream.chat.payloads import PayloadType, PayloadTypes
from agentstream.chat.prompt import CONTEXT_LAST_LAYOUT, DEFAULT_LAYOUT, check_layout
from agentstream.chat.redaction import SECRET_KEYS
from agentstream.origins import is_origin
from agentstream.runs.request import RunRequest
from agentstream.tools import Toolset

__all__ = ["ChatConfig", "ContextType", "Instructions"]

Instructions = str | Callable[[RunRequest], str | None] | None
"""Custom instructions: fixed text, or text chosen per request (the chat tray's
stream-specific instructions)."""


@dataclass(frozen=True, kw_only=True)
class ContextType:
    """A workflow assistant ``context_type``: which tools and prompt a kind of request gets.

    ``None`` keeps the default for a section, ``""`` removes it: the workflow assistant's ``tables``
    context type replaces the role block and drops the tool guidance with
    ``ContextType(identity=TABLES_ROLE, tool_guidance="")``. ``scopes`` defaults to the context
    type's own name.
    """

    identity: str | None = None
    tool_guidance: str | None = None
    guidelines: str | None = None
    instructions: str | None = None
    scopes: Sequence[str] | None = None


@dataclass(frozen=True, kw_only=True)
class ChatConfig:
    """Everything an application configures about its chat; every field has a default."""

    identity: str | None = None
    """The default identity; ``None`` uses the agent's instructions."""
    tool_guidance: str | None = None
    """The workflow assistant's tool guidance block (concepts, which tool for what)."""
    guidelines: str | None = None
    """Response guidance: formatting rules."""
    instructions: Instructions = None
    layout: Sequence[str] = DEFAULT_LAYOUT
    context_type_layout: Sequence[str] = CONTEXT_LAST_LAYOUT
    """The layout for requests with a ``context_type``: role block, tool guidance,
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
    """List the run's tools in the capabilities section."""
    suggestions: bool = True
    """Tell the model how to write suggested values and actions (they are parsed regardless)."""
    tool_history_payload: bool = True
    """Without another payload, ``custom_payload`` is the run's tool history (for tray clients
    that read their tool cards from it)."""
    max_turns: int | None = None
    """The turn limit of every request, whatever its protocol's default (an assistant that
    builds workflows step by step needs more than the tray's 5); ``None`` keeps each
    protocol's."""
    default_context_type: str | None = None
    """The ``context_type`` of requests whose protocol carries none (the web UI and the other
    dialects), so they get that context type's tools and prompt too."""
    app_name: str | None = None
    """The application's name, shown by the web UI (default: "agentstream")."""
    starter_prompts: Sequence[str] = ()
    """Prompts the web UI offers on an empty chat (default: a generic few)."""
    trusted_origins: Sequence[str] = ()
    """Other sites of yours (bare origins, ``https://docs.example.com``) that the web UI and the
    tray open from an answer without asking, and whose images an answer shows. An
    ``open_url`` action to any other site first shows where it leads and asks, and its images
    are links; the page's own origin is always trusted."""
    confirm_links: bool = False
    """Ask the same before following a link in an answer to a site not trusted (by default,
    links in answers open in a new tab as links do)."""
    option_scopes: Mapping[str, str] = field(default_factory=dict)
    """Request options that offer a tool scope while they are true: ``{"rag_enabled": "rag"}``
    offers the tools registered under ``"rag"`` only to requests whose ``rag_enabled``
    option is on (the data playground's ``ragEnabled``), so the model never sees a tool it may
    not use."""
    context_fields: Sequence[ContextField] = ()
    """Values the user sets in the chat UI (a brand, a switch) that travel in every request's
    context; checked by the server, never trusted as authorisation."""

    def __post_init__(self) -> None:
        check_layout(self.layout)
        check_layout(self.context_type_layout)
        self._check_client_fields()
        names = [p.name for p in self.pages]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"pages declared twice: {duplicates}")
        self.page_tools  # noqa: B018 - built now: a page tool that is no tool fails here
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

    def _check_client_fields(self) -> None:
        for origin in self.trusted_origins:
            if not is_origin(origin):
                raise ValueError(
                    f"trusted_origins: {origin!r} is not an origin; write it as "
                    "scheme://host[:port], without a path or a trailing slash "
                    "(e.g. https://docs.example.com)"
                )
        keys = [f.key for f in self.context_fields]
        taken = {self.location_keys.page, self.location_keys.tab, self.location_keys.subtab}
        clashes = sorted({k for k in keys if keys.count(k) > 1 or k in taken})
        if clashes:
            raise ValueError(f"context fields declared twice, or naming the location: {clashes}")
        if self.max_turns is not None and (
            isinstance(self.max_turns, bool) or not 1 <= self.max_turns <= 100
        ):
            raise ValueError(f"max_turns must be between 1 and 100, got {self.max_turns!r}")
        if self.default_context_type is not None and (
            not self.default_context_type.strip()
            or (self.context_types and self.default_context_type not in self.context_types)
        ):
            raise ValueError(
                f"default_context_type {self.default_context_type!r} is not one of the "
                f"context types {sorted(self.context_types)}"
            )
        if isinstance(self.starter_prompts, str):
            raise ValueError("starter_prompts is a list of prompts, not one string")
        empty = [p for p in self.starter_prompts if not isinstance(p, str) or not p.strip()]
        if empty:
            raise ValueError(f"starter_prompts holds empty or non-text prompts: {empty!r}")
        for payload_type in self.payload_types:
            for action in payload_type.actions:
                if action.handler == "server" and action.action not in self.server_actions:
                    raise ValueError(
                        f"payload type {payload_type.name!r} offers the server action "
                        f"{action.action!r}, which is not registered in server_actions"
                    )

    def effective_context_type(self, requested: str | None) -> str | None:
        """The request's ``context_type``, or :attr:`default_context_type` when it has none."""
        return requested or self.default_context_type

    def client_view(self) -> dict[str, Any]:
        """What a browser UI needs before the first answer: the app's name, its starter
        prompts, how to draw each payload type (its title, view and card actions), the pages
        a user may say they are on, the context fields to offer, and which other sites links
        in answers open without asking."""
        keys = self.location_keys
        return {
            "app_name": self.app_name,
            "starter_prompts": list(self.starter_prompts),
            "payload_types": {t.name: t.client_view() for t in self.registry},
            "pages": [p.client_view() for p in self.pages],
            "location_keys": {"page": keys.page, "tab": keys.tab, "subtab": keys.subtab},
            "context_fields": [f.client_view() for f in self.context_fields],
            "trusted_origins": list(self.trusted_origins),
            "confirm_links": self.confirm_links,
        }

    @cached_property
    def registry(self) -> PayloadTypes:
        return PayloadTypes(self.payload_types)

    @cached_property
    def page_tools(self) -> Toolset:
        """The tools of the pages, tabs and subtabs under their scopes, built with the
        configuration; :meth:`ChatHooks.attach <agentstream.chat.ChatHooks.attach>` adds them
        to the agent's toolset."""
        tools = Toolset()
        for page in self.pages:
            page.install(tools)
        return tools

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
        """The context type's scopes, then the page, tab and subtab scopes, then the scopes
        the request's ``options`` turn on (:attr:`option_scopes`)."""
        kind = self.context_type(context_type)
        if kind is not None and kind.scopes is not None:
            first = list(kind.scopes)
        else:
            first = [context_type] if context_type else []
        chosen = options or {}
        by_option = [scope for key, scope in self.option_scopes.items() if chosen.get(key) is True]
        return list(dict.fromkeys([*first, *location.scopes(), *by_option]))
