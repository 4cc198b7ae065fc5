"""Where the user is, and what that makes available: tools by page, tab and subtab.

An application declares its pages, each with tabs and subtabs, and says what each offers:
tools, payload types the model may produce, client actions, an identity and instructions. The
request's context names the location (``current_page``, ``active_tab``, ``active_subtab``);
:func:`locate` resolves it and :meth:`Location.scopes` gives the tool scopes in the tray's order:
page, then tab, then subtab (the agent's global tools come first, added by
:meth:`agentstream.tools.Toolset.resolve`).

Scopes are plain strings, so tools can also be registered without a page config::

    @agent.toolset.scoped(page_scope("reports", "articles"))
    def summarize_article(...): ...
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentstream.chat.actions import ClientAction
from agentstream.tools import Tool, Toolset
from agentstream.tools.toolsets import as_tool

__all__ = [
    "ContextBuilder",
    "Location",
    "LocationKeys",
    "Page",
    "Tab",
    "locate",
    "page_scope",
]

ContextBuilder = Callable[[Any], str | None | Awaitable[str | None]]
"""Renders the page's loaded data for the prompt's context section, from the request context.
May be async (to load data)."""


def page_scope(page: str, tab: str | None = None, subtab: str | None = None) -> str:
    """The tool scope of a page, tab or subtab: ``page:reports``, ``page:reports/tab:articles``,
    ``page:reports/tab:articles/subtab:notes``."""
    scope = f"page:{page}"
    if tab is not None:
        scope += f"/tab:{tab}"
        if subtab is not None:
            scope += f"/subtab:{subtab}"
    return scope


@dataclass(frozen=True, kw_only=True)
class _Area:
    """What a page, a tab and a subtab each declare."""

    name: str
    title: str | None = None
    """How a chat UI names it (default: the name, humanised)."""
    identity: str | None = None
    context: ContextBuilder | None = None
    tools: Sequence[Tool | Callable[..., Any]] = ()
    payload_types: Sequence[str] = ()
    """Names of non-global payload types the model may produce here."""
    client_actions: Sequence[ClientAction] = ()
    instructions: str | None = None

    def _view(self, key: str, inner: Sequence[Tab]) -> dict[str, Any]:
        """The area (and those in it, under ``key``) as a chat UI's location picker lists
        it."""
        view: dict[str, Any] = {"name": self.name, "title": self.title or _humanised(self.name)}
        if inner:
            view[key] = [area.client_view() for area in inner]
        return view


@dataclass(frozen=True, kw_only=True)
class Tab(_Area):
    """A tab of a page, or a subtab of a tab (a subtab's own ``subtabs`` are not used).

    ``identity`` and ``context`` replace the page's on this tab (the innermost area that
    sets one wins), as for a :class:`Page`.
    """

    subtabs: Sequence[Tab] = ()

    def subtab(self, name: str | None) -> Tab | None:
        return next((s for s in self.subtabs if s.name == name), None)

    def client_view(self) -> dict[str, Any]:
        """The tab (and its subtabs) as a chat UI's location picker lists it."""
        return self._view("subtabs", self.subtabs)


@dataclass(frozen=True, kw_only=True)
class Page(_Area):
    """A page of the application, as the chat sees it.

    ``identity`` replaces the default identity section on this page; ``context`` renders the
    page's data for the context section (instead of the raw context JSON); ``instructions``
    join the custom instructions section.
    """

    tabs: Sequence[Tab] = ()

    def tab(self, name: str | None) -> Tab | None:
        return next((t for t in self.tabs if t.name == name), None)

    def client_view(self) -> dict[str, Any]:
        """The page (and its tabs) as a chat UI's location picker lists it."""
        return self._view("tabs", self.tabs)

    def install(self, toolset: Toolset) -> None:
        """Register this page's tools (and its tabs' and subtabs') under their scopes."""
        for item in self.tools:
            toolset.add(as_tool(item), scope=page_scope(self.name))
        for tab in self.tabs:
            for item in tab.tools:
                toolset.add(as_tool(item), scope=page_scope(self.name, tab.name))
            for sub in tab.subtabs:
                for item in sub.tools:
                    toolset.add(as_tool(item), scope=page_scope(self.name, tab.name, sub.name))


@dataclass(frozen=True, kw_only=True)
class LocationKeys:
    """Which context keys name the location (the chat tray's names by default)."""

    page: str = "current_page"
    tab: str = "active_tab"
    subtab: str = "active_subtab"


@dataclass(frozen=True, kw_only=True)
class Location:
    """The resolved location. ``page``/``tab``/``subtab`` are the configs found (``None`` when
    the application did not declare them); the names are what the request said."""

    page_name: str | None = None
    tab_name: str | None = None
    subtab_name: str | None = None
    page: Page | None = None
    tab: Tab | None = None
    subtab: Tab | None = None
    areas: tuple[Page | Tab, ...] = field(default=())
    """The declared configs that apply, outermost first."""

    def scopes(self) -> list[str]:
        """Page, tab and subtab scopes for the names the request gave, outermost first.

        Undeclared names still give scopes: tools may be registered on the toolset directly.
        """
        if self.page_name is None:
            return []
        scopes = [page_scope(self.page_name)]
        if self.tab_name is not None:
            scopes.append(page_scope(self.page_name, self.tab_name))
            if self.subtab_name is not None:
                scopes.append(page_scope(self.page_name, self.tab_name, self.subtab_name))
        return scopes

    @property
    def identity(self) -> str | None:
        """The innermost identity declared: subtab, then tab, then page."""
        return next((a.identity for a in reversed(self.areas) if a.identity), None)

    @property
    def context_builder(self) -> tuple[str, ContextBuilder] | None:
        """The innermost context builder declared, with the name of its area."""
        return next(((a.name, a.context) for a in reversed(self.areas) if a.context), None)

    def payload_types(self) -> list[str]:
        return _unique(name for area in self.areas for name in area.payload_types)

    def client_actions(self) -> list[ClientAction]:
        seen: dict[str, ClientAction] = {}
        for area in self.areas:
            for action in area.client_actions:
                seen.setdefault(action.name, action)
        return list(seen.values())

    def instructions(self) -> list[str]:
        return [area.instructions for area in self.areas if area.instructions]


def locate(
    pages: Mapping[str, Page], context: Any, keys: LocationKeys = LocationKeys()
) -> Location:
    """Resolve the location named by ``context`` (a mapping; anything else has none)."""
    if not isinstance(context, Mapping):
        return Location()
    page_name = _name(context.get(keys.page))
    tab_name = _name(context.get(keys.tab)) if page_name is not None else None
    subtab_name = _name(context.get(keys.subtab)) if tab_name is not None else None
    page = pages.get(page_name) if page_name is not None else None
    tab = page.tab(tab_name) if page is not None else None
    subtab = tab.subtab(subtab_name) if tab is not None else None
    areas = tuple(a for a in (page, tab, subtab) if a is not None)
    return Location(
        page_name=page_name,
        tab_name=tab_name,
        subtab_name=subtab_name,
        page=page,
        tab=tab,
        subtab=subtab,
        areas=areas,
    )


def _name(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _humanised(name: str) -> str:
    return name.replace("_", " ").replace("-", " ").strip().capitalize()
