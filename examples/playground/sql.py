"""``sqlPatternTool``: plain-language requests ("show 10 customers", "top 5 products by
revenue", "orders for customer 12") turned into parameterised SQL over one tenant's database.

The request never becomes SQL text: it picks one of a few fixed query shapes, and what it
names (a number, a city, a status) is bound as a parameter. The query then runs on a
read-only connection with an authoriser that allows reading and nothing else (no ``ATTACH``
of another tenant's file, no writes, no pragmas), at most :data:`MAX_ROWS` rows, and a time
limit.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_ROWS",
    "PATTERNS",
    "Query",
    "QueryTimeout",
    "UnsupportedRequest",
    "plan",
    "run_query",
]

MAX_ROWS = 100
DEFAULT_ROWS = 10
TIME_LIMIT_S = 2.0

TABLES = {
    "customers": "SELECT id, name, email, city, segment, created_at FROM customers",
    "products": "SELECT id, name, category, price FROM products",
    "orders": (
        "SELECT o.id, c.name AS customer, p.name AS product, o.quantity, o.total, o.status, "
        "o.ordered_at FROM orders o JOIN customers c ON c.id = o.customer_id "
        "JOIN products p ON p.id = o.product_id"
    ),
}
SINGULAR = {"customer": "customers", "product": "products", "order": "orders"}
STATUSES = ("delivered", "shipped", "pending", "cancelled")
SEGMENTS = ("standard", "silver", "gold")


class UnsupportedRequest(ValueError):
    pass


class QueryTimeout(TimeoutError):
    pass


@dataclass(frozen=True, slots=True)
class Query:
    sql: str
    params: tuple[Any, ...]
    description: str


def _limit(text: str) -> int:
    found = re.search(r"\b(\d{1,4})\b", text)
    return min(int(found.group(1)), MAX_ROWS) if found else DEFAULT_ROWS


def _table(text: str) -> str | None:
    for word in re.findall(r"[a-z]+", text):
        if word in TABLES:
            return str(word)
        if word in SINGULAR:
            return str(SINGULAR[word])
    return None


def _count(text: str) -> Query | None:
    if not re.search(r"\b(count|how many|number of)\b", text):
        return None
    table = _table(text)
    if table is None:
        return None
    return Query(f"SELECT count(*) AS {table} FROM {table}", (), f"count of {table}")


def _top_products(text: str) -> Query | None:
    if not re.search(r"\b(top|best[- ]selling)\b.*\bproducts?\b", text):
        return None
    n = _limit(text)
    return Query(
        "SELECT p.name AS product, p.category, sum(o.quantity) AS units, "
        "round(sum(o.total), 2) AS revenue FROM orders o JOIN products p ON p.id = o.product_id "
        "WHERE o.status != 'cancelled' GROUP BY p.id ORDER BY revenue DESC LIMIT ?",
        (n,),
        f"top {n} products by revenue",
    )


def _top_customers(text: str) -> Query | None:
    if not re.search(r"\b(top|best|biggest)\b.*\bcustomers?\b", text):
        return None
    n = _limit(text)
    return Query(
        "SELECT c.name AS customer, c.city, c.segment, count(o.id) AS orders, "
        "round(sum(o.total), 2) AS spent FROM customers c JOIN orders o ON o.customer_id = c.id "
        "WHERE o.status != 'cancelled' GROUP BY c.id ORDER BY spent DESC LIMIT ?",
        (n,),
        f"top {n} customers by spend",
    )


def _revenue_by_month(text: str) -> Query | None:
    if not re.search(r"\brevenue\b", text):
        return None
    return Query(
        "SELECT substr(ordered_at, 1, 7) AS month, count(*) AS orders, "
        "round(sum(total), 2) AS revenue FROM orders WHERE status != 'cancelled' "
        "GROUP BY month ORDER BY month",
        (),
        "revenue by month",
    )


def _orders_for_customer(text: str) -> Query | None:
    found = re.search(r"\borders? (?:for|of|by) customer (?:#|id )?(\d+)\b", text)
    if not found:
        return None
    return Query(
        TABLES["orders"] + " WHERE o.customer_id = ? ORDER BY o.ordered_at DESC LIMIT ?",
        (int(found.group(1)), MAX_ROWS),
        f"orders of customer {found.group(1)}",
    )


def _listing(text: str) -> Query | None:
    table = _table(text)
    if table is None:
        return None
    n = _limit(text)
    where: list[str] = []
    params: list[Any] = []
    words = set(re.findall(r"[a-z]+", text))
    if table == "orders":
        status = next((s for s in STATUSES if s in words), None)
        if status is not None:
            where.append("o.status = ?")
            params.append(status)
    if table == "customers":
        segment = next((s for s in SEGMENTS if s in words), None)
        if segment is not None:
            where.append("segment = ?")
            params.append(segment)
        city = re.search(r"\b(?:in|from) ([a-z][a-z ]{1,40}?)(?:$|[.,?!])", text)
        if city:
            where.append("lower(city) = ?")
            params.append(city.group(1).strip())
    order = {
        "customers": "id",
        "products": "price DESC",
        "orders": "o.ordered_at DESC",
    }[table]
    if re.search(r"\b(recent|latest|newest)\b", text) and table == "customers":
        order = "created_at DESC"
    sql = TABLES[table] + (" WHERE " + " AND ".join(where) if where else "")
    sql += f" ORDER BY {order} LIMIT ?"
    described = f"{n} {table}" + (f" where {', '.join(map(str, params))}" if params else "")
    return Query(sql, (*params, n), described)


PATTERNS: tuple[Callable[[str], Query | None], ...] = (
    _count,
    _orders_for_customer,
    _top_products,
    _top_customers,
    _revenue_by_month,
    _listing,
)

EXAMPLES = (
    "show 10 customers",
    "gold customers in Springfield",
    "pending orders",
    "orders for customer 12",
    "top 5 products by revenue",
    "top 3 customers",
    "revenue by month",
    "how many orders",
)


WRITES = re.compile(r"\b(delete|drop|update|insert|alter|truncate|remove|change|modify)\b")


def plan(request: str) -> Query:
    """The query for a request, or :class:`UnsupportedRequest` naming what is understood."""
    text = " ".join(request.lower().split())
    if WRITES.search(text):
        raise UnsupportedRequest("this tool only reads data; it cannot change or delete anything")
    for pattern in PATTERNS:
        found = pattern(text)
        if found is not None:
            return found
    raise UnsupportedRequest(
        f"cannot turn {request!r} into a query; try requests like: " + "; ".join(EXAMPLES)
    )


_ALLOWED = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
}


def _authorise(action: int, *_: object) -> int:
    return sqlite3.SQLITE_OK if action in _ALLOWED else sqlite3.SQLITE_DENY


def run_query(
    database: Path, query: Query, *, max_rows: int = MAX_ROWS, time_limit: float = TIME_LIMIT_S
) -> dict[str, Any]:
    """Rows of ``query`` from ``database``, read-only, within the limits."""
    uri = f"{database.resolve().as_uri()}?mode=ro"
    connection = sqlite3.connect(uri, uri=True, timeout=time_limit)
    deadline = time.monotonic() + time_limit
    try:
        connection.set_authorizer(_authorise)
        connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
        try:
            cursor = connection.execute(query.sql, query.params)
            rows = cursor.fetchmany(max_rows + 1)
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise QueryTimeout(f"the query took longer than {time_limit:g} s") from None
            raise
        columns = [d[0] for d in cursor.description or ()]
    finally:
        connection.close()
    return {
        "sql": query.sql,
        "params": list(query.params),
        "columns": columns,
        "rows": [dict(zip(columns, row, strict=True)) for row in rows[:max_rows]],
        "rowCount": min(len(rows), max_rows),
        "truncated": len(rows) > max_rows,
    }
