"""Which tools a run may use.

A :class:`Toolset` holds global tools and tools registered under *scopes*: plain strings an
application chooses. The workflow assistant filters by ``context_type`` (scope ``"workflow"``); the
chat tray resolves "global + page + tab + subtab" (scopes ``"page:reports"``,
``"page:reports/tab:articles"``, ...). :meth:`Toolset.resolve` returns the union in that order
without duplicates.

A :class:`ToolSource` loads tools at run time (a remote catalogue, a plugin). If loading fails the
run continues without those tools and the client gets a ``tool_fallback`` warning (as the ops agent
shows it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from agentstream.principal import Principal
from agentstream.tools.definition import Tool, tool

__all__ = ["ToolSource", "Toolset", "as_tool"]


def as_tool(item: Tool | Callable[..., Any]) -> Tool:
    """``item`` as a :class:`Tool`: lists of tools may mix decorated and plain functions."""
    return item if isinstance(item, Tool) else tool(item)


class Toolset:
    """Global tools plus tools under scopes; a run asks for the scopes its request names.

    Example::

        tools = Toolset([search])          # offered to every run
        tools.add(export_report, scope="page:reports")

        @tools.scoped("page:reports/tab:notes")
        def add_note(text: str) -> str: ...

        [t.name for t in tools.resolve(["page:reports"])]  # ['search', 'export_report']
    """

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._global: dict[str, Tool] = {}
        self._scoped: dict[str, dict[str, Tool]] = {}
        for item in tools:
            self.add(item)

    def add(self, item: Tool | Callable[..., Any], *, scope: str | None = None) -> Tool:
        """Register a tool globally, or for one scope."""
        t = as_tool(item)
        bucket = self._global if scope is None else self._scoped.setdefault(scope, {})
        bucket[t.name] = t
        return t

    def scoped(self, *scopes: str) -> Callable[[Tool | Callable[..., Any]], Tool]:
        """Decorator: ``@toolset.scoped("workflow")`` registers a tool for those scopes."""

        def register(item: Tool | Callable[..., Any]) -> Tool:
            t = as_tool(item)
            for scope in scopes:
                self.add(t, scope=scope)
            return t

        return register

    def include(self, other: Toolset) -> None:
        """Register every tool of ``other`` here too, globally or under the same scope (a
        configuration's page tools joining an agent's own)."""
        for t in other._global.values():
            self.add(t)
        for scope, bucket in other._scoped.items():
            for t in bucket.values():
                self.add(t, scope=scope)

    def resolve(self, scopes: Sequence[str] = ()) -> list[Tool]:
        """Global tools, then each scope's tools in the order given; first name wins."""
        chosen: dict[str, Tool] = dict(self._global)
        for scope in scopes:
            for name, t in self._scoped.get(scope, {}).items():
                chosen.setdefault(name, t)
        return list(chosen.values())

    @property
    def scopes(self) -> list[str]:
        return list(self._scoped)

    def __len__(self) -> int:
        return len(self._global) + sum(len(b) for b in self._scoped.values())


@runtime_checkable
class ToolSource(Protocol):
    """Tools discovered when a run starts."""

    async def load(self, principal: Principal, scopes: Sequence[str]) -> Sequence[Tool]: ...
