"""The playground's tools, bound to the tenants' data: ``sqlPatternTool`` (rows from the
tenant's database) and ``searchDocuments`` (full-text search over the tenant's documents,
offered only while the request's ``ragEnabled`` is on)."""

from __future__ import annotations

import re
import sqlite3
from typing import Annotated, Any

from pydantic import Field

from agentstream import Tool, ToolContext, tool
from examples.playground.sql import plan, run_query
from examples.playground.tenants import TenantData, tenant_name

__all__ = ["RAG_SCOPE", "search_documents_tool", "sql_pattern_tool"]

RAG_SCOPE = "rag"
"""The scope of the document search tool, turned on by ``ragEnabled``."""


def sql_pattern_tool(data: TenantData) -> Tool:
    @tool(name="sqlPatternTool", display=lambda args: f"Querying: {args.get('input', '')}")
    def sql_pattern_tool(
        ctx: ToolContext, input: Annotated[str, Field(min_length=1, max_length=500)]
    ) -> dict[str, Any]:
        """Answer a data question from this brand's shop database (customers, products,
        orders) with a read-only, parameterised query; returns the SQL and the rows (at most
        100). Understands requests such as "show 10 customers", "gold customers in
        Springfield", "pending orders", "orders for customer 12", "top 5 products by
        revenue", "top 3 customers", "revenue by month", "how many orders".

        Args:
            input: The request in plain words.
        """
        brand = tenant_name(ctx)
        query = plan(input)
        result = run_query(data.database(brand), query)
        return {"brand": brand, "request": query.description, **result}

    return sql_pattern_tool


_TERMS = re.compile(r"[\w]+", re.UNICODE)


def search_documents_tool(data: TenantData) -> Tool:
    @tool(name="searchDocuments", display=lambda args: f"Searching documents: {args.get('query')}")
    def search_documents(
        ctx: ToolContext,
        query: Annotated[str, Field(min_length=1, max_length=300)],
        limit: Annotated[int, Field(ge=1, le=10)] = 3,
    ) -> dict[str, Any]:
        """Search this brand's documents (policies, shipping, support) and return the best
        passages with their titles. Use it for questions the database cannot answer.

        Args:
            query: What to look for, in plain words.
            limit: How many passages to return (1-10).
        """
        brand = tenant_name(ctx)
        terms = [t for t in _TERMS.findall(query.lower()) if len(t) > 2]
        if not terms:
            return {"brand": brand, "query": query, "passages": []}
        # Each term quoted: the user's words are data, never FTS5 query syntax.
        match = " OR ".join('"' + t.replace('"', "") + '"' for t in terms)
        path = data.database(brand)
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            rows = connection.execute(
                "SELECT title, snippet(documents, 1, '**', '**', '…', 24), bm25(documents) "
                "FROM documents WHERE documents MATCH ? ORDER BY bm25(documents) LIMIT ?",
                (match, limit),
            ).fetchall()
        finally:
            connection.close()
        passages = [
            {"title": title, "passage": passage, "score": round(-score, 3)}
            for title, passage, score in rows
        ]
        return {"brand": brand, "query": query, "passages": passages}

    return search_documents
