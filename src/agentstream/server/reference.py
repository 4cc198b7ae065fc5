"""What ``/openapi.json`` says about the server as a whole: its description and, for each
group of routes, the page of the docs site (built from ``docs/`` with ``make docs``) that
describes its protocol, events and errors.

The OpenAPI schema can say what a body looks like, not what a stream carries; a client author
reading ``/openapi.json`` (or ``/docs``) is sent to the page that does. The dialects' groups
come from their declarations, so a server serving a subset, or a protocol of a third party,
is described as served.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentstream.server.dialects.declaration import Dialect

__all__ = ["SERVER_TAGS", "description", "openapi_tags"]

SERVER_TAGS = (
    ("runs", "Runs: resume, replay, follow and stop", "protocols/runs.md"),
    ("conversations", "The conversations REST API", "protocols/conversations.md"),
    ("usage", "What runs used and cost, by user, tenant, model and day", "guides/operations.md"),
    ("attachments", "Files and images for messages: upload, read back", "guides/attachments.md"),
    ("web UI", "What a chat UI shows before its first message", "protocols/index.md"),
    ("health", "Probes for load balancers and orchestrators", "guides/deploying.md"),
)
"""The server's own route groups, beside the dialects': (tag, what it is, its page)."""


def openapi_tags(dialects: Iterable[Dialect]) -> list[dict[str, Any]]:
    """``FastAPI(openapi_tags=...)``: each route group's description, naming its reference
    page; the dialects' first, in the order they are served."""
    pages = [(d.title, d.summary, d.reference) for d in dialects]
    return [
        {"name": tag, "description": f"{what}. Reference: `docs/{page}` (the docs site's page)."}
        for tag, what, page in (*pages, *SERVER_TAGS)
    ]


def description(dialects: Iterable[Dialect]) -> str:
    """The app's one-line summary, naming the protocols it serves."""
    titles = [d.title for d in dialects]
    if not titles:
        return "Stream a tool-using agent to chat UIs."
    listed = titles[0] if len(titles) == 1 else f"{', '.join(titles[:-1])} and {titles[-1]}"
    noun = "protocol" if len(titles) == 1 else "protocols"
    return f"Stream a tool-using agent to chat UIs, in the dialects of the {listed} {noun}."
