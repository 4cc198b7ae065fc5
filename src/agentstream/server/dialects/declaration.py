"""What a dialect declares, so the server can serve it without knowing it.

A dialect is one module that builds its routes (request model, conversion to a
:class:`~agentstream.runs.RunRequest`, and the call that starts the run) and declares here
everything else about itself: its name, the path prefixes its routes live under, how its
OpenAPI group is titled and documented, how its streams look (the encoder and wire format
for the options its route chose), and what a client that hangs up does to the run. The
server registers the dialects it is given (``create_app(dialects=...)``, default
:data:`~agentstream.server.dialects.BUILT_IN`) and derives from them the paths a mounted
application may not take, the OpenAPI tags and the app's description, so adding a protocol
is one module (and its tests) and nothing else needs editing; the resume endpoint rebuilds
a run's stream, on any worker, from the dialect's name and the options it recorded with the
run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentstream.errors import UnknownDialect
from agentstream.server.settings import DisconnectPolicy
from agentstream.server.sse import Encoder, WireFormat

if TYPE_CHECKING:
    from fastapi import APIRouter

    from agentstream.server.state import ServerContext

__all__ = ["Dialect", "StreamOptions", "UnknownDialect"]

StreamOptions = Mapping[str, Any]
"""A stream's options as its route chose them (JSON-able: kept with the run for readers on
other workers), e.g. the chat tray's ``{"include_reasoning": true}``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Dialect:
    name: str
    """Unique among the server's dialects; kept with each run it starts, so it never changes
    (a run stored under a name no dialect has any more cannot be resumed)."""
    title: str
    """The protocol's name for people: its routes' OpenAPI tag, and how the app's
    description lists it (``"AI SDK"``)."""
    summary: str
    """One line on what it is, for its OpenAPI group (``"The Vercel AI SDK UI message
    stream (useChat)"``)."""
    reference: str
    """Its page of the docs site, under ``docs/`` (``"protocols/ai-sdk.md"``)."""
    prefixes: tuple[str, ...]
    """The paths its routes live under (``("/ai-sdk",)``): the server refuses to start when
    a route lies elsewhere, and an application may not mount anything there."""
    routes: Callable[[ServerContext], APIRouter]
    """The dialect's endpoints, tagged :attr:`title`."""
    stream: Callable[[StreamOptions], tuple[Encoder, WireFormat]]
    """A fresh encoder and the wire format for a stream with these options: the same for the
    first response and for every resume, so a resumed stream continues it frame for frame."""
    on_disconnect: DisconnectPolicy = "cancel"
    """What a client that hangs up does to its run, unless the deployment overrides it."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Response headers every stream of the dialect carries (the AI SDK's protocol version)."""

    def reader(self, options: StreamOptions) -> dict[str, Any]:
        """What is kept with a run so any worker can rebuild its stream."""
        return {"dialect": self.name, "options": dict(options)}

    def owns(self, path: str) -> bool:
        """Whether ``path`` lies under one of :attr:`prefixes`."""
        return any(under(path, prefix) for prefix in self.prefixes)


def under(path: str, prefix: str) -> bool:
    """``path`` is ``prefix`` or below it, segment by segment (``/ai-sdk/chat`` is under
    ``/ai-sdk``; ``/ai-sdk2`` is not)."""
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def registry(dialects: tuple[Dialect, ...]) -> dict[str, Dialect]:
    """Dialects by name; two with one name is a configuration error."""
    found: dict[str, Dialect] = {}
    for dialect in dialects:
        if dialect.name in found:
            raise ValueError(f"two dialects are named {dialect.name!r}")
        found[dialect.name] = dialect
    return found
