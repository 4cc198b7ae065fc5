"""The data playground through its own protocol (``POST /api/chat/agent-chat/stream``): rows
from each tenant's own database, documents only with ``ragEnabled``, the offered models with
and without reasoning, Markdown deltas, and no way into another tenant's data."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from examples.playground.app import build
from examples.playground.sql import Query, QueryTimeout, UnsupportedRequest, plan, run_query
from examples.playground.tenants import TenantData
from tests.examples.conftest import ServeExample
from tests.server.helpers import bearer, datas, named, parse_sse, stream_text, token

PATH = "/api/chat/agent-chat/stream"
ANALYST = "scripted:analyst"


def events(
    client: httpx.Client, brand: str, content: str, **extra: Any
) -> list[tuple[str | None, Any]]:
    body = {"brandRef": brand, "model": ANALYST, "content": content, "format": "markdown"}
    response, text = stream_text(client, f"{PATH}?brandRef={brand}", json={**body, **extra})
    assert response.status_code == 200, text
    return named(parse_sse(text))


def tool_output(frames: list[tuple[str | None, Any]], name: str) -> Any:
    found = [d for e, d in frames if e == "tool_result" and d["toolName"] == name]
    assert found, frames
    return json.loads(found[-1]["output"])


def answer(frames: list[tuple[str | None, Any]]) -> str:
    final = next(d for e, d in frames if e == "final")
    text: str = final["content"]["message"]
    return text


@pytest.fixture
def client(serve_example: ServeExample) -> Any:
    server = serve_example(build)
    with server.client() as c:
        yield c


def test_lists_several_models(client: httpx.Client) -> None:
    models = client.get("/api/chat/models").json()["models"]
    assert [(m["id"], m["default"]) for m in models][:2] == [
        ("scripted:analyst", True),
        ("scripted:quick", False),
    ]
    assert "offline demo" in models[0]["name"]


def test_show_10_customers_streams_thinking_a_tool_and_a_markdown_table(
    client: httpx.Client,
) -> None:
    frames = events(client, "acme", "Show 10 customers")
    kinds = [e for e, _ in frames]
    assert kinds[0] == "status" and kinds[-1] == "status"
    assert kinds.index("thinking") < kinds.index("tool_call") < kinds.index("tool_result")
    call = next(d for e, d in frames if e == "tool_call")
    assert call["toolName"] == "sqlPatternTool"
    assert json.loads(call["input"]) == {"input": "Show 10 customers"}
    result = tool_output(frames, "sqlPatternTool")
    assert result["brand"] == "acme"
    assert result["rowCount"] == 10 and len(result["rows"]) == 10
    assert result["columns"] == ["id", "name", "email", "city", "segment", "created_at"]
    assert result["params"] == [10]
    assert all(r["email"].endswith("@acme-customers.example") for r in result["rows"])
    deltas = [d["delta"] for e, d in frames if e == "message"]
    assert all(d["format"] == "markdown" for d in deltas)
    text = answer(frames)
    assert "".join(d["text"] for d in deltas) == text
    assert "Offline demo" in text
    assert "| id | name | city | segment |" in text
    assert "```sql\nSELECT id, name" in text
    final = next(d for e, d in frames if e == "final")
    assert final["format"] == "markdown"
    assert final["tokenBreakdown"]["promptTokens"] > 0


def test_the_quick_model_and_reasoning_off_show_no_thinking(client: httpx.Client) -> None:
    quick = events(client, "acme", "top 3 products by revenue", model="scripted:quick")
    off = events(client, "acme", "top 3 products by revenue", reasoningMode="off")
    for frames in (quick, off):
        assert "thinking" not in [e for e, _ in frames]
        assert tool_output(frames, "sqlPatternTool")["rowCount"] == 3
    unknown = client.post(
        f"{PATH}?brandRef=acme",
        json={"brandRef": "acme", "model": "scripted:nope", "content": "hi"},
    )
    assert unknown.status_code == 400


def test_each_brand_reads_only_its_own_database(client: httpx.Client) -> None:
    acme = tool_output(events(client, "acme", "show 60 customers"), "sqlPatternTool")
    globex = tool_output(events(client, "globex", "show 60 customers"), "sqlPatternTool")
    assert acme["brand"] == "acme" and globex["brand"] == "globex"
    assert {r["email"].split("@")[1] for r in acme["rows"]} == {"acme-customers.example"}
    assert {r["email"].split("@")[1] for r in globex["rows"]} == {"globex-customers.example"}
    products = tool_output(events(client, "globex", "show products"), "sqlPatternTool")
    assert "Volcano lair lease" in {r["name"] for r in products["rows"]}
    assert "Rocket skates" not in {r["name"] for r in products["rows"]}


def test_an_unknown_brand_is_a_tool_error(client: httpx.Client) -> None:
    for brand in ("initech", "../globex", "acme/../globex"):
        frames = events(client, brand, "show 10 customers")
        result = next(d for e, d in frames if e == "tool_result")
        assert result["isError"] is True
        assert "unknown brand" in result["output"]


def test_a_token_grants_only_its_brands(serve_example: ServeExample) -> None:
    server = serve_example(build, jwt_secret="s" * 40, tenant_claim="brands")
    auth = bearer(token("ann", secret="s" * 40, brands=["acme"]))
    with server.client(headers=auth) as client:
        frames = events(client, "acme", "show 3 customers")
        assert tool_output(frames, "sqlPatternTool")["brand"] == "acme"
        body = {"brandRef": "globex", "model": ANALYST, "content": "show 3 customers"}
        refused = client.post(f"{PATH}?brandRef=globex", json=body)
    assert refused.status_code == 403


def test_documents_are_searched_only_with_rag_enabled(client: httpx.Client) -> None:
    question = "What is the returns policy?"
    on = events(client, "globex", question)
    found = tool_output(on, "searchDocuments")
    assert found["brand"] == "globex"
    assert found["passages"][0]["title"] == "Returns policy"
    assert "14 days" in found["passages"][0]["passage"]
    assert "**Returns policy**" in answer(on)
    off = events(client, "globex", question, ragEnabled=False)
    assert "tool_call" not in [e for e, _ in off]
    assert "Document search is off" in answer(off)


def test_a_request_it_cannot_plan_says_what_it_understands(client: httpx.Client) -> None:
    unplanned = events(client, "acme", "sales forecast for next year", ragEnabled=False)
    result = next(d for e, d in unplanned if e == "tool_result")
    assert result == {"toolName": "sqlPatternTool", "output": result["output"], "isError": True}
    assert "try requests like: show 10 customers" in result["output"]
    assert "That did not work" in answer(unplanned)
    writing = events(client, "acme", "delete all customers", ragEnabled=False)
    result = next(d for e, d in writing if e == "tool_result")
    assert result["isError"] is True
    assert "only reads data" in result["output"]


# --- the query layer on its own -------------------------------------------------------------


@pytest.fixture
def acme_db(tmp_path: Path) -> Path:
    return TenantData(tmp_path).database("acme")


def test_requests_become_parameterised_queries() -> None:
    assert plan("gold customers in Springfield").params == ("gold", "springfield", 10)
    assert plan("show 5000 orders").params == (100,)
    assert plan("orders for customer 12").params == (12, 100)
    injected = plan("customers in x' or 1=1 --")
    assert "1=1" not in injected.sql and injected.params == (1,)
    quoted = plan("customers in Capital City.")
    assert "capital" not in quoted.sql and quoted.params == ("capital city", 10)
    with pytest.raises(UnsupportedRequest, match="only reads"):
        plan("customers; DROP TABLE customers")
    with pytest.raises(UnsupportedRequest):
        plan("tell me a joke")


def test_the_connection_only_reads(acme_db: Path) -> None:
    for sql in (
        "DELETE FROM customers",
        "UPDATE customers SET name = 'x'",
        f"ATTACH DATABASE '{acme_db.parent.parent / 'globex' / 'shop.db'}' AS other",
        "PRAGMA writable_schema = 1",
    ):
        with pytest.raises(sqlite3.DatabaseError):
            run_query(acme_db, Query(sql, (), "bad"))
    assert run_query(acme_db, Query("SELECT count(*) AS n FROM customers", (), "n"))["rows"] == [
        {"n": 60}
    ]


def test_row_and_time_limits(acme_db: Path) -> None:
    limited = run_query(acme_db, Query("SELECT id FROM orders", (), "all"), max_rows=5)
    assert limited["rowCount"] == 5 and limited["truncated"] is True
    endless = Query(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n",
        (),
        "endless",
    )
    with pytest.raises(QueryTimeout):
        run_query(acme_db, endless, time_limit=0.2)


def tray_tool_output(client: httpx.Client, context: dict[str, Any]) -> dict[str, Any]:
    """What ``sqlPatternTool`` answered to the web UI's protocol with ``context``."""
    response, text = stream_text(
        client, "/api/chat/stream", json={"message": "show 3 customers", "context": context}
    )
    assert response.status_code == 200, text
    complete = [d for d in datas(parse_sse(text)) if d["type"] == "complete"][0]
    entry = complete["payload"]["tool_history"][0]
    return {"is_error": entry["is_error"], "output": entry["output"]}


def test_the_web_ui_picks_the_brand_and_the_documents_switch_locally(
    client: httpx.Client,
) -> None:
    fields = client.get("/api/chat/config").json()["context_fields"]
    assert [(f["key"], f["kind"]) for f in fields] == [
        ("brandRef", "choice"),
        ("ragEnabled", "switch"),
    ]
    globex = tray_tool_output(client, {"brandRef": "globex", "ragEnabled": False})
    assert '"brand":"globex"' in globex["output"].replace(" ", "")
    refused = client.post(
        "/api/chat/stream", json={"message": "hi", "context": {"brandRef": "initech"}}
    )
    assert refused.status_code == 400 and refused.json()["field"] == "context.brandRef"


def test_a_brand_picked_in_the_web_ui_grants_a_signed_in_user_nothing(
    serve_example: ServeExample,
) -> None:
    server = serve_example(build, jwt_secret="s" * 40, tenant_claim="brands")
    both = bearer(token("ann", secret="s" * 40, brands=["acme", "globex"]))
    only_acme = bearer(token("bob", secret="s" * 40, brands=["acme"]))
    with server.client(headers=only_acme) as client:
        mine = tray_tool_output(client, {"brandRef": "globex", "ragEnabled": False})
        assert '"brand":"acme"' in mine["output"].replace(" ", "")  # the token's one brand
    with server.client(headers=both) as client:
        unnamed = tray_tool_output(client, {"brandRef": "globex", "ragEnabled": False})
        assert unnamed["is_error"] and "unknown brand" in unnamed["output"]
