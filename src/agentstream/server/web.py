"""The web UI: the built single-page app from ``server/static``, or how to build it.

Registered after every API route, so the API always wins. A path that names a built file
serves it; any other path outside the API (a client route such as ``/c/<id>``) serves
``index.html`` and the app routes in the browser. Unknown paths under the API's prefixes (the
server's own and each served dialect's) are a JSON 404, not the UI. Without a build, ``/``
explains how to make one.

``/embed/agentstream-chat.js`` is the chat tray as one script for other sites' pages
(``<script src>``); its address never changes, so it is served ``no-cache`` (revalidated,
so a new release reaches those pages), and a missing file under ``/embed/`` is a 404 rather
than the UI's HTML, which a script tag would fail to parse with a less helpful error.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response

__all__ = ["EMBED_SCRIPT", "FILE_PREFIXES", "STATIC_DIR", "router"]

STATIC_DIR = Path(__file__).parent / "static"
FILE_PREFIXES = ("/assets", "/embed")
"""Where the built UI keeps its files (the app's scripts and styles, the embeddable tray)."""
EMBED_PREFIX = "embed/"
EMBED_SCRIPT = "embed/agentstream-chat.js"

NOT_BUILT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agentstream</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto">
<h1>agentstream is running</h1>
<p>The web UI has not been built. Build it with:</p>
<pre>cd web &amp;&amp; npm install &amp;&amp; npm run build</pre>
<p>The API is up: see <a href="/docs">/docs</a> for every endpoint.</p>
</body></html>
"""


def router(static_dir: Path = STATIC_DIR, api_prefixes: Sequence[str] = ()) -> APIRouter:
    """The UI's routes; an unknown path under ``api_prefixes`` is the API's 404."""
    api = APIRouter(include_in_schema=False)
    root = static_dir.resolve()
    below = tuple(prefix.strip("/") + "/" for prefix in api_prefixes)
    exact = frozenset(prefix.strip("/") for prefix in api_prefixes)

    @api.get("/{path:path}")
    async def web_ui(path: str) -> Response:
        if path.startswith(below) or path in exact:
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        if path:
            candidate = (root / path).resolve()
            if candidate.is_relative_to(root) and candidate.is_file():
                fresh = {"Cache-Control": "no-cache"} if path.startswith(EMBED_PREFIX) else None
                return FileResponse(candidate, headers=fresh)
        if path.startswith(EMBED_PREFIX):
            reason = (
                "The chat tray script has not been built (cd web && npm run build)"
                if path == EMBED_SCRIPT
                else "Not Found"
            )
            return JSONResponse({"detail": reason}, status_code=404)
        index = root / "index.html"
        if not index.is_file():
            return HTMLResponse(NOT_BUILT)
        return FileResponse(index, headers={"Cache-Control": "no-cache"})

    return api
