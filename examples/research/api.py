"""The research portal's data, mounted by the server under ``/example-api`` for the portal's
pages (``/host/``): what the assistant changes (a report's articles and extraction fields)
shows there too.

* ``GET /reports/{id}``: the report, its articles and its extraction fields;
* ``GET /articles/{id}``: an article (title, journal, year, authors, abstract), for the
  portal's reader.
"""

# No ``from __future__ import annotations``: FastAPI reads the route annotations at runtime.

from collections.abc import Callable
from typing import Any

import anyio
from fastapi import FastAPI, HTTPException

from examples.research.corpus import Library, UnknownArticle, UnknownReport

__all__ = ["MOUNT", "research_api"]

MOUNT = "/example-api"


async def _read(read: Callable[[Any], dict[str, Any]], key: Any) -> dict[str, Any]:
    """``read(key)`` in a worker thread; an unknown report or article is a 404."""
    try:
        return await anyio.to_thread.run_sync(read, key)
    except (UnknownReport, UnknownArticle) as exc:
        raise HTTPException(404, str(exc)) from None


def research_api(library: Library) -> FastAPI:
    api = FastAPI(title="Research portal API", docs_url=None, redoc_url=None, openapi_url=None)

    @api.get("/reports/{report_id}")
    async def report(report_id: int) -> dict[str, Any]:
        return await _read(library.report, report_id)

    @api.get("/articles/{article_id}")
    async def article(article_id: str) -> dict[str, Any]:
        found = await _read(library.article, article_id)
        shown = ("id", "title", "authors", "journal", "year", "abstract")
        return {key: found[key] for key in shown}

    return api
