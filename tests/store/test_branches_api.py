"""The branches of a conversation through ``/api/conversations`` on a real FastAPI app, with
a real runner and store, on both databases: siblings, switching branches, editing a question
and asking for another answer, with the permission rules of the rest of the API."""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from agentstream import Agent
from agentstream.messages import UserMessage
from agentstream.principal import Principal
from agentstream.providers.base import ChatRequest
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs import Runner
from agentstream.server.conversations import conversations_router
from agentstream.server.errors import install_error_handlers
from agentstream.store import SqlConversationStore

from .helpers import exchange
from .test_conversations_api import as_user, principal_from_headers


class Echo:
    """A model that answers ``re: <question> #n`` (n counts its answers)."""

    def __init__(self) -> None:
        self.count = itertools.count(1)
        self.provider = ScriptedProvider(self.turn)

    def turn(self, request: ChatRequest) -> dict[str, Any]:
        asked = [m.content for m in request.messages if isinstance(m, UserMessage)]
        return {"text": f"re: {asked[-1]} #{next(self.count)}"}

    def seen(self) -> list[str]:
        """What the model was sent last, as text."""
        return [getattr(m, "content", None) or getattr(m, "text", "") for m in self.last()]

    def last(self) -> list[Any]:
        return list(self.provider.requests[-1].messages)


@pytest.fixture
def echo() -> Echo:
    return Echo()


@pytest.fixture
async def client(store: SqlConversationStore, echo: Echo) -> AsyncIterator[httpx.AsyncClient]:
    runner = Runner(Agent(model=echo.provider), store=store)
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(conversations_router(store, principal_from_headers, runner.begin))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        yield http


@pytest.fixture
def bob() -> Principal:
    return Principal(user_id=f"bob-{uuid.uuid4().hex[:6]}", tenant_id="acme")


async def settled(client: httpx.AsyncClient, bob: Principal, cid: str) -> dict[str, Any]:
    """The conversation once its run in progress has ended."""
    for _ in range(200):
        detail: dict[str, Any] = (
            await client.get(f"/api/conversations/{cid}", headers=as_user(bob))
        ).json()
        if detail["active_run"] is None and detail["messages"][-1]["role"] == "assistant":
            return detail
        await asyncio.sleep(0.02)
    raise AssertionError("the run did not end")


def contents(detail: dict[str, Any]) -> list[str]:
    return [m["content"] for m in detail["messages"]]


async def test_regenerate_adds_a_sibling_answer_and_switching_brings_the_first_back(
    client: httpx.AsyncClient, store: SqlConversationStore, bob: Principal, echo: Echo
) -> None:
    cid = await exchange(store, bob, "Hi", "Hello!")
    await exchange(store, bob, "A joke", "A bad joke", conversation_id=cid)
    before = (await client.get(f"/api/conversations/{cid}", headers=as_user(bob))).json()
    assert all("siblings" not in m for m in before["messages"])  # one line reads as before
    first = before["messages"][3]["id"]

    # Regenerate names the answer (or its question): a new answer beside it.
    started = await client.post(
        f"/api/conversations/{cid}/messages/{first}/regenerate", headers=as_user(bob)
    )
    assert started.status_code == 202, started.text
    run = started.json()
    assert run["conversation_id"] == cid and run["events"] == f"/api/runs/{run['run_id']}/events"
    detail = await settled(client, bob, cid)
    assert contents(detail) == ["Hi", "Hello!", "A joke", "re: A joke #1"]
    assert echo.seen() == ["Hi", "Hello!", "A joke"]
    answer = detail["messages"][3]
    assert answer["id"] == run["run_id"] and answer["siblings"] == [first, run["run_id"]]
    assert "siblings" not in detail["messages"][2]
    listed = await client.get(
        f"/api/conversations/{cid}/messages/{first}/siblings", headers=as_user(bob)
    )
    assert listed.json() == {"siblings": [first, run["run_id"]], "index": 0}

    switched = await client.put(
        f"/api/conversations/{cid}/active_leaf", json={"message_id": first}, headers=as_user(bob)
    )
    assert switched.status_code == 200, switched.text
    assert contents(switched.json()) == ["Hi", "Hello!", "A joke", "A bad joke"]
    assert switched.json()["messages"][3]["siblings"] == [first, run["run_id"]]
    history = await store.history(bob, cid)
    assert [getattr(m, "text", None) for m in history][-1] == "A bad joke"


async def test_edit_asks_again_on_a_new_branch_and_keeps_the_old_one(
    client: httpx.AsyncClient, store: SqlConversationStore, bob: Principal, echo: Echo
) -> None:
    cid = await exchange(store, bob, "Hi", "Hello!")
    await exchange(store, bob, "Tell a jkoe", "A what?", conversation_id=cid)
    await exchange(store, bob, "Never mind", "OK", conversation_id=cid)
    old = (await client.get(f"/api/conversations/{cid}", headers=as_user(bob))).json()
    typo = old["messages"][2]["id"]

    started = await client.post(
        f"/api/conversations/{cid}/messages/{typo}/edit",
        json={"content": "Tell a joke"},
        headers=as_user(bob),
    )
    assert started.status_code == 202, started.text
    detail = await settled(client, bob, cid)
    assert contents(detail) == ["Hi", "Hello!", "Tell a joke", "re: Tell a joke #1"]
    assert echo.seen() == ["Hi", "Hello!", "Tell a joke"]  # exactly the edited path
    edited = detail["messages"][2]
    assert edited["siblings"] == [typo, edited["id"]]

    # Back to the old question: its branch, down to its newest message, as it was.
    back = await client.put(
        f"/api/conversations/{cid}/active_leaf", json={"message_id": typo}, headers=as_user(bob)
    )
    assert contents(back.json()) == contents(old)
    listed = await client.get(
        f"/api/conversations/{cid}/messages/{edited['id']}/siblings", headers=as_user(bob)
    )
    assert listed.json() == {"siblings": [typo, edited["id"]], "index": 1}


async def test_editing_the_first_question_starts_anew(
    client: httpx.AsyncClient, store: SqlConversationStore, bob: Principal, echo: Echo
) -> None:
    cid = await exchange(store, bob, "Hi", "Hello!")
    first = (await client.get(f"/api/conversations/{cid}", headers=as_user(bob))).json()
    question = first["messages"][0]["id"]
    started = await client.post(
        f"/api/conversations/{cid}/messages/{question}/edit",
        json={"content": "Hey"},
        headers=as_user(bob),
    )
    assert started.status_code == 202
    detail = await settled(client, bob, cid)
    assert contents(detail) == ["Hey", "re: Hey #1"] and echo.seen() == ["Hey"]
    assert detail["messages"][0]["siblings"] == [question, detail["messages"][0]["id"]]


async def test_bad_branch_requests_are_clear_errors(
    client: httpx.AsyncClient, store: SqlConversationStore, bob: Principal
) -> None:
    cid = await exchange(store, bob, "Hi", "Hello!")
    other = await exchange(store, bob, "Elsewhere", "Yes")
    detail = (await client.get(f"/api/conversations/{cid}", headers=as_user(bob))).json()
    question, answer = (m["id"] for m in detail["messages"])
    elsewhere = (await client.get(f"/api/conversations/{other}", headers=as_user(bob))).json()
    base = f"/api/conversations/{cid}"
    me = as_user(bob)

    edited = await client.post(f"{base}/messages/{answer}/edit", json={"content": "x"}, headers=me)
    assert edited.status_code == 400
    assert edited.json() == {
        "detail": "message_id: only a user message is edited",
        "field": "message_id",
    }
    for missing in ("nope", elsewhere["messages"][0]["id"]):
        for response in (
            await client.post(f"{base}/messages/{missing}/edit", json={"content": "x"}, headers=me),
            await client.post(f"{base}/messages/{missing}/regenerate", headers=me),
            await client.get(f"{base}/messages/{missing}/siblings", headers=me),
            await client.put(f"{base}/active_leaf", json={"message_id": missing}, headers=me),
        ):
            assert response.status_code == 404, response.text
            assert response.json()["detail"] == "Message not found"
    for body, field in (({"content": "  "}, "content"), ({"content": "x", "more": 1}, "more")):
        refused = await client.post(f"{base}/messages/{question}/edit", json=body, headers=me)
        assert refused.status_code == 400 and refused.json()["field"] == field
    refused = await client.put(f"{base}/active_leaf", json={}, headers=me)
    assert refused.status_code == 400 and refused.json()["field"] == "message_id"
    assert contents(await settled(client, bob, cid)) == ["Hi", "Hello!"]


async def test_another_users_conversation_is_not_found(
    client: httpx.AsyncClient, store: SqlConversationStore, bob: Principal
) -> None:
    cid = await exchange(store, bob, "Hi", "Hello!")
    question = (await client.get(f"/api/conversations/{cid}", headers=as_user(bob))).json()[
        "messages"
    ][0]["id"]
    base = f"/api/conversations/{cid}"
    for intruder in (Principal(user_id="eve", tenant_id="acme"), Principal(user_id=bob.user_id)):
        them = as_user(intruder)
        for response in (
            await client.post(
                f"{base}/messages/{question}/edit", json={"content": "x"}, headers=them
            ),
            await client.post(f"{base}/messages/{question}/regenerate", headers=them),
            await client.get(f"{base}/messages/{question}/siblings", headers=them),
            await client.put(f"{base}/active_leaf", json={"message_id": question}, headers=them),
        ):
            assert response.status_code == 404, response.text
            assert response.json()["detail"] == "Conversation not found"
    assert contents(await settled(client, bob, cid)) == ["Hi", "Hello!"]


def test_the_branch_endpoints_are_in_the_openapi_document(tmp_path: Any) -> None:
    from agentstream.server import create_app
    from agentstream.server.settings import Settings
    from agentstream.store import create_engine

    store = SqlConversationStore(create_engine(f"sqlite+aiosqlite:///{tmp_path / 'c.db'}"))
    paths = create_app(Agent(model=None), settings=Settings(), store=store).openapi()["paths"]
    base = "/api/conversations/{conversation_id}"
    assert "get" in paths[f"{base}/messages/{{message_id}}/siblings"]
    assert "put" in paths[f"{base}/active_leaf"]
    for action in ("edit", "regenerate"):
        operation = paths[f"{base}/messages/{{message_id}}/{action}"]["post"]
        assert {"202", "400", "404"} <= set(operation["responses"])
        assert operation["description"]
