"""``active_run`` of ``GET /api/conversations/{id}``: the run a reloaded page or a second tab
follows, on both databases, through the real router."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI, Header

from agentstream.events import RunCompleted
from agentstream.messages import AssistantMessage
from agentstream.principal import Principal
from agentstream.runs.store import RunStatus
from agentstream.server.conversations import conversations_router
from agentstream.server.errors import install_error_handlers
from agentstream.store import ActiveRun, SqlConversationStore

from .helpers import exchange, new_principal, run_id

ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


async def principal_from_headers(
    x_user: str = Header(), x_tenant: str | None = Header(default=None)
) -> Principal:
    return Principal(user_id=x_user, tenant_id=x_tenant)


def as_user(principal: Principal) -> dict[str, str]:
    return {"X-User": principal.user_id, "X-Tenant": principal.tenant_id or ""}


@pytest.fixture
async def client(store: SqlConversationStore) -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(conversations_router(store, principal_from_headers))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        yield http


async def _detail(client: httpx.AsyncClient, principal: Principal, cid: str) -> dict[str, object]:
    response = await client.get(f"/api/conversations/{cid}", headers=as_user(principal))
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


async def test_a_run_in_progress_is_the_active_run_until_it_finishes(
    client: httpx.AsyncClient, store: SqlConversationStore, alice: Principal
) -> None:
    cid = await exchange(store, alice, "first", "done")
    assert (await _detail(client, alice, cid))["active_run"] is None

    rid = run_id()
    await store.start_run(alice, run_id=rid, conversation_id=cid, user_message="second")
    body = await _detail(client, alice, cid)
    active = body["active_run"]
    assert isinstance(active, dict)
    assert set(active) == {"id", "status", "started_at"}
    assert (active["id"], active["status"]) == (rid, "running")
    assert ISO_Z.match(active["started_at"])
    messages = body["messages"]
    assert isinstance(messages, list)
    assert messages[-1]["role"] == "user"
    assert messages[-1]["run_id"] == rid

    await store.finish_run(
        alice,
        run_id=rid,
        conversation_id=cid,
        messages=[AssistantMessage(text="ok")],
        status="completed",
        completed=RunCompleted(run_id=rid, seq=3, message="ok"),
    )
    assert (await _detail(client, alice, cid))["active_run"] is None


async def test_a_stopped_or_failed_run_is_not_active(
    client: httpx.AsyncClient, store: SqlConversationStore, alice: Principal
) -> None:
    statuses: tuple[RunStatus, ...] = ("cancelled", "failed")
    for status in statuses:
        rid = run_id()
        started = await store.start_run(
            alice, run_id=rid, conversation_id=None, user_message=status
        )
        await store.finish_run(
            alice,
            run_id=rid,
            conversation_id=started.conversation_id,
            messages=[AssistantMessage(text="partial")],
            status=status,
            error="user_cancelled" if status == "cancelled" else "boom",
        )
        body = await _detail(client, alice, started.conversation_id)
        assert body["active_run"] is None


async def test_only_the_latest_run_can_be_active(
    client: httpx.AsyncClient, store: SqlConversationStore, alice: Principal
) -> None:
    # A run left "running" by a server that died, then a newer run that finished: nothing is
    # in progress, so a client opening the conversation follows nothing.
    dead = run_id()
    started = await store.start_run(alice, run_id=dead, conversation_id=None, user_message="a")
    cid = started.conversation_id
    await exchange(store, alice, "b", "answered", conversation_id=cid)
    assert (await _detail(client, alice, cid))["active_run"] is None

    latest = run_id()
    await store.start_run(alice, run_id=latest, conversation_id=cid, user_message="c")
    active = (await _detail(client, alice, cid))["active_run"]
    assert isinstance(active, dict)
    assert active["id"] == latest


async def test_another_users_run_in_progress_is_not_visible(
    client: httpx.AsyncClient, store: SqlConversationStore, alice: Principal
) -> None:
    rid = run_id()
    started = await store.start_run(alice, run_id=rid, conversation_id=None, user_message="mine")
    cid = started.conversation_id
    for other in (new_principal(), Principal(user_id=alice.user_id, tenant_id="other-tenant")):
        response = await client.get(f"/api/conversations/{cid}", headers=as_user(other))
        assert response.status_code == 404
        assert response.json() == {"detail": "Conversation not found"}


async def test_the_store_reports_it_typed(store: SqlConversationStore, alice: Principal) -> None:
    rid = run_id()
    started = await store.start_run(alice, run_id=rid, conversation_id=None, user_message="hi")
    detail = await store.get_conversation(alice, started.conversation_id)
    assert isinstance(detail.active_run, ActiveRun)
    assert (detail.active_run.id, detail.active_run.status) == (rid, "running")
    assert detail.active_run.started_at.tzinfo is not None
