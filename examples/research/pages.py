"""Where the analyst is: the reports page (with its articles tab, that tab's extraction
subtab, and its notes tab) and the search page. Each area has its identity, a context builder
that loads what the analyst is looking at, and its tools; the request's context names the
area (``current_page``, ``active_tab``, ``active_subtab``) and the open report
(``report_id``) or article (``article_id``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agentstream.chat import Page, Tab
from examples.research.corpus import Library, UnknownArticle, UnknownReport
from examples.research.payloads import OPEN_ARTICLE
from examples.research.tools import ResearchTools

__all__ = ["research_pages"]

Builder = Callable[[Any], Awaitable[str | None]]


def _report_id(context: Any) -> int | None:
    value = context.get("report_id") if isinstance(context, Mapping) else None
    return value if isinstance(value, int) and value > 0 else None


def _report_context(library: Library) -> Builder:
    async def build(context: Any) -> str | None:
        report_id = _report_id(context)
        if report_id is None:
            return "No report is open."
        try:
            report = await asyncio.to_thread(library.report, report_id)
        except UnknownReport:
            return f"The page names report {report_id}, which does not exist."
        articles = "; ".join(f"{a['id']} {a['title']}" for a in report["articles"]) or "none yet"
        fields = ", ".join(f"{f['name']} ({f['type']})" for f in report["fields"]) or "none yet"
        return (
            f"Open report: #{report['id']} “{report['name']}”.\n"
            f"Question: {report['question']}\nArticles: {articles}\nExtraction fields: {fields}"
        )

    return build


def _article_context(library: Library) -> Builder:
    report = _report_context(library)

    async def build(context: Any) -> str | None:
        text = await report(context) or ""
        article_id = context.get("article_id") if isinstance(context, Mapping) else None
        if not isinstance(article_id, str):
            return text
        try:
            article = await asyncio.to_thread(library.article, article_id)
        except UnknownArticle:
            return text
        return (
            f"{text}\nThe analyst is reading {article['id']}: {article['title']}, "
            f"{article['journal']} {article['year']}.\nAbstract: {article['abstract']}"
        )

    return build


def _notes_context(library: Library) -> Builder:
    report = _report_context(library)

    async def build(context: Any) -> str | None:
        text = await report(context) or ""
        report_id = _report_id(context)
        notes = await asyncio.to_thread(library.notes, report_id, 5) if report_id else []
        shown = "\n".join(f"- #{n['id']} ({n['author']}): {n['text']}" for n in notes)
        return f"{text}\nLatest notes:\n{shown or '- none yet'}"

    return build


def research_pages(library: Library, tools: ResearchTools) -> list[Page]:
    return [
        Page(
            name="reports",
            identity=(
                "You are the research assistant of an analyst building an evidence report. "
                "Ground every claim in articles from the corpus, cited by id."
            ),
            context=_report_context(library),
            tools=[tools.get_report],
            client_actions=[OPEN_ARTICLE],
            tabs=[
                Tab(
                    name="articles",
                    identity=(
                        "You help the analyst choose and read the articles of the open report. "
                        "Cite articles by id."
                    ),
                    context=_article_context(library),
                    tools=[tools.add_article_to_report],
                    subtabs=[
                        Tab(
                            name="extraction",
                            identity=(
                                "You help the analyst decide which fields to extract from "
                                "every article of the open report."
                            ),
                            payload_types=["schema_proposal"],
                            instructions=(
                                "Propose extraction fields as a schema_proposal for the open "
                                "report, and offer apply_schema."
                            ),
                        )
                    ],
                ),
                Tab(
                    name="notes",
                    identity="You help the analyst keep the report's notes.",
                    context=_notes_context(library),
                    tools=[tools.add_note, tools.list_notes],
                ),
            ],
        ),
        Page(
            name="search",
            identity="You help the analyst search the article corpus well.",
            instructions="Suggest a better query as a query_suggestion when it would help.",
        ),
    ]
