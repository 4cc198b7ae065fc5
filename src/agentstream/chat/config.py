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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import cached_property

from agentstream.chat.actions import ClientAction, ServerActions
from agentstream.chat.context import DEFAULT_PREAMBLE, IdKeys
from agentstream.chat.pages import Location, LocationKeys, Page, Tab, locate
from agentstream.chat.payloads import PayloadType, PayloadTypes
from agentstream.chat.prompt import CONTEXT_LAST_LAYOUT, DEFAULT_LAYOUT, check_layout
from agentstream.chat.redaction import SECRET_KEYS
from agentstream.runs.request import RunRequest

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

    def __post_init__(self) -> None:
        check_layout(self.layout)
        check_layout(self.context_type_layout)
        names = [p.name for p in self.pages]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"pages declared twice: {duplicates}")
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

    def scopes(self, context_type: str | None, location: Location) -> list[str]:
        """The context type's scopes, then the page, tab and subtab scopes."""
        kind = self.context_type(context_type)
        if kind is not None and kind.scopes is not None:
            first = list(kind.scopes)
        else:
            first = [context_type] if context_type else []
        return list(dict.fromkeys([*first, *location.scopes()]))
