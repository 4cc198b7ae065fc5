"""Where each group of routes in ``/openapi.json`` is documented: the page of the docs site
(built from ``docs/`` with ``make docs``) that describes its protocol, events and errors.

The OpenAPI schema can say what a body looks like, not what a stream carries; a client author
reading ``/openapi.json`` (or ``/docs``) is sent to the page that does.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OPENAPI_TAGS"]

# (tag, what it is, its page under docs/)
_PAGES = (
    ("workflow assistant", "The workflow assistant protocol", "protocols/workflow.md"),
    ("data playground", "The data playground protocol", "protocols/playground.md"),
    ("chat tray", "The chat tray protocol, which the built-in web UI speaks", "protocols/tray.md"),
    ("ops agent", "The ops agent protocol", "protocols/ops.md"),
    ("AG-UI", "The AG-UI protocol (CopilotKit's HttpAgent)", "protocols/ag-ui.md"),
    ("AI SDK", "The Vercel AI SDK UI message stream (useChat)", "protocols/ai-sdk.md"),
    ("runs", "Runs: resume, replay, follow and stop", "protocols/runs.md"),
    ("conversations", "The conversations REST API", "protocols/conversations.md"),
    ("web UI", "What a chat UI shows before its first message", "protocols/index.md"),
)

OPENAPI_TAGS: list[dict[str, Any]] = [
    {"name": tag, "description": f"{what}. Reference: `docs/{page}` (the docs site's page)."}
    for tag, what, page in _PAGES
]
"""``FastAPI(openapi_tags=...)``: each route group's description, naming its reference page."""
