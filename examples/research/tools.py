"""The research assistant's tools. Global: ``search_articles`` (a streaming tool whose
progress the client shows stage by stage, and whose results reach the client as a
``search_results`` payload) and ``fetch_article``. Page tools: the report's (reports page),
adding articles (articles tab) and notes (notes tab). Tools that work on a report take its
id from the page context when the model leaves it out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any

from pydantic import Field

from agentstream import Payload, Progress, Tool, ToolContext, ToolResult, tool
from agentstream.chat import inject_from_context
from examples.research.corpus import Library

__all__ = ["ResearchTools"]

ArticleId = Annotated[str, Field(pattern=r"^[Aa]\d{4}$", description='e.g. "A0042"')]
ReportId = Annotated[int, Field(ge=1, description="The report's id (default: the open report)")]


def results_summary(data: dict[str, Any]) -> str:
    """What a result list shows: how many of how many matches ("The best 8 of 10 articles
    for ..."), so the count matches the rows."""
    shown, total, query = len(data["articles"]), data["total"], data["query"]
    if shown < total:
        return f"The best {shown} of {total} articles for “{query}”"
    return f"{total} article{'' if total == 1 else 's'} for “{query}”"


def in_step(state: dict[str, Any], query: str, year_from: int | None) -> int | None:
    """Keep the page's search filters and the agent's search in step, through the shared
    state (``{"filters": {"year_from"}, "query"}``): a search without a year of its own
    uses the page's, and the page then shows the search as run (its year, its words)."""
    filters = state.get("filters")
    filters = dict(filters) if isinstance(filters, dict) else {}
    if year_from is None and isinstance(filters.get("year_from"), int):
        year_from = filters["year_from"]
    filters["year_from"] = year_from
    state["filters"] = filters
    state["query"] = query
    return year_from


class ResearchTools:
    """The tools, bound to one :class:`Library`."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self.search_articles = self._search_articles()
        self.fetch_article = self._fetch_article()
        self.get_report = self._get_report()
        self.add_article_to_report = self._add_article_to_report()
        self.add_note = self._add_note()
        self.list_notes = self._list_notes()

    def _search_articles(self) -> Tool:
        library = self.library

        @tool(display=lambda args: f"Searching articles for “{args.get('query', '')}”…")
        async def search_articles(
            ctx: ToolContext,
            query: Annotated[str, Field(min_length=2, max_length=300)],
            year_from: Annotated[int | None, Field(ge=1900, le=2100)] = None,
            limit: Annotated[int, Field(ge=1, le=25)] = 8,
        ) -> AsyncIterator[Progress | ToolResult]:
            """Search the article corpus (titles, abstracts, keywords); every word must match.
            Returns the best matches with their ids; the user sees them as a result list.
            The search filters the user set in the page apply unless you give your own.

            Args:
                query: Words to look for, e.g. "CRISPR base editing".
                year_from: Only articles published this year or later (default: the page's
                    filter).
                limit: How many of the best matches to return (1-25).
            """
            year_from = in_step(ctx.state, query, year_from)
            yield Progress(stage="parsing", message=f"Looking for “{query}”", fraction=0.1)
            await asyncio.sleep(0.15)
            total, found = await asyncio.to_thread(
                library.search, query, year_from=year_from, limit=limit
            )
            yield Progress(stage="searching", message=f"Found {total} articles...", fraction=0.5)
            await asyncio.sleep(0.15)
            yield Progress(stage="ranking", message=f"Ranking the best {len(found)}", fraction=0.9)
            await asyncio.sleep(0.1)
            lines = [f"{a['id']} ({a['year']}, {a['journal']}): {a['title']}" for a in found]
            text = f"{total} articles match {query!r}" + (
                f" since {year_from}" if year_from else ""
            )
            text += (":\n" + "\n".join(lines)) if lines else "."
            data = {"query": query, "year_from": year_from, "total": total, "articles": found}
            yield ToolResult(
                text=text,
                output=data,
                payload=Payload(
                    kind="search_results",
                    data=data,
                    summary=results_summary(data),
                ),
            )

        return search_articles

    def _fetch_article(self) -> Tool:
        library = self.library

        @tool(display=lambda args: f"Reading {args.get('article_id', 'the article')}…")
        def fetch_article(
            article_id: Annotated[str, Field(pattern=r"^[Aa]\d{4}$")],
        ) -> dict[str, Any]:
            """Read one article in full (authors, journal, year, design, size, abstract).

            Args:
                article_id: The article's id, e.g. "A0042".
            """
            return library.article(article_id)

        return fetch_article

    def _get_report(self) -> Tool:
        library = self.library

        @tool(prepare=inject_from_context("report_id"))
        def get_report(report_id: ReportId) -> dict[str, Any]:
            """The report: its question, its articles and the fields extracted from each.

            Args:
                report_id: The report's id (default: the open report).
            """
            return library.report(report_id)

        return get_report

    def _add_article_to_report(self) -> Tool:
        library = self.library

        @tool(
            prepare=inject_from_context("report_id"),
            display=lambda args: f"Adding {args.get('article_id')} to the report…",
        )
        def add_article_to_report(report_id: ReportId, article_id: ArticleId) -> dict[str, Any]:
            """Add an article to the report.

            Args:
                report_id: The report's id (default: the open report).
                article_id: The article's id, e.g. "A0042".
            """
            report = library.add_article(report_id, article_id)
            return {"report_id": report_id, "articles": [a["id"] for a in report["articles"]]}

        return add_article_to_report

    def _add_note(self) -> Tool:
        library = self.library

        @tool(prepare=inject_from_context("report_id"))
        def add_note(
            ctx: ToolContext,
            report_id: ReportId,
            text: Annotated[str, Field(min_length=1, max_length=4000)],
            article_id: ArticleId | None = None,
        ) -> dict[str, Any]:
            """Write a note on the report, optionally about one article.

            Args:
                report_id: The report's id (default: the open report).
                text: The note.
                article_id: The article the note is about, if any.
            """
            note = library.add_note(report_id, text, ctx.user_id, article_id)
            return {"note_id": note, "report_id": report_id}

        return add_note

    def _list_notes(self) -> Tool:
        library = self.library

        @tool(prepare=inject_from_context("report_id"))
        def list_notes(report_id: ReportId) -> list[dict[str, Any]]:
            """The report's latest notes.

            Args:
                report_id: The report's id (default: the open report).
            """
            return library.notes(report_id)

        return list_notes
