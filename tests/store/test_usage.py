"""What runs used and cost: stored with every run however it ended (completed, stopped,
disconnected, failed), summed in ``GET /api/usage`` and on each conversation, and a daily
budget that stops a run mid-answer. On SQLite and PostgreSQL."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager as ContextManager
from datetime import UTC, date, datetime
from typing import Any

import httpx
import pytest

from agentstream import Agent
from agentstream.events import RunUsage, Usage
from agentstream.providers.profiles import ModelProfiles
from agentstream.providers.scripted import ScriptedProvider
from agentstream.runs.limits import Limits, Quota
from agentstream.server.config import ServerConfig
from agentstream.server.settings import Settings
from agentstream.store import SqlConversationStore
from tests.server.helpers import SECRET, LiveServer, bearer, token, wait_until
from tests.store.test_e2e_server import live_server

from .helpers import new_principal, run_id

MODEL = "scripted:script"
PRICED = ModelProfiles().with_profiles({"scripted:*": {"prices": {"input": 2.0, "output": 10.0}}})
"""US$2 per million input tokens, US$10 per million output tokens."""


def cost(input_tokens: int, output_tokens: int) -> float:
    return (input_tokens * 2.0 + output_tokens * 10.0) / 1_000_000


def served(database_url: str, agent: Agent, **options: Any) -> ContextManager[LiveServer]:
    """``agent`` on a live server over the database, with JWT auth and tenants (``org``)."""
    settings = Settings(host="127.0.0.1", jwt_secret=SECRET, tenant_claim="org")
    return live_server(database_url, agent, settings, ServerConfig(**options))


def user(org: str | None = None, **claims: Any) -> tuple[str, dict[str, str]]:
    name = f"user-{uuid.uuid4().hex[:8]}"
    return name, bearer(token(name, org=org or f"org-{uuid.uuid4().hex[:8]}", **claims))


def conversation_of(client: httpx.Client, headers: dict[str, str]) -> dict[str, Any]:
    (item,) = client.get("/api/conversations", headers=headers).json()["items"]
    found: dict[str, Any] = client.get(f"/api/conversations/{item['id']}", headers=headers).json()
    return found


def answered(client: httpx.Client, headers: dict[str, str]) -> bool:
    items = client.get("/api/conversations", headers=headers).json()["items"]
    if not items:
        return False
    detail = client.get(f"/api/conversations/{items[0]['id']}", headers=headers).json()
    return detail["active_run"] is None and len(detail["messages"]) == 2


SLOW = {"turns": [{"text": ["word "] * 200, "delay": 0.02}]}


def stop_after_some(client: httpx.Client, headers: dict[str, str]) -> None:
    with client.stream("POST", "/api/chat/stream", json={"message": "go"}, headers=headers) as r:
        lines = r.iter_lines()
        run = r.headers["x-run-id"]
        for line in lines:
            if line.startswith("data: ") and "word" in line:
                break
        client.post(f"/api/chat/runs/{run}/cancel", headers=headers)
        list(lines)


def hang_up_after_some(client: httpx.Client, headers: dict[str, str]) -> None:
    with client.stream("POST", "/agent/stream", json={"message": "go"}, headers=headers) as r:
        for line in r.iter_lines():
            if "word" in line:
                break  # the client goes away: the ops protocol stops the run


def fail_after_some(client: httpx.Client, headers: dict[str, str]) -> None:
    with client.stream("POST", "/api/chat/stream", json={"message": "go"}, headers=headers) as r:
        r.read()


ENDINGS: dict[str, tuple[dict[str, Any], Callable[[httpx.Client, dict[str, str]], None], str]] = {
    "stopped": (SLOW, stop_after_some, "interrupted"),
    "disconnected": (SLOW, hang_up_after_some, "interrupted"),
    "failed": (
        {"turns": [{"text": ["word "] * 20, "error": {"kind": "overloaded", "after": 10}}]},
        fail_after_some,
        "failed",
    ),
}


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_a_run_cut_short_is_stored_with_its_tokens_estimated_and_priced(
    database_url: str, ending: str
) -> None:
    script, act, status = ENDINGS[ending]
    agent = Agent(model=ScriptedProvider(script), profiles=PRICED)
    name, headers = user()
    with served(database_url, agent) as server, server.client() as client:
        act(client, headers)
        assert wait_until(lambda: answered(client, headers), timeout=10)
        detail = conversation_of(client, headers)
        answer = detail["messages"][1]
        assert answer["status"] == status
        used = answer["usage"]
        # The prompt and what was streamed, estimated (the scripted model reports nothing).
        assert used["estimated"] is True
        assert used["input_tokens"] > 0
        assert 0 < used["output_tokens"] < 200 * 5 // 4
        assert used["cost_usd"] == pytest.approx(cost(used["input_tokens"], used["output_tokens"]))
        assert detail["usage"]["cost_usd"] == pytest.approx(used["cost_usd"])
        assert detail["usage"]["estimated"] is True

        report = client.get("/api/usage", headers=headers).json()
        assert report["scope"] == "own"
        (line,) = report["lines"]
        assert line["model"] == MODEL
        assert line["day"] == datetime.now(UTC).date().isoformat()
        assert line["runs"] == 1
        assert line["estimated_runs"] == 1
        assert line["input_tokens"] == used["input_tokens"]
        assert line["cost_usd"] == pytest.approx(used["cost_usd"])


def test_a_completed_run_is_billed_from_the_vendors_counts(database_url: str) -> None:
    script = {
        "turns": [
            {
                "text": "Let me look.",
                "tool_calls": [{"name": "look", "arguments": {}}],
                "usage": {"input_tokens": 100, "output_tokens": 20},
            },
            {"text": "Done.", "usage": {"input_tokens": 150, "output_tokens": 10}},
        ]
    }

    def look() -> str:
        """Look."""
        return "seen"

    agent = Agent(model=ScriptedProvider(script), tools=[look], profiles=PRICED)
    _, headers = user()
    with served(database_url, agent) as server, server.client() as client:
        with client.stream(
            "POST", "/api/chat/stream", json={"message": "go"}, headers=headers
        ) as r:
            r.read()
        assert wait_until(lambda: answered(client, headers))
        used = conversation_of(client, headers)["usage"]
        assert used["input_tokens"] == 250
        assert used["output_tokens"] == 30
        assert used["estimated"] is False
        assert used["cost_usd"] == pytest.approx(cost(250, 30))


def test_administrators_see_everyones_usage_and_users_their_own(database_url: str) -> None:
    agent = Agent(
        model=ScriptedProvider(
            {"turns": [{"text": "Hi.", "usage": {"input_tokens": 9, "output_tokens": 1}}]}
        ),
        profiles=PRICED,
    )
    org = f"org-{uuid.uuid4().hex[:8]}"
    ann, ann_headers = user(org)
    bob, bob_headers = user(org)
    _, admin = user(org, roles=["admin"])
    with served(database_url, agent) as server, server.client() as client:
        for headers, times in ((ann_headers, 2), (bob_headers, 1)):
            for _ in range(times):
                with client.stream(
                    "POST", "/api/chat/stream", json={"message": "hi"}, headers=headers
                ) as r:
                    r.read()
        assert wait_until(
            lambda: (
                client.get("/api/usage", params={"tenant": org}, headers=admin).json()["total"][
                    "runs"
                ]
                == 3
            )
        )
        everyone = client.get(
            "/api/usage", params={"tenant": org, "group_by": "user,model"}, headers=admin
        ).json()
        assert everyone["scope"] == "all"
        assert {(line["user"], line["runs"]) for line in everyone["lines"]} == {(ann, 2), (bob, 1)}
        assert everyone["total"]["input_tokens"] == 27
        assert everyone["total"]["cost_usd"] == pytest.approx(3 * cost(9, 1))

        own = client.get("/api/usage", params={"group_by": "user"}, headers=bob_headers).json()
        assert own["scope"] == "own"
        assert [(line["user"], line["runs"]) for line in own["lines"]] == [(bob, 1)]
        refused = client.get("/api/usage", params={"user": ann}, headers=bob_headers)
        assert refused.status_code == 403
        assert (
            client.get("/api/usage", params={"user": bob}, headers=bob_headers).status_code == 200
        )

        bad = client.get("/api/usage", params={"group_by": "day,colour"}, headers=admin)
        assert bad.status_code == 400
        assert bad.json()["field"] == "group_by"
        backwards = client.get(
            "/api/usage", params={"from": "2026-02-01", "to": "2026-01-01"}, headers=admin
        )
        assert backwards.status_code == 400
        assert backwards.json()["field"] == "from"
        assert client.get("/api/usage").status_code == 401


def test_a_run_crossing_its_daily_budget_stops_with_an_error_naming_it(database_url: str) -> None:
    script = {"turns": [{"text": ["word "] * 400, "delay": 0.001}]}
    agent = Agent(model=ScriptedProvider(script), profiles=PRICED)
    limits = Limits(user=Quota(tokens_per_day=300))
    _, headers = user()
    with served(database_url, agent, limits=limits) as server, server.client() as client:
        with client.stream(
            "POST", "/api/chat/stream", json={"message": "go"}, headers=headers
        ) as r:
            frames = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")]
        streamed = "".join(f["text"] for f in frames if f["type"] == "text_delta")
        error = frames[-1]
        assert error["type"] == "error"
        assert "tokens_per_day" in error["message"] and "300 tokens a day" in error["message"]
        assert 0 < len(streamed) < 400 * 5  # stopped mid-answer
        assert wait_until(lambda: answered(client, headers))
        answer = conversation_of(client, headers)["messages"][1]
        assert answer["status"] == "failed"
        assert answer["content"] == streamed  # its partial answer kept
        # The day's budget is spent: the next run is refused before it starts.
        refused = client.post("/api/chat/stream", json={"message": "again"}, headers=headers)
        assert refused.status_code == 429
        assert refused.json()["limit"] == "tokens_per_day"


async def test_the_ledger_sums_by_user_tenant_model_and_day(store: SqlConversationStore) -> None:
    ann, bob = new_principal(), new_principal()
    for principal, model, tokens, priced in (
        (ann, "openai:gpt-4.1", 100, 0.5),
        (ann, "openai:gpt-4.1", 50, 0.25),
        (ann, "anthropic:claude-sonnet-4-5", 10, None),
        (bob, "openai:gpt-4.1", 7, 0.1),
    ):
        rid = run_id()
        started = await store.start_run(
            principal, run_id=rid, conversation_id=None, user_message="q"
        )
        await store.finish_run(
            principal,
            run_id=rid,
            conversation_id=started.conversation_id,
            messages=(),
            status="cancelled",
            usage=RunUsage(
                usage=Usage(input_tokens=tokens, output_tokens=1),
                model=model,
                cost_usd=priced,
                estimated=priced is None,
            ),
        )
    today = datetime.now(UTC).date()
    lines = await store.usage_report(
        first_day=today,
        last_day=today,
        group_by=("model",),
        tenant_id=ann.tenant,
        user_id=ann.user_id,
    )
    assert [(line.group, line.runs, line.usage.input_tokens) for line in lines] == [
        ({"model": "anthropic:claude-sonnet-4-5"}, 1, 10),
        ({"model": "openai:gpt-4.1"}, 2, 150),
    ]
    assert lines[0].unpriced_runs == 1 and lines[0].estimated_runs == 1
    assert lines[1].cost_usd == pytest.approx(0.75)
    by_user = await store.usage_report(
        first_day=today, last_day=today, group_by=("tenant", "user"), tenant_id=bob.tenant
    )
    assert [(line.group["user"], line.usage.input_tokens) for line in by_user] == [(bob.user_id, 7)]
    earlier = await store.usage_report(
        first_day=date(2020, 1, 1),
        last_day=date(2020, 1, 31),
        group_by=("day",),
        user_id=ann.user_id,
    )
    assert earlier == []
