"""The research assistant's payload types and actions.

* ``search_results`` (from ``search_articles``): the result list the user sees.
* ``schema_proposal`` (written by the model after ``SCHEMA_PROPOSAL:``): extraction fields for
  a report's articles, offered on the report's extraction subtab. The ``apply_schema`` server
  action applies one to the report.
* ``query_suggestion`` (written by the model after ``QUERY_SUGGESTION:``): a better search,
  offered everywhere.
"""

from __future__ import annotations

import asyncio
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentstream.chat import (
    ActionCall,
    ActionFailed,
    ClientAction,
    PayloadAction,
    PayloadType,
    ServerActions,
    TableView,
)
from examples.research.corpus import Library, UnknownReport
from examples.research.tools import results_summary

__all__ = [
    "CLOSE_CHAT",
    "OPEN_ARTICLE",
    "PAYLOAD_TYPES",
    "QuerySuggestion",
    "SchemaProposal",
    "actions_for",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class SchemaField(_Strict):
    name: Annotated[str, Field(min_length=1, max_length=40)]
    type: Literal["text", "integer", "number", "boolean", "date"]
    description: Annotated[str, Field(min_length=1, max_length=300)]

    @field_validator("name")
    @classmethod
    def snake_case(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", value):
            raise ValueError("field names are snake_case, like sample_size")
        return value


class SchemaProposal(_Strict):
    report_id: Annotated[int, Field(ge=1)]
    fields: Annotated[list[SchemaField], Field(min_length=1, max_length=12)]
    rationale: Annotated[str, Field(max_length=1000)] = ""


class QuerySuggestion(_Strict):
    query: Annotated[str, Field(min_length=2, max_length=300)]
    year_from: Annotated[int | None, Field(ge=1900, le=2100)] = None
    rationale: Annotated[str, Field(max_length=1000)] = ""


def _schema(data: Any) -> dict[str, Any]:
    return SchemaProposal.model_validate(data).model_dump()


def _query(data: Any) -> dict[str, Any]:
    return QuerySuggestion.model_validate(data).model_dump()


PAYLOAD_TYPES = [
    PayloadType.tool(
        "search_results",
        description="Articles found by search_articles",
        view=TableView(
            rows="articles",
            columns=[
                ("id", "Id"),
                ("year", "Year"),
                ("title", "Title"),
                ("journal", "Journal"),
                ("study_type", "Design"),
            ],
        ),
        summarize=results_summary,
    ),
    PayloadType.llm(
        "schema_proposal",
        description="Fields to extract from every article of the open report",
        instructions=(
            "When the user asks what to capture from the report's articles, propose fields:\n"
            'SCHEMA_PROPOSAL: {"report_id": 1, "fields": [{"name": "sample_size", '
            '"type": "integer", "description": "Participants or samples studied"}], '
            '"rationale": "..."}\n'
            "Types: text, integer, number, boolean, date; names in snake_case. Then offer the "
            '`apply_schema` server action with the same report_id and fields as its "data".'
        ),
        parser=_schema,
        view=TableView(
            rows="fields",
            columns=[("name", "Field"), ("type", "Type"), ("description", "What it holds")],
        ),
        summarize=lambda d: "Schema proposal: " + ", ".join(f["name"] for f in d["fields"]),
        is_global=False,
    ),
    PayloadType.llm(
        "query_suggestion",
        description="A better search query for the user's question",
        instructions=(
            "When a narrower or broader search would serve the user better, suggest it:\n"
            'QUERY_SUGGESTION: {"query": "...", "year_from": 2022, "rationale": "..."}'
        ),
        parser=_query,
        summarize=lambda d: f"Query suggestion: {d['query']}",
        # The card's button runs the search it suggests (the model is told to).
        actions=[PayloadAction(label="Search", action="run_suggested_search", style="primary")],
    ),
]

OPEN_ARTICLE = ClientAction(
    name="open_article",
    description='Open an article in the reader; data: {"article_id": "A0042"}',
)
CLOSE_CHAT = ClientAction(name="close_chat", description="Close the chat panel")


def actions_for(library: Library) -> ServerActions:
    actions = ServerActions()

    @actions.register(
        "apply_schema",
        description='Apply a schema proposal to its report; data: {"report_id", "fields"}',
    )
    async def apply_schema(call: ActionCall) -> str:
        try:
            proposal = SchemaProposal.model_validate(call.data)
        except ValidationError as exc:
            problems = "; ".join(e["msg"] for e in exc.errors(include_url=False))
            raise ActionFailed(f"the proposal is not valid: {problems}") from None
        fields = [f.model_dump() for f in proposal.fields]
        try:
            names = await asyncio.to_thread(library.apply_fields, proposal.report_id, fields)
            report = await asyncio.to_thread(library.report, proposal.report_id)
        except UnknownReport as exc:
            raise ActionFailed(str(exc)) from None
        return (
            f"Applied to report #{report['id']} “{report['name']}”: {len(names)} field(s) "
            f"({', '.join(names)}). The report now has {len(report['fields'])} field(s)."
        )

    @actions.register(
        "run_suggested_search",
        description="Run the search a query suggestion proposes; data: {payload_id, payload}",
    )
    async def run_suggested_search(call: ActionCall) -> dict[str, Any]:
        try:
            suggestion = QuerySuggestion.model_validate(call.data.get("payload"))
        except ValidationError:
            raise ActionFailed("the card did not carry a query suggestion") from None
        return {
            "search_articles": {"query": suggestion.query, "year_from": suggestion.year_from},
            "next": "Run this search now with search_articles and list the best articles.",
        }

    return actions
