"""``/api/conversations`` through a real FastAPI app, on both databases.

The principal comes from test headers here; the server's auth is not this router's concern.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI, Header

from agentstream.events import RunCompleted, ToolHistoryEntry, Usage
from agentstream.messages import AssistantMessage, ToolCall, ToolResultPart, ToolResultsMessage
from agentstream.principal import Principal
from agentstream.server.conversations import conversations_router
from agentstream.server.errors import install_error_handlers
from agentstream.store import SqlConversationStore

from .helpers import exchange, run_id

ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


async def principal_from_headers(
    x_user: str = Header(), x_tenant: str | None = Header(default=None)
) -> Principal:
    return Principal(user_id=x_user, tenant_id=x_tenant)


@pytest.fixture
async def client(store: SqlConversationStore) -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(conversations_router(store, principal_from_headers))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        yield http


def as_user(principal: Principal) -> dict[str, str]:
    headers = {"X-User": principal.user_id}
    if principal.tenant_id:
        headers["X-Tenant"] = principal.tenant_id
    return headers


@pytest.fixture
def bob() -> Principal:
    return Principal(user_id=f"bob-{uuid.uuid4().hex[:6]}", tenant_id="acme")


async def test_list_and_page(
    client: httpx.AsyncClient, store: SqlConversationStore, bob: Principal
) -> None:
    ids = [await exchange(store, bob, f"question {n}", "answer") for n in range(3)]
    response = await client.get("/api/conversations", params={"limit": 2}, headers=as_user(bob))
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"items", "next_cursor"}
    assert [item["id"] for item in body["items"]] == [ids[2], ids[1]]
    item = body["items"][0]
    assert set(item) == {"id", "title", "created_at", "updated_at", "model"}
    assert item["title"] == "question 2"
    assert ISO_Z.match(item["created_at"])
    assert ISO_Z.match(item["updated_at"])

    response = await client.get(
        "/api/conversations",
        params={"limit": 2, "cursor": body["next_cursor"]},
        headers=as_user(bob),
    )
    assert response.json() == {
        "items": [
            {
                "id": ids[0],
                "title": "question 0",
                "created_at": response.json()["items"][0]["created_at"],
                "updated_at": response.json()["items"][0]["updated_at"],
                "model": None,
            }
        ],
        "next_cursor": None,
    }


async def test_get_conversation_with_folded_tool_calls(
    client: httpx.AsyncClient, store: SqlConversationStore, bob: Principal
) -> None:
    rid = run_id()
    started = await store.start_run(
        bob, run_id=rid, conversation_id=None, user_message="Check status", model="m1"
    )
    cid = started.conversation_id
    await store.append_messages(
        bob,
        run_id=rid,
        conversation_id=cid,
        messages=[
            AssistantMessage(
                text="Checking.", tool_calls=(ToolCall(id="c1", name="status", arguments={}),)
            ),
            ToolResultsMessage(
                results=(ToolResultPart(tool_call_id="c1", name="status", content="ok"),)
            ),
        ],
    )
    await store.finish_run(
        bob,
        run_id=rid,
        conversation_id=cid,
        messages=[AssistantMessage(text=" All good.")],
        status="completed",
        completed=RunCompleted(
            run_id=rid,
            seq=7,
            message="Checking. All good.",
            usage=Usage(input_tokens=5, output_tokens=7),
            tool_history=(
                ToolHistoryEntry(
                    index=0,
                    call_id="c1",
                    tool_name="status",
                    input={},
                    output={"status": "ok"},
                    duration_ms=12.5,
                    text_offset=9,
                ),
            ),
        ),
    )
    response = await client.get(f"/api/conversations/{cid}", headers=as_user(bob))
    assert response.status_code == 200
    body = response.json()
    assert {key: body[key] for key in ("id", "title", "model", "metadata")} == {
        "id": cid,
        "title": "Check status",
        "model": "m1",
        "metadata": {},
    }
    user, answer = body["messages"]
    assert (user["role"], user["content"], user["status"]) == ("user", "Check status", "complete")
    assert answer["role"] == "assistant"
    assert answer["status"] == "complete"
    assert answer["content"] == "Checking. All good."
    assert answer["tool_history"] == [
        {
            "index": 0,
            "call_id": "c1",
            "tool_name": "status",
            "input": {},
            "output": {"status": "ok"},
            "is_error": False,
            "duration_ms": 12.5,
            "text_offset": 9,
            "stopped": False,
            "outcome": "ok",
        }
    ]
    assert answer["usage"]["output_tokens"] == 7
    for key in (
        "id",
        "reasoning",
        "created_at",
        "suggested_values",
        "suggested_actions",
        "custom_payload",
        "payloads",
    ):
        assert key in answer
    assert ISO_Z.match(answer["created_at"])


async def test_rename(
    client: httpx.AsyncClient, store: SqlConversationStore, bob: Principal
) -> None:
    cid = await exchange(store, bob, "hello", "hi")
    response = await client.patch(
        f"/api/conversations/{cid}", json={"title": "  Greetings  "}, headers=as_user(bob)
    )
    assert response.status_code == 200
    assert response.json()["title"] == "Greetings"
    assert set(response.json()) == {"id", "title", "created_at", "updated_at", "model"}
    listed = await client.get("/api/conversations", headers=as_user(bob))
    assert listed.json()["items"][0]["title"] == "Greetings"


async def test_delete(
    client: httpx.AsyncClient, store: SqlConversationStore, bob: Principal
) -> None:
    cid = await exchange(store, bob, "bye", "ok")
    response = await client.delete(f"/api/conversations/{cid}", headers=as_user(bob))
    assert response.status_code == 204
    assert response.content == b""
    response = await client.get(f"/api/conversations/{cid}", headers=as_user(bob))
    assert response.status_code == 404
    response = await client.delete(f"/api/conversations/{cid}", headers=as_user(bob))
    assert response.status_code == 404


@pytest.mark.parametrize("who", ["another user", "another tenant", "nonexistent"])
async def test_not_found_looks_the_same(
    client: httpx.AsyncClient, store: SqlConversationStore, bob: Principal, who: str
) -> None:
    cid = await exchange(store, bob, "mine", "yes")
    caller = bob
    if who == "another user":
        caller = Principal(user_id="eve", tenant_id=bob.tenant_id)
    elif who == "another tenant":
        caller = Principal(user_id=bob.user_id, tenant_id="globex")
    else:
        cid = str(uuid.uuid4())
    headers = as_user(caller)
    for response in (
        await client.get(f"/api/conversations/{cid}", headers=headers),
        await client.patch(f"/api/conversations/{cid}", json={"title": "x"}, headers=headers),
        await client.delete(f"/api/conversations/{cid}", headers=headers),
    ):
        assert response.status_code == 404
        assert response.json() == {"detail": "Conversation not found"}
    listed = await client.get("/api/conversations", headers=headers)
    assert cid not in [item["id"] for item in listed.json()["items"]]
    # The owner still has it, untouched.
    owner_view = await client.get("/api/conversations", headers=as_user(bob))
    if who != "nonexistent":
        assert owner_view.json()["items"][0]["title"] == "mine"


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "field"),
    [
        ("GET", "/api/conversations", {"params": {"limit": 0}}, "limit"),
        ("GET", "/api/conversations", {"params": {"limit": 101}}, "limit"),
        ("GET", "/api/conversations", {"params": {"limit": "many"}}, "limit"),
        ("GET", "/api/conversations", {"params": {"cursor": "garbage!"}}, "cursor"),
        ("PATCH", "/api/conversations/{id}", {"json": {"title": ""}}, "title"),
        ("PATCH", "/api/conversations/{id}", {"json": {"title": "   "}}, "title"),
        ("PATCH", "/api/conversations/{id}", {"json": {"title": "x" * 201}}, "title"),
        ("PATCH", "/api/conversations/{id}", {"json": {"title": 5}}, "title"),
        ("PATCH", "/api/conversations/{id}", {"json": {}}, "title"),
        ("PATCH", "/api/conversations/{id}", {"json": {"title": "ok", "x": 1}}, "x"),
        ("PATCH", "/api/conversations/{id}", {"content": b"{not json"}, "body"),
        ("PATCH", "/api/conversations/{id}", {"json": ["title"]}, "body"),
    ],
)
async def test_bad_input_is_400_naming_the_field(
    client: httpx.AsyncClient,
    store: SqlConversationStore,
    bob: Principal,
    method: str,
    path: str,
    kwargs: dict[str, object],
    field: str,
) -> None:
    cid = await exchange(store, bob, "keep my title", "ok")
    headers = {**as_user(bob), "Content-Type": "application/json"}
    response = await client.request(
        method,
        path.format(id=cid),
        headers=headers,
        **kwargs,  # type: ignore[arg-type]
    )
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["field"] == field
    assert isinstance(body["detail"], str)
    assert field in body["detail"]
    # Nothing was lost or changed.
    detail = await store.get_conversation(bob, cid)
    assert detail.summary.title == "keep my title"
    assert [m.content for m in detail.messages] == ["keep my title", "ok"]


@pytest.mark.parametrize("title", ["\x1c", "\x00", " \t\x1f ", "\u0085"])
async def test_a_title_of_control_characters_is_a_400(
    client: httpx.AsyncClient, store: SqlConversationStore, bob: Principal, title: str
) -> None:
    conversation_id = await exchange(store, bob, "question", "answer")
    response = await client.patch(
        f"/api/conversations/{conversation_id}", json={"title": title}, headers=as_user(bob)
    )
    assert response.status_code == 400
    assert response.json()["field"] == "title"
    assert "Value error" not in response.json()["detail"]  # the validator's words, no prefix


async def test_control_characters_in_a_title_become_spaces(
    client: httpx.AsyncClient, store: SqlConversationStore, bob: Principal
) -> None:
    conversation_id = await exchange(store, bob, "question", "answer")
    response = await client.patch(
        f"/api/conversations/{conversation_id}",
        json={"title": "Q3\x00 plan\x1cdraft"},
        headers=as_user(bob),
    )
    assert response.status_code == 200
    assert response.json()["title"] == "Q3 plan draft"
