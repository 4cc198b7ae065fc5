"""The research assistant's offline model: a scripted analyst that searches the corpus for
what the user asks, lists the best articles, and then, depending on what the page offers,
proposes extraction fields for the open report (with an ``apply_schema`` button) or a narrower
query; it reads an article when asked for one by id, and confirms applied actions. Every
answer is labelled as the offline demo."""

from __future__ import annotations

import json
import re
from typing import Any

from agentstream.providers.base import ChatRequest
from agentstream.providers.scripted import ScriptedProvider, ScriptedTurn, position
from examples._common import DEMO_LABEL, files_seen, tool_results_since_user

__all__ = ["research_demo_model"]

_DELAY = 0.01
ARTICLE_ID = re.compile(r"\b[Aa]\d{4}\b")
SINCE = re.compile(r"\s*\b(?:since|from) ((?:19|20)\d\d)\b", re.IGNORECASE)
"""A year the question names ("... since 2022"): the search's ``year_from``."""
LEAD_IN = re.compile(
    r"^(please )?(find|search( for)?|look for|show me)?\s*(the )?(recent |latest |new )?"
    r"(articles?|papers?|studies|research)?\s*(on|about|for)?\s*",
    re.IGNORECASE,
)
FIELDS = [
    {"name": "study_type", "type": "text", "description": "Trial, cohort, meta-analysis..."},
    {"name": "sample_size", "type": "integer", "description": "Participants or samples"},
    {"name": "off_target_rate", "type": "number", "description": "Reported off-target edits, %"},
]


def _say(text: str, **extra: Any) -> ScriptedTurn:
    return ScriptedTurn.model_validate({"text": text, "delay": _DELAY, **extra})


def _line(marker: str, value: Any) -> str:
    return f"{marker} {json.dumps(value, ensure_ascii=False)}"


def _turn(request: ChatRequest) -> ScriptedTurn:
    asked, turn = position(request)
    offered = {spec.name for spec in request.tools}
    if '"run_suggested_search"' in asked and "\nOutcome: " in asked and turn == 0:
        search = json.loads(asked.split("\nOutcome: ", 1)[1])["search_articles"]
        suggested = {k: v for k, v in search.items() if v is not None}
        return _say(
            f"{DEMO_LABEL}\n\nSearching for “{search['query']}”, as suggested.",
            tool_calls=[{"name": "search_articles", "arguments": suggested}],
        )
    if turn == 0 and ("\nOutcome: " in asked or "\nThe action failed" in asked):
        outcome = asked.split("\n", 1)[1].removeprefix("Outcome: ").strip()
        applied = re.search(r"report #(\d+)", outcome)
        which = f"report #{applied.group(1)}" if applied else "the report"
        values = [{"label": "Show the report", "value": f"What does {which} hold now?"}]
        return _say(f"Done. {outcome}\n\n{_line('SUGGESTED_VALUES:', values)}")
    seen = files_seen(request.messages)
    if turn == 0 and seen:
        # A dropped document: summarizing it is the model's reading, which this one cannot do.
        return _say(
            f"{DEMO_LABEL}\n\n{seen} With a real model I summarize a PDF's findings here, "
            "and can then search the corpus for the work it builds on."
        )
    if turn == 0 and REPORT_QUESTION.search(asked):
        if "get_report" not in offered:
            return _say(f"{DEMO_LABEL}\n\nReports are on the reports page: ask me there.")
        named = re.search(r"report #(\d+)", asked)
        return _say(
            f"{DEMO_LABEL}\n\nLet me read the report.",
            tool_calls=[
                {
                    "name": "get_report",
                    "arguments": {"report_id": int(named.group(1))} if named else {},
                }
            ],
        )
    if turn == 0:
        wanted = ARTICLE_ID.search(asked)
        if wanted and "fetch_article" in offered:
            return _say(
                f"{DEMO_LABEL}\n\nLet me read {wanted.group(0).upper()}.",
                tool_calls=[
                    {"name": "fetch_article", "arguments": {"article_id": wanted.group(0)}}
                ],
            )
        since = SINCE.search(asked)
        query = LEAD_IN.sub("", SINCE.sub("", asked).strip()).rstrip("?.! ") or asked.strip()
        arguments: dict[str, Any] = {"query": query[:200]}
        if since:
            arguments["year_from"] = int(since.group(1))
        elif re.search(r"\b(recent|latest|new)\b", asked, re.IGNORECASE):
            arguments["year_from"] = 2020
        return _say(
            f"{DEMO_LABEL}\n\nLet me search the corpus for “{arguments['query']}”.",
            tool_calls=[{"name": "search_articles", "arguments": arguments}],
        )
    results = tool_results_since_user(request.messages)
    last: dict[str, Any] = results[-1] if results else {"tool": "", "value": {}, "is_error": True}
    if last["is_error"]:
        return _say(f"That did not work: {last['value'].get('error', 'the tool failed')}")
    if last["tool"] == "get_report":
        return _say(_the_report(last["value"]))
    if last["tool"] == "fetch_article":
        article = last["value"]
        return _say(
            f"**{article['title']}** ({article['journal']}, {article['year']}; "
            f"{article['authors']}): {article['abstract']}\n\n"
            + _line(
                "SUGGESTED_ACTIONS:",
                [
                    {
                        "label": "Open in the reader",
                        "action": "open_article",
                        "handler": "client",
                        # The portal's page handles it in place; the standalone UI,
                        # which has no reader of its own, opens the portal's at ``url``.
                        "data": {
                            "article_id": article["id"],
                            "url": f"/host/?article={article['id']}",
                        },
                        "style": "secondary",
                    }
                ],
            )
        )
    return _say(_after_search(request, last["value"]))


REPORT_QUESTION = re.compile(r"\b(report|its fields)\b.*\b(hold|have|contain|show)", re.I)
"""What a report holds now (the chip offered after a schema is applied): read with
``get_report``, the one named (``report #1``) or the open one."""


def _the_report(report: dict[str, Any]) -> str:
    """The report ``get_report`` returned, as the analyst reads it."""
    articles = "; ".join(f"{a['id']} {a['title']}" for a in report["articles"]) or "none yet"
    fields = ", ".join(f"{f['name']} ({f['type']})" for f in report["fields"]) or "none yet"
    return (
        f"Report #{report['id']} “{report['name']}”\n\n- **Question**: {report['question']}\n"
        f"- **Articles**: {articles}\n- **Extraction fields**: {fields}"
    )


def _after_search(request: ChatRequest, found: dict[str, Any]) -> str:
    text = found.get("text", "")
    articles = re.findall(r"^(A\d{4}) \((\d{4}), [^)]*\): (.+)$", text, re.MULTILINE)
    total = re.match(r"(\d+) articles match", text)
    count = int(total.group(1)) if total else len(articles)
    if not articles:
        values = [{"label": "Search more broadly", "value": "Find articles on gene editing"}]
        return f"Nothing in the corpus matches.\n\n{_line('SUGGESTED_VALUES:', values)}"
    best = "\n".join(f"- **{i}** ({y}): {t}" for i, y, t in articles[:3])
    answer = f"I found {count} articles; the most relevant:\n\n{best}\n\n"
    system = request.system
    if "SCHEMA_PROPOSAL:" in system:
        found_id = re.search(r"report_id\W+(\d+)", system)
        report_id = int(found_id.group(1)) if found_id else 1
        proposal = {
            "report_id": report_id,
            "fields": FIELDS,
            "rationale": "These let the report compare safety across study designs.",
        }
        action = {
            "label": "Apply schema",
            "action": "apply_schema",
            "handler": "server",
            "data": {"report_id": report_id, "fields": FIELDS},
            "style": "primary",
        }
        values = [{"label": "Read the first", "value": f"Read {articles[0][0]}"}]
        return (
            answer
            + "To compare them in the report, I propose extracting these fields:\n\n"
            + _line("SCHEMA_PROPOSAL:", proposal)
            + "\n"
            + _line("SUGGESTED_ACTIONS:", [action])
            + "\n"
            + _line("SUGGESTED_VALUES:", values)
        )
    first_year = min(int(y) for _, y, _ in articles)
    query = re.search(r"match '([^']*)'", text)
    narrower = {
        "query": f"{query.group(1) if query else 'these'} randomised trial",
        "year_from": max(first_year, 2022),
        "rationale": "Randomised trials since 2022 give the strongest recent evidence.",
    }
    values = [
        {"label": "Read the first", "value": f"Read {articles[0][0]}"},
        {"label": "Only trials", "value": f"Find recent articles on {narrower['query']}"},
    ]
    return (
        answer
        + "A narrower search may serve you better:\n\n"
        + _line("QUERY_SUGGESTION:", narrower)
        + "\n"
        + _line("SUGGESTED_VALUES:", values)
    )


def research_demo_model() -> ScriptedProvider:
    return ScriptedProvider(_turn, model="research-demo")
